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

from boundary_audit.finding import (
    DerivedPath,
    Evidence,
    Finding,
    Location,
    Mechanism,
    Route,
    Skipped,
)
from boundary_audit.results.scan import AdapterMatch, CheckInfo, ProbeInfo, ScanReport, fix_text

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
    """One measurement through the finding's boundary (core tasks, errors left out)."""

    transport: str
    reply_set: str
    tasks: int
    passed_raw: int
    passed_boundary: int
    damage_pp: float | None
    role: str
    route: str
    errors: int
    error: str
    families: dict[str, float]
    boundary_tasks: int
    boundary_broken: list[str]

    @classmethod
    def of(cls, ev: Evidence) -> EvidenceV1:
        """The DTO of `ev`."""
        return cls(
            ev.transport,
            ev.reply_set,
            ev.tasks,
            ev.passed_raw,
            ev.passed_boundary,
            ev.damage_pp if ev.measured else None,
            ev.role,
            ev.route,
            ev.errors,
            ev.error,
            dict(ev.families),
            ev.boundary_tasks,
            list(ev.boundary_broken),
        )


@dataclass(frozen=True)
class MechanismV1:
    """A transport or pre-processor: the `{name, params}` of an adapter file."""

    name: str
    params: dict[str, Any]

    @classmethod
    def of(cls, m: Mechanism) -> MechanismV1:
        """The DTO of `m` (tuples as lists)."""
        return cls(m.name, {k: _plain(v) for k, v in sorted(m.params.items())})


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    return value


@dataclass(frozen=True)
class RouteV1:
    """One way to replay the path (a fact the code leaves open adds routes)."""

    transport: MechanismV1
    preprocess: list[MechanismV1]
    assumes: str

    @classmethod
    def of(cls, r: Route) -> RouteV1:
        """The DTO of `r`."""
        return cls(
            MechanismV1.of(r.transport), [MechanismV1.of(p) for p in r.preprocess], r.assumes
        )


@dataclass(frozen=True)
class FactV1:
    """One fact of the derived path and where it comes from."""

    field: str
    value: str
    source: str
    where: str


@dataclass(frozen=True)
class FieldCheckV1:
    """One field of the derived path against the adapter's."""

    field: str
    scan: str
    adapter: str
    same: bool
    note: str


@dataclass(frozen=True)
class AdapterV1:
    """The audited system's path the finding was compared with."""

    system: str
    path: str
    label: str
    fields: list[FieldCheckV1]

    @classmethod
    def of(cls, m: AdapterMatch) -> AdapterV1:
        """The DTO of `m`."""
        return cls(
            m.system,
            m.path,
            m.label,
            [FieldCheckV1(c.field, c.scan, c.adapter, c.same, c.note) for c in m.fields],
        )


@dataclass(frozen=True)
class BoundaryPathV1:
    """The derived boundary path, in the fields of an adapter's `[[paths]]` entry."""

    contract: str
    boundary_class: str
    shell_parses: int
    parse_layers: list[str]
    transport: MechanismV1
    preprocess: list[MechanismV1]
    routes: list[RouteV1]
    facts: list[FactV1]
    fix: str
    fixed: list[RouteV1]
    notes: list[str]
    unmeasurable: str
    hinted: bool
    adapter: AdapterV1 | None

    @classmethod
    def of(cls, p: DerivedPath, match: AdapterMatch | None) -> BoundaryPathV1:
        """The DTO of `p` (and the adapter comparison, when the finding has one)."""
        return cls(
            contract=p.contract.value,
            boundary_class=p.boundary_class.value,
            shell_parses=p.shell_parses,
            parse_layers=list(p.parse_layers),
            transport=MechanismV1.of(p.transport),
            preprocess=[MechanismV1.of(s) for s in p.preprocess],
            routes=[RouteV1.of(r) for r in p.routes],
            facts=[FactV1(f.field, f.value, f.source, f.where) for f in p.facts],
            fix=p.fix,
            fixed=[RouteV1.of(r) for r in p.fixed],
            notes=list(p.notes),
            unmeasurable=p.unmeasurable,
            hinted=p.hinted,
            adapter=AdapterV1.of(match) if match is not None else None,
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
    boundary_path: BoundaryPathV1 | None

    @classmethod
    def of(
        cls, f: Finding, *, snippet: str, fingerprint: str, match: AdapterMatch | None = None
    ) -> FindingV1:
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
            tip=fix_text(f),
            suppressed=sup,
            boundary_path=(
                BoundaryPathV1.of(f.boundary_path, match) if f.boundary_path is not None else None
            ),
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
class RunErrorsV1:
    """Runs of one transport that could not be carried out."""

    transport: str
    runs: int
    reason: str


@dataclass(frozen=True)
class ProbeV1:
    """What the probe step ran (present only when the scan probed)."""

    select: str
    tasks: int
    core: int
    reply_sets: list[str]
    transports: list[str]
    error_runs: int
    errors: list[RunErrorsV1]
    not_measured: list[dict[str, str]]
    fingerprints: dict[str, dict[str, str]]

    @classmethod
    def of(cls, p: ProbeInfo, report: ScanReport) -> ProbeV1:
        """The DTO of `p` with the report's probe fingerprints."""
        return cls(
            p.select,
            p.tasks,
            p.core,
            list(p.reply_sets),
            list(p.transports),
            p.error_runs,
            [RunErrorsV1(e.transport, e.runs, e.reason) for e in p.errors],
            [{"transport": t, "reason": w} for t, w in p.not_measured],
            {
                label: {x.probe: x.outcome if x.observed else (x.value or x.outcome) for x in facts}
                for label, facts in report.probe_facts.items()
            },
        )


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
        FindingV1.of(f, snippet=report.sink_text_of(f), fingerprint=fp, match=report.adapter_of(f))
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
            extra: dict[str, Any] = {"sandbox": report.sandbox}
            if report.probe is not None:
                extra["probe"] = to_json(ProbeV1.of(report.probe, report))
            data = {k: data[k] for k in keys[:at]} | extra | {k: data[k] for k in keys[at:]}
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
