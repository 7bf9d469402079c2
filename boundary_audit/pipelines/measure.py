"""`scan` goes dynamic: push the task suite through each model-controlled finding's derived path.

Every active, model-controlled finding carries the boundary path the static analysis derived
(`finding.DerivedPath`, `static/path.py`): one or more routes (a fact the code leaves open
is a range, one route per plausible value), each a transport with parameters after the
harness's pre-processors, and the same routes with the class's fix applied. `plan` turns each
route into a transport (`path_transport`: the adapters' own `AdapterTransport`, so a derived
path runs through exactly the machinery an adapter's path does); where the scanned commit is
an audited system's pin and the finding sits on one of its adapter's sink anchors, the
adapter's path is measured beside it (`match_adapter`) and compared field by field
(`results.scan.compare_paths`). Every distinct transport runs once per scan, with `raw`, the
baseline, through the parallel runner.

Evidence is measured over the core tasks, families weighted equally (`matrix.measure`);
boundary-family tasks are counted apart. A run that could not be carried out (its driver,
sandbox, ssh hop or engine failed: reason `error: ...`) is never damage: its task is left out
of both sides, the run is counted and named, and the command exits 6.

The confidence rule (docs/adapters.md, "scan --probe"): a finding is raised to `high` when
the oracle measurement through its path confirms its class. Classes that predict damage
(`nested-string`, `argv-direct`, `tty-keystrokes`, `shell-stdin`, `shell-session`,
`remote-string`, and `serialized` without a serializer) are confirmed by a negative oracle
damage; classes that predict a lossless boundary (`shell-string`, `script-file`, `serialized`
through a serializer, and any class with a quoting sanitizer at the interpolation point) are
confirmed by zero damage. An unconfirmed measurement leaves the confidence as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from boundary_audit.adapters import load_adapters
from boundary_audit.adapters.model import Adapter, BoundaryPath, StepSpec, StudyRow, TransportSpec
from boundary_audit.adapters.transport import AdapterTransport
from boundary_audit.finding import Evidence, Finding, Location, Mechanism, Route
from boundary_audit.pipelines.matrix import fingerprints, measure
from boundary_audit.pipelines.runner import plan_cells, run_cells
from boundary_audit.probes import load_probes
from boundary_audit.probes.model import ProbeFact
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.record import RunRecord
from boundary_audit.results.scan import (
    AdapterMatch,
    ProbeInfo,
    RunErrors,
    ScanReport,
    compare_paths,
)
from boundary_audit.results.table8 import Measure
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox.interface import Sandbox
from boundary_audit.static.checks import record_of
from boundary_audit.tasks import ReplySet, Task, load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE, Confidence
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport


@dataclass(frozen=True)
class ProbeSettings:
    """How scan probes findings."""

    select: str = "all"
    """Every task: the boundary families (stdin readers, sessions, keystrokes) are what
    separate the session, stdin and tty classes from a plain shell string."""
    replies: tuple[str, ...] = ("oracle", "naive")
    sandbox: str = "auto"
    jobs: int = 2
    timeout_s: float = 10.0
    fixes: bool = True
    """Also measure each path with its fix applied."""
    adapters: bool = True
    """Also measure the adapter's path where the finding sits on an audited system's anchor."""
    probes: bool = True
    """Fingerprint raw and every path's routes with the probes of probes/."""


@dataclass(frozen=True)
class Plan:
    """What one probe step runs: transports by label, and each finding's measurements."""

    transports: dict[str, Transport] = field(default_factory=dict)
    """Label -> transport (the baseline not included)."""
    measured: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)
    """`id(finding)` -> [(role, route assumes, transport label)], in report order."""
    adapters: dict[Location, AdapterMatch] = field(default_factory=dict)
    """A finding's primary location -> the adapter path it was compared with."""
    refused: dict[str, str] = field(default_factory=dict)
    """Label -> why its transport could not be built (an adapter error, a bad parameter)."""


@dataclass(frozen=True)
class ProbeOutcome:
    """Findings with evidence attached, and how the probe went."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    transports: tuple[str, ...] = ()
    """Transport labels that ran (raw first)."""
    sandbox: str = ""
    """Where the replies ran (`Sandbox.confinement()`), "" if nothing ran."""
    info: ProbeInfo | None = None
    adapters: Mapping[Location, AdapterMatch] = field(default_factory=dict)
    records: tuple[RunRecord, ...] = ()
    fingerprints: Mapping[str, tuple[ProbeFact, ...]] = field(default_factory=dict)


_SCAN = Adapter(
    id="scan",
    name="scan",
    repository="",
    commit="0000000",
    study=StudyRow("", "", ""),
    paths=(),
    source_file="(derived by scan)",
)


class PathTransport(AdapterTransport):
    """A derived route as a transport: the adapters' machinery under the route's own label."""

    def __init__(self, path: BoundaryPath, label: str) -> None:
        super().__init__(_SCAN, path)
        self._label = label

    @property
    def label(self) -> str:
        """The route's label (transport label, then its pre-processors in brackets)."""
        return self._label


def route_label(route: Route) -> str:
    """`raw(shell=sh)[template.interpolate(prefix=sh -c ",suffix=")]`: transport, steps."""
    inner = make_transport(route.transport.name, **dict(route.transport.params))
    try:
        label = inner.label
    finally:
        inner.close()
    if not route.preprocess:
        return label
    return f"{label}[{'; '.join(step.label() for step in route.preprocess)}]"


def path_transport(finding: Finding, route: Route) -> Transport:
    """The transport that replays `route` of `finding`'s derived path."""
    if not route.preprocess:
        return make_transport(route.transport.name, **dict(route.transport.params))
    path = finding.boundary_path
    assert path is not None
    bp = BoundaryPath(
        id="derived",
        title=finding.primary.anchor(),
        row=True,
        extra=False,
        contract=path.contract,
        boundary_class=path.boundary_class,
        shell_parses=path.shell_parses,
        parse_layers=path.parse_layers,
        observed=finding.message,
        fix=path.fix,
        transport=TransportSpec(route.transport.name, dict(route.transport.params)),
        preprocess=tuple(StepSpec(s.name, dict(s.params)) for s in route.preprocess),
    )
    return PathTransport(bp, route_label(route))


def match_adapter(
    finding: Finding, commit: str | None, adapters: Sequence[Adapter]
) -> tuple[Adapter, BoundaryPath] | None:
    """The audited system's path whose sink anchor holds `finding`, at that system's pin."""
    if not commit:
        return None
    p = finding.primary
    for adapter in adapters:
        if not commit.startswith(adapter.commit):
            continue
        for path in adapter.paths:
            for a in path.anchors:
                if (
                    a.kind == "sink"
                    and a.path == p.path
                    and a.start_line <= p.end_line
                    and p.start_line <= a.end_line
                    and (a.boundary_class is None or a.boundary_class == finding.boundary_class)
                ):
                    return adapter, path
    return None


def _measurable(f: Finding) -> bool:
    path = f.boundary_path
    return (
        f.model_controlled
        and f.suppressed is None
        and path is not None
        and not path.unmeasurable
        and path.transport.name != "none"
    )


def plan(
    findings: Sequence[Finding],
    *,
    commit: str | None = None,
    settings: ProbeSettings = ProbeSettings(),
    adapters: Sequence[Adapter] | None = None,
) -> Plan:
    """Every measurement the findings need, with one transport per distinct label."""
    out = Plan()
    systems = (
        tuple(adapters if adapters is not None else load_adapters()) if settings.adapters else ()
    )
    for f in findings:
        if not _measurable(f):
            continue
        path = f.boundary_path
        assert path is not None
        wanted: list[tuple[str, str, Route | Transport]] = [
            ("path", r.assumes, r) for r in path.routes
        ]
        if settings.fixes:
            wanted += [("fix", r.assumes, r) for r in path.fixed]
        found = match_adapter(f, commit, systems)
        if found is not None:
            adapter, bp = found
            theirs = AdapterTransport(adapter, bp)
            out.adapters[f.primary] = AdapterMatch(
                adapter.id, bp.id, theirs.label, compare_paths(path, bp, adapter.name)
            )
            wanted.append(("adapter", "", theirs))
        rows: list[tuple[str, str, str]] = []
        for role, assumes, what in wanted:
            try:
                t = what if isinstance(what, Transport) else path_transport(f, what)
            except Exception as exc:  # noqa: BLE001 - a route that cannot be built is a note
                label = route_label(what) if isinstance(what, Route) else str(what)
                out.refused[label] = str(exc)
                continue
            if t.label != BASELINE and t.label not in out.transports:
                out.transports[t.label] = t
            elif t.label in out.transports and t is not out.transports[t.label]:
                t.close()
            rows.append((role, assumes, t.label))
        out.measured[id(f)] = rows
    return out


def evidence_of(m: Measure, label: str, role: str, assumes: str) -> Evidence:
    """The Evidence of one `matrix.measure` (core, family-weighted, errors left out)."""
    return Evidence(
        transport=label,
        reply_set=m.reply_set,
        tasks=m.tasks,
        passed_raw=m.passed_raw,
        passed_boundary=m.passed_boundary,
        role=role,
        route=assumes,
        points=m.damage_pp if m.measured else None,
        errors=m.errors,
        error=m.error,
        families=tuple((fd.family, fd.points) for fd in m.families),
        boundary_tasks=m.boundary_tasks,
        boundary_broken=m.boundary_broken,
    )


def confirms(finding: Finding, oracle: Evidence) -> bool:
    """True when the oracle measurement confirms the finding's class (module docstring)."""
    if not oracle.measured:
        return False
    lossless = record_of(finding.boundary_class).lossless or finding.sanitizer is not None
    return oracle.damage_pp == 0 if lossless else oracle.damage_pp < 0


def attach(
    findings: Sequence[Finding],
    the_plan: Plan,
    records: Sequence[RunRecord],
    reply_sets: Sequence[str],
) -> tuple[Finding, ...]:
    """Every planned finding with its evidence (and the confidence rule applied)."""
    ran = {r.transport for r in records}
    out = []
    for f in findings:
        rows = the_plan.measured.get(id(f), [])
        evs = [
            evidence_of(measure(records, label, name), label, role, assumes)
            for name in reply_sets
            for role, assumes, label in rows
            if label in ran
        ]
        if evs:
            f = replace(f, evidence=f.evidence + tuple(evs))
            oracle = next(
                (e for e in evs if e.role == "path" and e.reply_set == reply_sets[0]), None
            )
            if oracle is not None and confirms(f, oracle):
                f = replace(f, confidence=Confidence.HIGH)
        out.append(f)
    return tuple(out)


def run_errors(records: Sequence[RunRecord]) -> tuple[RunErrors, ...]:
    """Error runs per transport (the first reason named), in transport order."""
    by: dict[str, list[RunRecord]] = {}
    for r in records:
        if r.errored:
            by.setdefault(r.transport, []).append(r)
    return tuple(
        RunErrors(t, len(rs), rs[0].reason)
        for t, rs in sorted(by.items(), key=lambda kv: (kv[0] != BASELINE, kv[0]))
    )


def run_plan(
    the_plan: Plan,
    tasks: Sequence[Task],
    sets: Sequence[ReplySet],
    sandbox: Sandbox,
    *,
    jobs: int,
    progress: Progress,
) -> tuple[tuple[RunRecord, ...], list[tuple[str, str]]]:
    """Run raw and every planned transport over `tasks` x `sets`; (records, skipped)."""
    transports = [make_transport(BASELINE), *the_plan.transports.values()]
    cells, skipped = plan_cells(tasks, sets, transports, sandbox)
    progress.note(f"probing {len(the_plan.transports)} boundary paths, {len(cells)} runs")
    try:
        records = run_cells(cells, sandbox, jobs=jobs, progress=progress)
    finally:
        for t in transports:
            t.close()
    return records, [(s.transport, s.reason) for s in skipped]


def probe_findings(
    findings: Sequence[Finding],
    settings: ProbeSettings = ProbeSettings(),
    *,
    commit: str | None = None,
    adapters: Sequence[Adapter] | None = None,
    progress: Progress | None = None,
) -> ProbeOutcome:
    """Measure every active model-controlled finding's derived path; return them with evidence."""
    progress = progress or NoProgress()
    the_plan = plan(findings, commit=commit, settings=settings, adapters=adapters)
    refused = tuple(f"not probed through {k}: {v}" for k, v in sorted(the_plan.refused.items()))
    if not the_plan.measured:
        return ProbeOutcome(tuple(findings), refused, adapters=the_plan.adapters)
    tasks = load_tasks(settings.select)
    sets = [part for s in settings.replies for part in load_reply_sets(s, tasks)]
    with make_sandbox(settings.sandbox, Limits(timeout_s=settings.timeout_s)) as sandbox:
        records, skipped = run_plan(
            the_plan, tasks, sets, sandbox, jobs=settings.jobs, progress=progress
        )
        confinement = sandbox.confinement()
    prints = _fingerprints(the_plan, settings) if settings.probes else {}
    notes = refused + tuple(f"not probed through {t}: {why}" for t, why in skipped)
    ran = sorted({r.transport for r in records}, key=lambda x: (x != BASELINE, x))
    out = attach(findings, the_plan, records, [s.name for s in sets])
    info = ProbeInfo(
        select=settings.select,
        tasks=len(tasks),
        core=sum(1 for t in tasks if t.core),
        reply_sets=tuple(s.name for s in sets),
        transports=tuple(ran),
        errors=run_errors(records),
        not_measured=tuple(sorted((*skipped, *the_plan.refused.items()))),
    )
    return ProbeOutcome(
        out, notes, tuple(ran), confinement, info, dict(the_plan.adapters), records, prints
    )


def _fingerprints(the_plan: Plan, settings: ProbeSettings) -> dict[str, tuple[ProbeFact, ...]]:
    """The probes through raw and through every route of a path (not the fixes)."""
    labels = sorted(
        {label for rows in the_plan.measured.values() for role, _, label in rows if role == "path"}
        - {BASELINE}
    )
    with make_sandbox(settings.sandbox, Limits(timeout_s=5.0)) as box:
        built = [make_transport(BASELINE), *(the_plan.transports[lab] for lab in labels)]
        prints = fingerprints(built, box, load_probes(), jobs=settings.jobs)
        for t in built:
            t.close()
    return {label: fp.facts for label, fp in prints.items()}


def probe_report(
    report: ScanReport,
    settings: ProbeSettings = ProbeSettings(),
    *,
    progress: Progress | None = None,
) -> ScanReport:
    """`report` with its model-controlled findings measured (the dynamic step of `scan`)."""
    outcome = probe_findings(report.findings, settings, commit=report.commit, progress=progress)
    return replace(
        report,
        findings=outcome.findings,
        notes=(*report.notes, *outcome.notes),
        sandbox=outcome.sandbox,
        probe=outcome.info,
        adapters=outcome.adapters,
        probe_facts=outcome.fingerprints,
    )


def path_params(route: Route) -> dict[str, Any]:
    """A route's transport parameters with the transport's defaults filled in."""
    t = make_transport(route.transport.name, **dict(route.transport.params))
    try:
        return dict(t.params)
    finally:
        t.close()


__all__ = [
    "Mechanism",
    "PathTransport",
    "Plan",
    "ProbeOutcome",
    "ProbeSettings",
    "attach",
    "confirms",
    "match_adapter",
    "path_transport",
    "plan",
    "probe_findings",
    "probe_report",
    "route_label",
    "run_errors",
    "run_plan",
]
