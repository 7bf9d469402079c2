"""`build_table8(options) -> Table8Report`: the library function behind `boundary-audit table8`.

Inputs are checked first (adapters, task selection, reply sets, `--repo-dir`/`--commit`
system names), so a bad input costs nothing. Then: the static columns per system (a checkout
when one is available, see `anchors`), one sandbox for the whole task matrix, one with a
shorter timeout for the probes, and the rows assembled in adapter order.

The real-harness column (issue 6) comes from `harness compare` reports (`harness_reports`,
read by `harness_column`): for each path a report compared the real harness against, the
damage through the real harness and the agreement with the path. NOTE(h9): a second seam,
`extra_transports`, runs `harness:<system>` transports in the same matrix as the paths; their
measures land in `Row.harness` of every row of that system, without an agreement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from boundary_audit import __version__
from boundary_audit.adapters import Adapter, AdapterTransport, load_adapters, path_transports
from boundary_audit.adapters.anchors import verify_adapter
from boundary_audit.errors import UsageError
from boundary_audit.pipelines.harness_column import HarnessColumn, load_harness_column
from boundary_audit.pipelines.matrix import fingerprints, measure, run_matrix
from boundary_audit.probes import Fingerprint, Probe, load_probes
from boundary_audit.progress import NoProgress, Progress, Say
from boundary_audit.results.table8 import Measure, Row, StaticCheck, Table8Report
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.tasks import ReplySet, load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

Note = Say


@dataclass(frozen=True)
class Table8Options:
    """What `boundary-audit table8` was asked to do."""

    systems: tuple[str, ...] = ()
    """Adapter ids; empty means every adapter."""
    adapter_files: tuple[Path, ...] = ()
    """User adapter files or folders added to the packaged ones."""
    select: str = "all"
    """Task selection (see `tasks.select_tasks`)."""
    replies: tuple[str, ...] = ("oracle", "naive")
    sandbox: str = "auto"
    jobs: int = 2
    timeout_s: float = 10.0
    probe_timeout_s: float = 5.0
    repo_dirs: Mapping[str, Path] = field(default_factory=dict)
    """System id -> a local clone (or plain directory) to verify the anchors in."""
    commits: Mapping[str, str] = field(default_factory=dict)
    """System id -> a revision to check the anchors at instead of the pin (drift)."""
    offline: bool = False
    """Never clone or fetch for the static columns (local clones and the cache only)."""
    static: bool = True
    """False: skip the static columns altogether."""
    probes: bool = True
    """False: skip the fingerprint probes."""
    harness_reports: Path | None = None
    """A folder of `harness compare` JSON reports: the real-harness column (see harness_column)."""
    command: str = ""


def _check_names(adapters: Sequence[Adapter], options: Table8Options) -> None:
    known = {a.id for a in adapters}
    for flag, names in (("--repo-dir", options.repo_dirs), ("--commit", options.commits)):
        for name in names:
            if name not in known:
                raise UsageError(
                    f"{flag} {name}=...: no such system among {', '.join(sorted(known))}"
                )


def _static(
    adapters: Sequence[Adapter], options: Table8Options, note: Note
) -> dict[tuple[str, str], StaticCheck]:
    out: dict[tuple[str, str], StaticCheck] = {}
    for adapter in adapters:
        note(f"anchors of {adapter.id}")
        checks = verify_adapter(
            adapter,
            repo_dir=options.repo_dirs.get(adapter.id),
            rev=options.commits.get(adapter.id),
            offline=options.offline,
        )
        out.update({(adapter.id, pid): check for pid, check in checks.items()})
    return out


def _row(
    t: AdapterTransport,
    measures: tuple[Measure, ...],
    static: StaticCheck | None,
    facts: Fingerprint | None,
    skipped: str,
    harness: tuple[Measure, ...],
    column: HarnessColumn | None,
) -> Row:
    a, p = t.adapter, t.path
    if column is not None:
        harness = column.measures
    return Row(
        system=a.id,
        system_name=a.name,
        path=p.id,
        title=p.title,
        is_row=p.row,
        extra=p.extra,
        study_contract=a.study.contract,
        study_anchor=a.study.anchor,
        study_observed=a.study.observed,
        contract=p.contract.value,
        boundary_class=p.boundary_class.value,
        shell_parses=p.shell_parses,
        parse_layers=p.parse_layers,
        observed=p.observed,
        transport=t.inner.label,
        preprocess=tuple(s.name for s in p.preprocess),
        anchors=tuple(an.label(a.commit) for an in p.anchors),
        fix=p.fix,
        marked=p.marked,
        notes=p.notes,
        facts=facts.facts if facts else (),
        measures=measures,
        static=static,
        skipped=skipped,
        harness=harness,
        harness_check=column.check if column else None,
    )


def build_table8(
    options: Table8Options,
    *,
    progress: Progress | None = None,
    extra_transports: Sequence[Transport] = (),
) -> Table8Report:
    """Measure every boundary path of the chosen systems and assemble the report."""
    progress = progress or NoProgress()
    say = progress.note
    adapters = load_adapters(options.systems or None, options.adapter_files)
    _check_names(adapters, options)
    tasks = load_tasks(options.select)
    suite = load_tasks()
    reply_sets: list[ReplySet] = [
        part.restricted(tasks) for s in options.replies for part in load_reply_sets(s, suite)
    ]
    paths = path_transports(adapters)
    columns = (
        load_harness_column(options.harness_reports, options.replies)
        if options.harness_reports
        else {}
    )
    probe_set: tuple[Probe, ...] = load_probes() if options.probes else ()
    static = _static(adapters, options, say) if options.static else {}
    prints = _probe([make_transport(BASELINE), *paths], probe_set, options, say)
    with make_sandbox(options.sandbox, Limits(timeout_s=options.timeout_s)) as sandbox:
        matrix = run_matrix(
            tasks,
            reply_sets,
            [*paths, *extra_transports],
            sandbox,
            jobs=options.jobs,
            progress=progress,
        )  # closes the transports
        described = sandbox.describe()
    skipped = {s.transport: s.reason for s in matrix.skipped}

    def measured(label: str) -> tuple[Measure, ...]:
        if label in skipped:
            return ()
        return tuple(measure(matrix.records, label, rs.name) for rs in reply_sets)

    harness = {t.label: measured(t.label) for t in extra_transports}
    rows = [
        _row(
            t,
            measured(t.label),
            static.get((t.adapter.id, t.path.id)),
            prints.get(t.label),
            skipped.get(t.label, ""),
            harness.get(f"harness:{t.adapter.id}", ()),
            columns.get((t.adapter.id, t.path.id)),
        )
        for t in paths
    ]
    return Table8Report(
        tool_version=__version__,
        command=options.command,
        sandbox=described,
        task_select=options.select,
        task_count=len(tasks),
        core_count=sum(1 for t in tasks if t.core),
        reply_sets=tuple(options.replies),
        baseline=BASELINE,
        probes=tuple(p.id for p in probe_set),
        baseline_facts=prints[BASELINE].facts if BASELINE in prints else (),
        rows=tuple(r for r in rows if r.is_row),
        variants=tuple(r for r in rows if not r.is_row),
        notes=tuple(f"{k}: {v}" for k, v in sorted(skipped.items())),
    )


def _probe(
    paths: Sequence[Transport], probe_set: Sequence[Probe], options: Table8Options, say: Note
) -> dict[str, Fingerprint]:
    if not probe_set:
        return {}
    sandbox: Sandbox
    with make_sandbox(options.sandbox, Limits(timeout_s=options.probe_timeout_s)) as sandbox:
        return fingerprints(paths, sandbox, probe_set, jobs=options.jobs, progress=say)
