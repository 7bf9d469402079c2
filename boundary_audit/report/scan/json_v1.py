"""The `boundary-audit/v1` JSON output: a frozen, versioned contract for other tools.

The JSON is built from DTOs defined here, never from `Finding` directly, so refactoring the
internal types cannot change user-visible output. Key order is the DTO field order, output
ends with a newline, and no field depends on the clock or the machine. Every field is
documented in docs/json-v1.md and described by `boundary_audit/schemas/report-v1.schema.json`;
adding an optional field is a compatible change, anything else needs `boundary-audit/v2`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from boundary_audit.finding import Evidence, Finding, Location, Skipped
from boundary_audit.results.scan import CheckInfo, ScanReport

SCHEMA = "boundary-audit/v1"


@dataclass(frozen=True)
class LocationV1:
    """A span of source; lines and columns are 1-based (columns count bytes)."""

    path: str
    line: int
    end_line: int
    column: int
    end_column: int
    anchor: str
    annotation: str

    @classmethod
    def of(cls, loc: Location) -> LocationV1:
        """The DTO of `loc`."""
        return cls(
            path=loc.path,
            line=loc.start_line,
            end_line=loc.end_line,
            column=loc.start_col + 1,
            end_column=loc.end_col + 1,
            anchor=loc.anchor(),
            annotation=loc.annotation,
        )


@dataclass(frozen=True)
class EvidenceV1:
    """One measurement through the finding's boundary."""

    transport: str
    reply_set: str
    tasks: int
    passed_raw: int
    passed_boundary: int
    damage_pp: float

    @classmethod
    def of(cls, ev: Evidence) -> EvidenceV1:
        """The DTO of `ev`."""
        return cls(
            ev.transport, ev.reply_set, ev.tasks, ev.passed_raw, ev.passed_boundary, ev.damage_pp
        )


@dataclass(frozen=True)
class SuppressionV1:
    """Why a finding is not active."""

    kind: str
    reason: str


@dataclass(frozen=True)
class FindingV1:
    """One finding. `path`/`line`/`end_line`/`column`/`end_column` are the primary location."""

    code: str
    name: str
    help_url: str
    message: str
    boundary_class: str = field(metadata={"json": "class"})
    parse_layers: int
    contract: str
    severity: str
    confidence: str
    model_controlled: bool
    model_evidence: str | None
    sanitizer: str | None
    sink: str
    snippet: str
    language: str
    path: str
    line: int
    end_line: int
    column: int
    end_column: int
    anchor: str
    fingerprint: str
    related: list[LocationV1]
    evidence: list[EvidenceV1]
    tip: str | None
    suppressed: SuppressionV1 | None

    @classmethod
    def of(cls, f: Finding, *, snippet: str, fingerprint: str) -> FindingV1:
        """The DTO of `f` with the report's snippet and fingerprint for it."""
        p = LocationV1.of(f.primary)
        sup = SuppressionV1(f.suppressed.kind, f.suppressed.reason) if f.suppressed else None
        return cls(
            code=f.code,
            name=f.name,
            help_url=f.help_url,
            message=f.message,
            boundary_class=f.boundary_class.value,
            parse_layers=f.parse_layers,
            contract=f.contract.value,
            severity=f.severity.value,
            confidence=f.confidence.value,
            model_controlled=f.model_controlled,
            model_evidence=f.model_evidence,
            sanitizer=f.sanitizer,
            sink=f.sink,
            snippet=snippet,
            language=f.language,
            path=p.path,
            line=p.line,
            end_line=p.end_line,
            column=p.column,
            end_column=p.end_column,
            anchor=p.anchor,
            fingerprint=fingerprint,
            related=[LocationV1.of(r) for r in f.related],
            evidence=[EvidenceV1.of(e) for e in f.evidence],
            tip=f.tip,
            suppressed=sup,
        )


@dataclass(frozen=True)
class CheckV1:
    """One check of the run's check set."""

    code: str
    name: str
    status: str
    enabled: bool
    classes: list[str]
    help_url: str

    @classmethod
    def of(cls, c: CheckInfo) -> CheckV1:
        """The DTO of `c`."""
        return cls(c.code, c.name, c.status, c.enabled, list(c.classes), c.help_url)


@dataclass(frozen=True)
class ToolV1:
    """The program that wrote the report."""

    name: str
    version: str


@dataclass(frozen=True)
class SummaryV1:
    """Counts over the report (see docs/json-v1.md for each)."""

    findings: int
    active: int
    suppressed: int
    suppressed_by: dict[str, int]
    filtered: int
    files_scanned: int
    files_skipped: int
    files_out_of_scope: int
    languages: dict[str, int]
    active_by_class: dict[str, int]
    active_by_severity: dict[str, int]
    active_model_controlled: int


@dataclass(frozen=True)
class SkippedV1:
    """An input that was not scanned, and why."""

    path: str
    reason: str

    @classmethod
    def of(cls, s: Skipped) -> SkippedV1:
        """The DTO of `s`."""
        return cls(s.path, s.reason)


@dataclass(frozen=True)
class ReportV1:
    """The whole document."""

    schema: str
    tool: ToolV1
    target: str
    target_name: str
    url: str
    commit: str | None
    command: str
    summary: SummaryV1
    checks: list[CheckV1]
    findings: list[FindingV1]
    skipped: list[SkippedV1]


def to_dto(report: ScanReport) -> ReportV1:
    """The v1 document of `report`."""
    s = report.summary
    summary = SummaryV1(
        findings=s.findings,
        active=s.active,
        suppressed=s.suppressed,
        suppressed_by=dict(s.suppressed_by),
        filtered=s.filtered,
        files_scanned=s.files_scanned,
        files_skipped=s.files_skipped,
        files_out_of_scope=s.files_out_of_scope,
        languages=dict(report.languages),
        active_by_class=dict(s.active_by_class),
        active_by_severity=dict(s.active_by_severity),
        active_model_controlled=s.active_model_controlled,
    )
    findings = [
        FindingV1.of(f, snippet=report.sink_text_of(f), fingerprint=fp)
        for f, fp in zip(report.findings, report.fingerprints, strict=True)
    ]
    return ReportV1(
        schema=SCHEMA,
        tool=ToolV1("boundary-audit", report.tool_version),
        target=report.target,
        target_name=report.target_name,
        url=report.url,
        commit=report.commit,
        command=report.command,
        summary=summary,
        checks=[CheckV1.of(c) for c in report.checks],
        findings=findings,
        skipped=[SkippedV1.of(k) for k in report.skipped],
    )


class JsonV1Format:
    """`--format json`."""

    def render(self, report: ScanReport) -> str:
        """Two-space indented JSON in DTO field order, with a trailing newline."""
        data = to_json(to_dto(report))
        if report.sandbox:  # optional: only a scan that probed ran replies somewhere
            keys = list(data)
            at = keys.index("command") + 1
            data = (
                {k: data[k] for k in keys[:at]}
                | {"sandbox": report.sandbox}
                | {k: data[k] for k in keys[at:]}
            )
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_json(value: Any) -> Any:
    """Plain JSON data of a DTO tree, in field order; a field's `json` metadata renames its key."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.metadata.get("json", f.name): to_json(getattr(value, f.name)) for f in fields(value)
        }
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value
