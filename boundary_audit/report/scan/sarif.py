"""SARIF 2.1.0 output of a static scan, for GitHub code scanning and other SARIF viewers.

One run. Rules come from the report's check set (code, name, documentation summary, and the
check's whole documentation as `help`: it ships with the package, so no `helpUri` points at a
host that does not serve it);
results carry the primary location as `physicalLocation` + `region`, related locations as
`relatedLocations`, a `codeFlows` thread from where the model value enters to the sink, a
`partialFingerprints` entry that survives line shifts, and SARIF `suppressions` for suppressed
findings (kept, not dropped). Each result's message ends with its fix and, when the scan
measured it, `fix verified: −66.1 pp → 0.0 pp`; `properties` carry the derived boundary path,
the fix and the measurements. Skipped inputs become tool execution notifications. The output
is validated against the official schema (vendored in `report/data/`) by the tests.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any
from urllib.parse import quote

from boundary_audit.finding import Finding, Location
from boundary_audit.results.scan import CheckInfo, ScanReport, evidence_text, fix_text, fix_verified
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
    more = f"`boundary-audit checks` lists every check; this is {check.code}'s documentation."
    return {
        "id": check.code,
        "name": check.name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": summary},
        "help": {
            "text": f"{check.help or summary}\n\n{more}",
            "markdown": f"{check.help or summary}\n\n{more}",
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


def _path(f: Finding) -> JSON | None:
    p = f.boundary_path
    if p is None:
        return None
    return {
        "transport": {"name": p.transport.name, "params": _plain(dict(p.transport.params))},
        "preprocess": [{"name": s.name, "params": _plain(dict(s.params))} for s in p.preprocess],
        "routes": [
            {
                "transport": r.transport.label(),
                "preprocess": [s.label() for s in r.preprocess],
                "assumes": r.assumes,
            }
            for r in p.routes
        ],
        "facts": [
            {"field": x.field, "value": x.value, "source": x.source, "where": x.where}
            for x in p.facts
        ],
        "fixed": [r.transport.label() for r in p.fixed],
        "notes": list(p.notes),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    return value


def _result(f: Finding, rule_index: int, fingerprint: str, first: str) -> JSON:
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
                "role": ev.role,
                "route": ev.route,
                "tasks": ev.tasks,
                "passedRaw": ev.passed_raw,
                "passedBoundary": ev.passed_boundary,
                "damagePp": ev.damage_pp if ev.measured else None,
                "errors": ev.errors,
            }
            for ev in f.evidence
        ],
        "fix": fix_text(f),
    }
    path = _path(f)
    if path is not None:
        out["properties"]["boundaryPath"] = path
    text = f.message or f.name
    measured = [evidence_text(ev) for ev in f.evidence if ev.role == "path"]
    if measured:
        text += f" Measured: {'; '.join(measured)}."
    text += f" Fix: {fix_text(f)}."
    verified = fix_verified(f, first) if first else ""
    if verified:
        out["properties"]["fixVerified"] = verified
        text += f" {verified[:1].upper()}{verified[1:]}."
    out["message"] = {"text": text}
    return out


def to_sarif(report: ScanReport) -> JSON:
    """The SARIF log of `report` as plain JSON data."""
    rules = _rules(report)
    index = {c.code: i for i, c in enumerate(rules)}
    first = (
        report.probe.reply_sets[0] if report.probe is not None and report.probe.reply_sets else ""
    )
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
                "executionSuccessful": report.error_runs == 0,
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
            _result(f, index[f.code], fp, first)
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
