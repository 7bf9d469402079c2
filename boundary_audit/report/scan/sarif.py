"""SARIF 2.1.0 output of a static scan, for GitHub code scanning and other SARIF viewers.

One run. Rules come from the report's check set (code, name, help URL, documentation summary);
results carry the primary location as `physicalLocation` + `region`, related locations as
`relatedLocations`, a `codeFlows` thread from where the model value enters to the sink, a
`partialFingerprints` entry that survives line shifts, and SARIF `suppressions` for suppressed
findings (kept, not dropped). Skipped inputs become tool execution notifications. The output is
validated against the official schema (vendored in `report/data/`) by the tests.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any
from urllib.parse import quote

from boundary_audit.finding import Finding, Location
from boundary_audit.results.scan import CheckInfo, ScanReport, evidence_text
from boundary_audit.taxonomy import Severity

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_NAME = "boundaryAuditFinding/v1"
INFORMATION_URI = "https://boundary-audit.invalid/"
SRCROOT = "SRCROOT"

_LEVEL = {
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
_SUPPRESSION_KIND = {"inline": "inSource"}
"""SARIF suppression kinds: inline comments are in source, config and baseline are external."""

JSON = dict[str, Any]


def schema() -> JSON:
    """The official SARIF 2.1.0 JSON schema shipped in `boundary_audit/report/data/`."""
    path = resources.files("boundary_audit.report").joinpath("data", "sarif-schema-2.1.0.json")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _region(loc: Location) -> JSON:
    region: JSON = {"startLine": loc.start_line, "endLine": loc.end_line}
    if loc.end_col > 0 or loc.start_col > 0:
        # NOTE(report): columns are 1-based byte columns; they equal SARIF's default
        # UTF-16 columns on ASCII lines, which is what sink lines almost always are.
        region["startColumn"] = loc.start_col + 1
        region["endColumn"] = max(loc.end_col + 1, 1)
    return region


def _artifact(path: str) -> JSON:
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _repository_uri(url: str) -> str:
    """`url` as a URI: scp-like `user@host:path` becomes `ssh://user@host/path`."""
    if "://" in url or ":" not in url:
        return url
    host, _, path = url.partition(":")
    return f"ssh://{host}/{path.lstrip('/')}"


def _physical(loc: Location) -> JSON:
    return {"artifactLocation": _artifact(loc.path), "region": _region(loc)}


def _location(loc: Location, message: str, ident: int | None = None) -> JSON:
    out: JSON = {}
    if ident is not None:
        out["id"] = ident
    out["physicalLocation"] = _physical(loc)
    if message:
        out["message"] = {"text": message}
    return out


def _rule(check: CheckInfo) -> JSON:
    summary = check.summary or check.name
    return {
        "id": check.code,
        "name": check.name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": summary},
        "helpUri": check.help_url,
        "help": {
            "text": f"{check.help or summary}\n\nSee {check.help_url}",
            "markdown": f"{check.help or summary}\n\n[Documentation]({check.help_url})",
        },
        "defaultConfiguration": {"enabled": check.enabled},
        "properties": {
            "tags": ["security", "parser-boundary", *check.classes],
            "status": check.status,
        },
    }


def _rules(report: ScanReport) -> list[CheckInfo]:
    """The check set, plus any code a finding carries that the check set lacks (diagnostics)."""
    known = {c.code: c for c in report.checks}
    for f in report.findings:
        known.setdefault(f.code, CheckInfo(f.code, f.name, "", f.help_url))
    return sorted(known.values(), key=lambda c: c.code)


def _code_flow(f: Finding) -> JSON:
    steps = [*f.related, f.primary]
    return {
        "threadFlows": [
            {
                "locations": [
                    {
                        "location": _location(
                            loc, loc.annotation or ("sink: " + f.sink if f.sink else "sink")
                        ),
                        "executionOrder": i,
                    }
                    for i, loc in enumerate(steps, start=1)
                ]
            }
        ]
    }


def _result(f: Finding, rule_index: int, fingerprint: str) -> JSON:
    out: JSON = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": _LEVEL[f.severity],
        "message": {"text": f.message or f.name},
        "locations": [_location(f.primary, "")],
        "partialFingerprints": {FINGERPRINT_NAME: fingerprint},
    }
    if f.related:
        out["relatedLocations"] = [
            _location(r, r.annotation or "related", i) for i, r in enumerate(f.related, start=1)
        ]
        out["codeFlows"] = [_code_flow(f)]
    if f.suppressed is not None:
        out["suppressions"] = [
            {
                "kind": _SUPPRESSION_KIND.get(f.suppressed.kind, "external"),
                "status": "accepted",
                "justification": f"{f.suppressed.kind}: {f.suppressed.reason}",
            }
        ]
    out["properties"] = {
        "boundaryClass": f.boundary_class.value,
        "parseLayers": f.parse_layers,
        "contract": f.contract.value,
        "confidence": f.confidence.value,
        "severity": f.severity.value,
        "modelControlled": f.model_controlled,
        "sanitizer": f.sanitizer,
        "sink": f.sink,
        "anchor": f.primary.anchor(),
        "evidence": [
            {
                "transport": ev.transport,
                "replySet": ev.reply_set,
                "tasks": ev.tasks,
                "passedRaw": ev.passed_raw,
                "passedBoundary": ev.passed_boundary,
                "damagePp": ev.damage_pp,
            }
            for ev in f.evidence
        ],
    }
    if f.evidence:
        measured = "; ".join(evidence_text(ev) for ev in f.evidence)
        out["message"] = {"text": f"{f.message or f.name} Measured: {measured}."}
    return out


def to_sarif(report: ScanReport) -> JSON:
    """The SARIF log of `report` as plain JSON data."""
    rules = _rules(report)
    index = {c.code: i for i, c in enumerate(rules)}
    run: JSON = {
        "tool": {
            "driver": {
                "name": "boundary-audit",
                "version": report.tool_version,
                "semanticVersion": report.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(c) for c in rules],
            }
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "commandLine": report.command,
                "toolExecutionNotifications": [
                    {
                        "level": "note",
                        "message": {"text": f"skipped: {s.reason}"},
                        "locations": [
                            {"physicalLocation": {"artifactLocation": _artifact(s.path)}}
                        ],
                    }
                    for s in report.skipped
                ],
            }
        ],
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The repository root."}}},
        "results": [
            _result(f, index[f.code], fp)
            for f, fp in zip(report.findings, report.fingerprints, strict=True)
        ],
        "columnKind": "utf16CodeUnits",
        "properties": {
            "target": report.target,
            "filesScanned": report.files_scanned,
            "filesOutOfScope": report.files_out_of_scope,
            "filtered": report.filtered,
        },
    }
    if report.commit:
        run["versionControlProvenance"] = [
            {"repositoryUri": _repository_uri(report.url), "revisionId": report.commit}
        ]
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


class SarifFormat:
    """`--format sarif`."""

    def render(self, report: ScanReport) -> str:
        """Two-space indented SARIF JSON with a trailing newline."""
        return json.dumps(to_sarif(report), indent=2, ensure_ascii=False) + "\n"
