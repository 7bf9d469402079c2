"""SARIF 2.1.0 output: valid against the vendored official schema, and right in its details."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from importlib import resources
from typing import Any

import jsonschema
import pytest

from boundary_audit.finding import Location
from boundary_audit.report.scan.sarif import FINGERPRINT_NAME, SarifFormat, schema, to_sarif
from boundary_audit.results.scan import ScanReport
from tests.support import sample_findings as sample

SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def _sarif(report: ScanReport | None = None) -> dict[str, Any]:
    return json.loads(SarifFormat().render(report or sample.report()))  # type: ignore[no-any-return]


def _validate(doc: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(schema(), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def test_vendored_schema_is_the_official_file_unmodified() -> None:
    data = resources.files("boundary_audit.report").joinpath("data", "sarif-schema-2.1.0.json")
    assert hashlib.sha256(data.read_bytes()).hexdigest() == SCHEMA_SHA256
    doc = schema()
    assert doc["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    notice = resources.files("boundary_audit.report").joinpath("data", "NOTICE.md").read_text()
    assert SCHEMA_SHA256 in notice


def test_sample_report_is_valid_sarif() -> None:
    _validate(_sarif())


def test_empty_and_commitless_reports_are_valid_sarif() -> None:
    doc = _sarif(sample.report(findings=(), skipped=(), commit=None))
    _validate(doc)
    assert "versionControlProvenance" not in doc["runs"][0]
    assert doc["runs"][0]["results"] == []


def test_schema_rejects_a_broken_log() -> None:
    doc = _sarif()
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(AssertionError, match="startLine"):
        _validate(doc)


def test_rules_come_from_the_check_set() -> None:
    run = _sarif()["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["BA101", "BA102", "BA201", "BA202", "BA301", "BA501"]
    ba102 = rules[1]
    assert ba102["name"] == "nested-shell-string"
    assert "helpUri" not in ba102  # the docs ship with the package: no host to point at
    assert ba102["shortDescription"] == {
        "text": "Model text is quoted into a command a shell parses twice."
    }
    assert ba102["help"]["markdown"] == (
        "Model text is quoted into a command a shell parses twice.\n\n## What it does\n"
        "Finds `f'ssh h \"{cmd}\"'` and friends.\n\n"
        "`boundary-audit checks` lists every check; this is BA102's documentation."
    )
    assert rules[4]["defaultConfiguration"] == {"enabled": False}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_result_locations_related_locations_and_code_flow() -> None:
    run = _sarif()["runs"][0]
    nested = next(r for r in run["results"] if r["ruleId"] == "BA102")
    assert nested["level"] == "error"
    assert nested["message"]["text"] == (
        "Reply | wrapped as f'ssh h \"{cmd}\"' and parsed twice <b>bold</b>. "
        "Measured: nested (oracle): 21/56 vs raw 56/56, -62.5 pp. "
        "Fix: shlex.quote(R) at the interpolation point, or a temp script."
    )
    assert nested["properties"]["evidence"] == [
        {
            "transport": "nested",
            "replySet": "oracle",
            "role": "path",
            "route": "",
            "tasks": 56,
            "passedRaw": 56,
            "passedBoundary": 21,
            "damagePp": -62.5,
            "errors": 0,
        }
    ]
    assert nested["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "agent/remote.py", "uriBaseId": "SRCROOT"},
        "region": {"startLine": 17, "endLine": 19, "startColumn": 5, "endColumn": 41},
    }
    related = [
        (
            r["id"],
            r["physicalLocation"]["artifactLocation"]["uri"],
            r["physicalLocation"]["region"]["startLine"],
            r["message"]["text"],
        )
        for r in nested["relatedLocations"]
    ]
    assert related == [
        (1, "agent/loop.py", 40, "model reply enters here"),
        (2, "agent/remote.py", 12, 'wrapped in ssh host "..."'),
    ]
    flow = nested["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [
        (s["executionOrder"], s["location"]["physicalLocation"]["region"]["startLine"])
        for s in flow
    ] == [(1, 40), (2, 12), (3, 17)]
    assert flow[-1]["location"]["message"]["text"] == "sink: subprocess.run"


def test_provenance_uris_and_notifications() -> None:
    run = _sarif()["runs"][0]
    assert run["versionControlProvenance"] == [
        {"repositoryUri": sample.URL, "revisionId": sample.SHA}
    ]
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    ]
    assert "scripts/run%7Cit.sh" in uris and "tools/sessi%C3%B3n.py" in uris
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [
        (n["message"]["text"], n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for n in notes
    ] == [
        ("skipped: binary", "assets/logo.png"),
        ("skipped: too large (3.1 MB > 2 MB)", "data/huge.json"),
    ]
    scp = _sarif(sample.report(url="git@example.com:team/harness.git"))["runs"][0]
    assert scp["versionControlProvenance"][0]["repositoryUri"] == (
        "ssh://git@example.com/team/harness.git"
    )


def test_suppressions_are_kept_with_their_kind() -> None:
    run = _sarif()["runs"][0]
    by_line = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r.get(
            "suppressions"
        )
        for r in run["results"]
    }
    assert by_line[("BA201", 33)] == [
        {"kind": "inSource", "status": "accepted", "justification": "inline: session is test-only"}
    ]
    assert by_line[("BA501", 9)][0]["kind"] == "external"
    assert by_line[("BA101", 150)][0]["justification"].startswith("baseline: ")
    assert by_line[("BA101", 120)] is None
    assert len(run["results"]) == 7


def _fingerprints(report: ScanReport) -> dict[tuple[str, str], str]:
    run = _sarif(report)["runs"][0]
    return {
        (r["ruleId"], r["properties"]["anchor"].split(":")[0]): r["partialFingerprints"][
            FINGERPRINT_NAME
        ]
        for r in run["results"]
        if r["ruleId"] != "BA101"
    }


def test_partial_fingerprints_survive_line_shifts() -> None:
    def shift(loc: Location) -> Location:
        return replace(loc, start_line=loc.start_line + 30, end_line=loc.end_line + 30)

    base = sample.report()
    moved_findings = tuple(replace(f, primary=shift(f.primary)) for f in base.findings)
    moved_text = {shift(loc): text for loc, text in base.sink_text.items()}
    moved = sample.report(findings=moved_findings, sink_text=moved_text)
    assert _fingerprints(moved) == _fingerprints(base)
    assert all(
        r["partialFingerprints"][FINGERPRINT_NAME] == s["partialFingerprints"][FINGERPRINT_NAME]
        for r, s in zip(
            _sarif(base)["runs"][0]["results"], _sarif(moved)["runs"][0]["results"], strict=True
        )
    )


def test_identical_sinks_get_numbered_fingerprints() -> None:
    run = _sarif()["runs"][0]
    run_py = [
        r["partialFingerprints"][FINGERPRINT_NAME]
        for r in run["results"]
        if r["properties"]["anchor"].startswith("agent/run.py")
    ]
    assert len(run_py) == 2
    assert run_py[0].split(":")[0] == run_py[1].split(":")[0]
    assert [p.split(":")[1] for p in run_py] == ["1", "2"]


def test_a_probed_result_carries_its_fix_and_the_verified_damage() -> None:
    doc = to_sarif(sample.probed_report())
    _validate(doc)
    run = doc["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False  # 112 runs errored
    nested = next(r for r in run["results"] if r["ruleId"] == "BA102")
    assert nested["message"]["text"].endswith(
        " Fix: shell-quote R at the interpolation point (shlex.quote); let bash parse R (the "
        "model writes bash), not sh. Fix verified (oracle): −66.1 pp → 0.0 pp."
    )
    props = nested["properties"]
    assert props["fixVerified"] == "fix verified (oracle): −66.1 pp → 0.0 pp"
    assert props["boundaryPath"]["transport"] == {
        "name": "raw",
        "params": {"flags": "-c", "shell": "sh"},
    }
    launcher = next(r for r in run["results"] if r["ruleId"] == "BA301")
    assert "boundaryPath" not in launcher["properties"]
    assert launcher["message"]["text"].endswith(
        " Fix: ask the model for an argv array, or run R with `bash -c` on purpose."
    )
