"""`scan` goes dynamic: push the task suite through each model-controlled finding's boundary.

For every active, model-controlled finding, `transport_for` maps its class and the static
evidence (the sink's source text: shell flags, interpreter, `send-keys -l`, the tokenizer) to
a transport with parameters. Each distinct transport label runs once per scan (with `raw`, the
baseline), through the parallel runner, and every finding of that label gets the measurement
as `Evidence` for each reply set.

The confidence rule (docs/adapters.md, "scan --probe"): a finding is raised to `high` when
the oracle measurement confirms its class. Classes that predict damage (`nested-string`,
`argv-direct`, `tty-keystrokes`, `shell-stdin`, `shell-session`, `remote-string`, and
`serialized` without a serializer) are confirmed by a negative oracle damage (some correct
command broke); classes that predict a lossless boundary (`shell-string`, `script-file`,
`serialized` through a serializer, and any class with a quoting sanitizer at the
interpolation point) are confirmed by zero damage (the replay reproduced raw task by task).
An unconfirmed measurement leaves the confidence as the static scan set it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from boundary_audit.finding import Evidence, Finding, Location
from boundary_audit.pipelines.runner import plan_cells, run_cells
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.results.scan import ScanReport
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.static.checks import record_of
from boundary_audit.tasks import load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE, Confidence
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

"""Classes whose replay should reproduce raw exactly."""


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


@dataclass(frozen=True)
class ProbeOutcome:
    """Findings with evidence attached, and what could not be measured."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    transports: tuple[str, ...] = ()
    """Transport labels that ran (raw first)."""
    sandbox: str = ""
    """Where the replies ran (`Sandbox.confinement()`), "" if nothing ran."""


def transport_spec(
    finding: Finding, text: str, file_text: str = ""
) -> tuple[str, dict[str, object]]:
    """(transport name, parameters) that replay `finding`'s boundary: its class's owning check
    decides from the sink's source `text` (and `file_text`, the whole file, when known)."""
    hint = record_of(finding.boundary_class).transport
    return hint(text, file_text, finding.sanitizer is not None)


def transport_for(finding: Finding, text: str, file_text: str = "") -> Transport:
    """The transport `transport_spec` names, instantiated."""
    name, params = transport_spec(finding, text, file_text)
    return make_transport(name, **params)


def confirms(finding: Finding, oracle: Evidence) -> bool:
    """True when the oracle measurement confirms the finding's class (module docstring)."""
    lossless = record_of(finding.boundary_class).lossless or finding.sanitizer is not None
    return oracle.damage_pp == 0 if lossless else oracle.damage_pp < 0


def _evidence(records: Sequence[Any], label: str, reply_set: str) -> Evidence:
    raw = {
        r.task_id: r.passed for r in records if r.transport == BASELINE and r.reply_set == reply_set
    }
    hit = {
        r.task_id: r.passed for r in records if r.transport == label and r.reply_set == reply_set
    }
    return Evidence(label, reply_set, len(hit), sum(raw[t] for t in hit), sum(hit.values()))


def choose_transports(
    findings: Sequence[Finding],
    sink_text: Mapping[Location, str],
    file_text: Callable[[str], str] | None = None,
) -> dict[int, Transport]:
    """`id(finding)` -> its transport, for every active model-controlled finding; findings
    with the same transport label share one instance. `file_text(path)` gives a file's
    text when the caller can read the tree."""
    shared: dict[str, Transport] = {}
    chosen: dict[int, Transport] = {}
    for f in findings:
        if f.model_controlled and f.suppressed is None:
            whole = file_text(f.primary.path) if file_text else ""
            t = transport_for(f, sink_text.get(f.primary, ""), whole)
            chosen[id(f)] = shared.setdefault(t.label, t)
    return chosen


def attach_evidence(
    findings: Sequence[Finding],
    chosen: Mapping[int, Transport],
    records: Sequence[object],
    reply_sets: Sequence[str],
) -> tuple[Finding, ...]:
    """Every finding whose transport ran, with its evidence (and confidence rule applied)."""
    ran = {r.transport for r in records}  # type: ignore[attr-defined]
    return tuple(
        _measured(f, chosen[id(f)].label if id(f) in chosen else None, records, reply_sets, ran)
        for f in findings
    )


def probe_findings(
    findings: Sequence[Finding],
    sink_text: Mapping[Location, str],
    settings: ProbeSettings = ProbeSettings(),
    *,
    progress: Progress | None = None,
) -> ProbeOutcome:
    """Measure every active model-controlled finding's boundary; return them with evidence."""
    chosen = choose_transports(findings, sink_text)
    if not chosen:
        return ProbeOutcome(tuple(findings))
    by_label = {t.label: t for t in chosen.values() if t.label != BASELINE}
    tasks = load_tasks(settings.select)
    sets = [part for s in settings.replies for part in load_reply_sets(s, tasks)]
    with make_sandbox(settings.sandbox, Limits(timeout_s=settings.timeout_s)) as sandbox:
        transports = [make_transport(BASELINE), *by_label.values()]
        cells, skipped = plan_cells(tasks, sets, transports, sandbox)
        (progress or NoProgress()).note(f"probing {len(by_label)} boundaries, {len(cells)} runs")
        try:
            records = run_cells(cells, sandbox, jobs=settings.jobs, progress=progress)
        finally:
            for t in transports:
                t.close()
        confinement = sandbox.confinement()
    notes = tuple(f"not probed through {s.transport}: {s.reason}" for s in skipped)
    ran = sorted({r.transport for r in records}, key=lambda x: (x != BASELINE, x))
    out = attach_evidence(findings, chosen, records, [s.name for s in sets])
    return ProbeOutcome(out, notes, tuple(ran), confinement)


def _measured(
    f: Finding, label: str | None, records: Sequence[object], sets: Sequence[str], ran: set[str]
) -> Finding:
    """`f` with one Evidence per reply set, raised to high when the oracle confirms it."""
    if label is None or label not in ran:
        return f
    evs = [_evidence(records, label, name) for name in sets]
    for ev in evs:
        f = f.with_evidence(ev)
    oracle = next((e for e in evs if e.reply_set == "oracle"), evs[0] if evs else None)
    if oracle is not None and confirms(f, oracle):
        f = replace(f, confidence=Confidence.HIGH)
    return f


def probe_report(
    report: ScanReport,
    settings: ProbeSettings = ProbeSettings(),
    *,
    progress: Progress | None = None,
) -> ScanReport:
    """`report` with its model-controlled findings measured (the dynamic step of `scan`)."""
    outcome = probe_findings(report.findings, report.sink_text, settings, progress=progress)
    return replace(
        report,
        findings=outcome.findings,
        notes=(*report.notes, *outcome.notes),
        sandbox=outcome.sandbox,
    )
