"""The JSON v1 contract: exact keys in a fixed order, the shipped schema, and the doc agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from boundary_audit.report.scan.json_v1 import SCHEMA, JsonV1Format
from boundary_audit.schemas import REPORT_V1_SCHEMA, load
from tests.support import sample_findings as sample

DOC = Path(__file__).resolve().parent.parent / "docs" / "json-v1.md"

TOP_KEYS = [
    "schema",
    "tool",
    "target",
    "target_name",
    "url",
    "commit",
    "command",
    "summary",
    "checks",
    "findings",
    "skipped",
]
FINDING_KEYS = [
    "code",
    "name",
    "help_url",
    "message",
    "class",
    "parse_layers",
    "contract",
    "severity",
    "confidence",
    "model_controlled",
    "model_evidence",
    "sanitizer",
    "sink",
    "snippet",
    "language",
    "path",
    "line",
    "end_line",
    "column",
    "end_column",
    "anchor",
    "fingerprint",
    "related",
    "evidence",
    "tip",
    "suppressed",
    "boundary_path",
]
LOCATION_KEYS = ["path", "line", "end_line", "column", "end_column", "anchor", "annotation"]
SUMMARY_KEYS = [
    "findings",
    "active",
    "suppressed",
    "suppressed_by",
    "filtered",
    "files_scanned",
    "files_skipped",
    "files_out_of_scope",
    "languages",
    "active_by_class",
    "active_by_severity",
    "active_model_controlled",
]


def _doc(**overrides: object) -> dict[str, Any]:
    return json.loads(JsonV1Format().render(sample.report(**overrides)))  # type: ignore[no-any-return]


def test_keys_and_their_order_are_fixed() -> None:
    doc = _doc()
    assert list(doc) == TOP_KEYS
    assert doc["schema"] == SCHEMA == "boundary-audit/v1"
    assert doc["tool"] == {"name": "boundary-audit", "version": sample.VERSION}
    assert list(doc["summary"]) == SUMMARY_KEYS
    for finding in doc["findings"]:
        assert list(finding) == FINDING_KEYS
        for rel in finding["related"]:
            assert list(rel) == LOCATION_KEYS


def test_the_issue_s_required_fields_have_the_promised_values() -> None:
    doc = _doc()
    assert doc["commit"] == sample.SHA and doc["target"] == "example/agent-harness@main"
    nested = next(f for f in doc["findings"] if f["code"] == "BA102")
    assert {
        k: nested[k]
        for k in (
            "class",
            "parse_layers",
            "contract",
            "path",
            "line",
            "end_line",
            "column",
            "model_controlled",
            "sanitizer",
            "confidence",
            "severity",
            "sink",
            "anchor",
            "suppressed",
        )
    } == {
        "class": "nested-string",
        "parse_layers": 2,
        "contract": "raw",
        "path": "agent/remote.py",
        "line": 17,
        "end_line": 19,
        "column": 5,
        "model_controlled": True,
        "sanitizer": None,
        "confidence": "medium",
        "severity": "high",
        "sink": "subprocess.run",
        "anchor": "agent/remote.py:17-19@3ea751c",
        "suppressed": None,
    }
    assert nested["evidence"] == [
        {
            "transport": "nested",
            "reply_set": "oracle",
            "tasks": 56,
            "passed_raw": 56,
            "passed_boundary": 21,
            "damage_pp": -62.5,
            "role": "path",
            "route": "",
            "errors": 0,
            "error": "",
            "families": {},
            "boundary_tasks": 0,
            "boundary_broken": [],
        }
    ]
    assert [r["anchor"] for r in nested["related"]] == [
        "agent/loop.py:40@3ea751c",
        "agent/remote.py:12@3ea751c",
    ]
    serialized = next(f for f in doc["findings"] if f["code"] == "BA501")
    assert serialized["sanitizer"] == "json.dumps"
    assert serialized["suppressed"] == {
        "kind": "config",
        "reason": "checks.BA501.ignore: agent/api.py",
    }


def test_summary_counts() -> None:
    assert _doc()["summary"] == {
        "findings": 7,
        "active": 4,
        "suppressed": 3,
        "suppressed_by": {"inline": 1, "config": 1, "baseline": 1},
        "filtered": 2,
        "files_scanned": 14,
        "files_skipped": 2,
        "files_out_of_scope": 0,
        "languages": {"python": 9, "shell": 2, "typescript": 3},
        "active_by_class": {"shell-string": 2, "tty-keystrokes": 1, "nested-string": 1},
        "active_by_severity": {"high": 2, "medium": 1, "info": 1},
        "active_model_controlled": 3,
    }


def test_findings_are_in_total_order() -> None:
    keys = [(f["path"], f["line"], f["column"], f["code"], f["class"]) for f in _doc()["findings"]]
    assert keys == sorted(keys)
    assert [k[0] for k in keys] == [
        "agent/api.py",
        "agent/remote.py",
        "agent/run.py",
        "agent/run.py",
        "scripts/run|it.sh",
        "term/tmux.ts",
        "tools/sessión.py",
    ]


@pytest.mark.parametrize(
    "overrides",
    [{}, {"findings": (), "skipped": ()}, {"commit": None}],
    ids=["sample", "empty", "no-commit"],
)
def test_output_validates_against_the_shipped_schema(overrides: dict[str, object]) -> None:
    jsonschema.Draft202012Validator(load(REPORT_V1_SCHEMA)).validate(_doc(**overrides))


def test_schema_forbids_undocumented_fields() -> None:
    doc = _doc()
    doc["findings"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError, match="surprise"):
        jsonschema.Draft202012Validator(load(REPORT_V1_SCHEMA)).validate(doc)


def _schema_fields(node: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            out.add(name)
            out |= _schema_fields(sub)
        for sub in node.get("$defs", {}).values():
            out |= _schema_fields(sub)
    return out


def test_doc_describes_every_field() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.M))
    assert _schema_fields(load(REPORT_V1_SCHEMA)) <= documented
    assert "boundary-audit/v1" in text


def test_non_ascii_is_kept_and_output_ends_with_one_newline() -> None:
    text = JsonV1Format().render(sample.report())
    assert '"tools/sessión.py"' in text
    assert text.endswith("}\n")


def test_a_probed_report_carries_the_derived_path_the_probe_and_the_adapter_fields() -> None:
    doc = json.loads(JsonV1Format().render(sample.probed_report()))
    assert list(doc)[:9] == [*TOP_KEYS[:7], "sandbox", "probe"]
    assert doc["probe"]["error_runs"] == 112
    assert doc["probe"]["not_measured"] == [
        {"transport": "docker(shell=bash)", "reason": "needs a Docker engine: none is running"}
    ]
    nested = next(f for f in doc["findings"] if f["code"] == "BA102")
    path = nested["boundary_path"]
    assert (path["contract"], path["boundary_class"], path["shell_parses"]) == (
        "native",
        "nested-string",
        2,
    )
    assert path["transport"] == {"name": "raw", "params": {"flags": "-c", "shell": "sh"}}
    assert path["preprocess"] == [
        {"name": "template.interpolate", "params": {"prefix": 'sh -c "', "suffix": '"'}}
    ]
    assert path["fixed"][0]["preprocess"][0]["params"]["quote"] == "shell"
    assert [e["role"] for e in nested["evidence"]] == ["path", "fix", "path", "fix"]
    assert nested["tip"] == path["fix"]
    script = next(f for f in doc["findings"] if f["code"] == "BA302")
    assert [r["assumes"] for r in script["boundary_path"]["routes"]] == [
        "interpreter sh",
        "interpreter bash",
    ]
    fields = script["boundary_path"]["adapter"]["fields"]
    assert [(c["field"], c["same"]) for c in fields] == [
        ("contract", True),
        ("class", True),
        ("transport", True),
        ("transport.prefix", False),
    ]
    session = next(f for f in doc["findings"] if f["code"] == "BA202")
    (errored,) = [e for e in session["evidence"] if e["role"] == "path"]
    assert (errored["damage_pp"], errored["errors"]) == (None, 112)
    launcher = next(f for f in doc["findings"] if f["code"] == "BA301")
    assert launcher["boundary_path"] is None
    validator = jsonschema.Draft202012Validator(load(REPORT_V1_SCHEMA))
    assert list(validator.iter_errors(doc)) == []
