"""`run_probes(options) -> ProbeReport`: the library function behind `boundary-audit probe`.

Everything the user gave is checked before anything runs (task selection, every reply file,
transport names), so a bad input costs nothing and loses nothing. A reply file with several
(contract, draw) groups is split into one reply set per group (`tasks.replies.ReplySet.groups`),
so that each holds one reply per task per model and the summary pairs them task by task.
Then one sandbox is made, preflighted, and the runner runs the whole matrix. `raw` is the
baseline damage is measured against: when another transport is asked for without it, it is
added (and a note says so).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from boundary_audit import __version__
from boundary_audit.errors import ProbeError
from boundary_audit.pipelines.runner import plan_cells, preflight, run_cells
from boundary_audit.progress import Progress
from boundary_audit.results.probe import ProbeReport, summarize
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.tasks import ReplySet, Task, load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE
from boundary_audit.transports import TRANSPORTS, make_transport

DEFAULT_SELECT = "core"


@dataclass(frozen=True)
class ProbeOptions:
    """What `boundary-audit probe` was asked to do."""

    replies: tuple[str, ...] = ("oracle",)
    """`oracle`, `naive`, or paths of JSONL reply files."""
    transports: tuple[str, ...] = (BASELINE,)
    """Transport names, or `all`."""
    select: str = DEFAULT_SELECT
    sandbox: str = "auto"
    jobs: int = 2
    timeout_s: float = 10.0
    command: str = ""
    """The command line that regenerates the report (shown in its header)."""


def resolve_transports(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Transport names in run order (baseline first), and notes about what was added."""
    wanted: list[str] = []
    for name in names:
        for one in TRANSPORTS if name == "all" else [name]:
            if one not in wanted:
                wanted.append(one)
    notes = []
    if wanted and wanted != [BASELINE] and BASELINE not in wanted:
        notes.append(f"transport {BASELINE!r} added: damage is measured against it")
    ordered = [BASELINE] + [n for n in wanted if n != BASELINE]
    return ordered, notes


def load_replies(
    specs: Sequence[str], suite: Sequence[Task], chosen: Sequence[Task]
) -> list[ReplySet]:
    """Every reply set, checked against the whole suite, split into its (contract, draw)
    groups, then restricted to the chosen tasks."""
    sets = [part.restricted(chosen) for spec in specs for part in load_reply_sets(spec, suite)]
    names = Counter(s.name for s in sets)
    for name, count in sorted(names.items()):
        if count > 1:
            raise ProbeError(f"reply set {name!r} given {count} times (names must be unique)")
    for reply_set in sets:
        check_pairable(reply_set)
    return sets


def check_pairable(reply_set: ReplySet) -> None:
    """At most one reply per task per model in one (contract, draw) group, so that every
    summary cell pairs tasks."""
    seen: Counter[tuple[str, str | None]] = Counter((r.task_id, r.model) for r in reply_set.replies)
    for (task_id, model), count in sorted(seen.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if count > 1:
            who = f" from model {model!r}" if model else ""
            contract, draw = reply_set.replies[0].group
            which = f"contract {contract}" + ("" if draw is None else f", draw {draw}")
            raise ProbeError(
                f"{reply_set.name}: {count} replies for task {task_id!r}{who} under {which}; "
                "the summary pairs one reply per task, model, contract and draw",
                hint="give each reply of a task its own `meta.draw` (as generate writes them), "
                "or each model's replies a distinct `model`",
            )


@dataclass(frozen=True)
class ProbePlan:
    """Checked inputs, ready to run: nothing has been started yet."""

    options: ProbeOptions
    tasks: tuple[Task, ...]
    reply_sets: tuple[ReplySet, ...]
    transports: tuple[str, ...]
    notes: tuple[str, ...]


def prepare_probes(options: ProbeOptions) -> ProbePlan:
    """Check every input (tasks, reply files, transport names); raise before anything runs."""
    suite = load_tasks()
    chosen = load_tasks(options.select)
    reply_sets = load_replies(options.replies, suite, chosen)
    names, notes = resolve_transports(options.transports)
    for name in names:
        make_transport(name).close()
    return ProbePlan(options, chosen, tuple(reply_sets), tuple(names), tuple(notes))


def execute_probes(
    plan: ProbePlan, sandbox: Sandbox, *, progress: Progress | None = None
) -> ProbeReport:
    """Run the planned matrix in `sandbox` (which the caller closes) and build the report."""
    transports = [make_transport(n) for n in plan.transports]
    try:
        preflight(sandbox)
        cells, skipped = plan_cells(plan.tasks, plan.reply_sets, transports, sandbox)
        records = run_cells(cells, sandbox, jobs=plan.options.jobs, progress=progress)
    finally:
        for transport in transports:
            transport.close()
    return ProbeReport(
        tool_version=__version__,
        command=plan.options.command,
        sandbox=sandbox.name,
        tasks=tuple(t.id for t in plan.tasks),
        reply_sets=tuple(s.name for s in plan.reply_sets),
        transports=tuple(t.label for t in transports),
        notes=plan.notes,
        skipped=tuple(skipped),
        records=records,
        summary=summarize(records),
    )


def run_probes(options: ProbeOptions, *, progress: Progress | None = None) -> ProbeReport:
    """Prepare, make the sandbox, execute, close: the whole probe in one call."""
    plan = prepare_probes(options)
    with make_sandbox(options.sandbox, Limits(timeout_s=options.timeout_s)) as sandbox:
        return execute_probes(plan, sandbox, progress=progress)
