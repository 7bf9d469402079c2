"""`run_crossover(options) -> CrossoverReport`: the library call behind `boundary-audit crossover`.

Two sources of runs:

* **reply files** (`replies`): the probe's own pipeline runs them (`pipelines.probe`: every input
  checked before anything starts, files split into their (contract, draw) groups, one sandbox,
  the runner) through `raw` and each boundary transport; the crossover is computed from those
  runs. So the crossover costs the probe runs it needs plus its statistics.
* **run files** (`runs`): the `runs` of `probe --format json` or `crossover --format json`
  reports, read back (zero model calls, zero replays): the study's way of recomputing its
  tables from stored replays.

Before anything runs, the reply sets must give at least one configuration both contracts
(else exit 4). A table8 JSON (`table8`) adds its rows to the report, for the HTML page.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit import __version__
from boundary_audit.errors import ProbeError, UsageError
from boundary_audit.metrics import MetricsInputError, as_run
from boundary_audit.pipelines.probe import (
    ProbeOptions,
    ProbePlan,
    execute_probes,
    prepare_probes,
)
from boundary_audit.progress import Progress
from boundary_audit.record import RunRecord
from boundary_audit.results.crossover import (
    CONTRACTS,
    Bootstrap,
    CrossoverReport,
    Table8Row,
    build_crossover,
)
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.tasks import ReplySet, load_tasks
from boundary_audit.tasks.vocabulary import CORE_FAMILIES, MECHANISM_GROUPS
from boundary_audit.taxonomy import BASELINE

RUN_SCHEMAS = ("boundary-audit/probe/v1", "boundary-audit/crossover/v1")
"""The reports whose `runs` a crossover can read back."""
TABLE8_SCHEMA = "boundary-audit/table8/v1"
DEFAULT_TRANSPORTS = ("nested",)


@dataclass(frozen=True)
class CrossoverOptions:
    """What `boundary-audit crossover` was asked to do."""

    replies: tuple[str, ...] = ()
    """Reply files (JSONL) holding both contracts, in one file or several."""
    runs: tuple[str, ...] = ()
    """Probe or crossover JSON reports whose runs are read back instead of running replies."""
    transports: tuple[str, ...] = DEFAULT_TRANSPORTS
    """The boundary transports (N on the transport axis); `raw` is always the baseline."""
    select: str = "core"
    sandbox: str = "auto"
    jobs: int = 2
    timeout_s: float = 10.0
    bootstrap: Bootstrap = Bootstrap()
    table8: str | None = None
    """A `table8 --format json` report whose rows the HTML report shows."""
    command: str = ""


@dataclass(frozen=True)
class CrossoverPlan:
    """Checked inputs: the probe plan (replies) or the records read back (runs)."""

    options: CrossoverOptions
    transports: tuple[str, ...]
    probe: ProbePlan | None = None
    """The probe's plan when replies are to be run."""
    records: tuple[RunRecord, ...] = ()
    sandbox: str = ""
    table8: tuple[Table8Row, ...] = ()


def _transports(names: Sequence[str]) -> tuple[str, ...]:
    wanted = tuple(dict.fromkeys(n for n in names if n != BASELINE))
    if not wanted:
        raise UsageError(
            f"a crossover needs a boundary transport besides {BASELINE!r} (e.g. --transport nested)"
        )
    return wanted


def prepare_crossover(options: CrossoverOptions) -> CrossoverPlan:
    """Check every input; raise before anything runs."""
    if bool(options.replies) == bool(options.runs):
        raise UsageError("give reply files (--replies) or run reports (--runs), not both or none")
    transports = _transports(options.transports)
    table8 = read_table8(Path(options.table8)) if options.table8 else ()
    if options.runs:
        records: list[RunRecord] = []
        sandboxes: list[str] = []
        for path in options.runs:
            found, sandbox = read_runs(Path(path))
            records.extend(found)
            sandboxes.append(sandbox)
        have = {r.transport for r in records}
        missing = [t for t in (BASELINE, *transports) if t not in have]
        if missing:
            raise ProbeError(f"the runs hold no run through {missing[0]!r}")
        where = ", ".join(dict.fromkeys(sandboxes))
        return CrossoverPlan(options, transports, None, tuple(records), where, table8)
    probe = prepare_probes(
        ProbeOptions(
            replies=options.replies,
            transports=transports,
            select=options.select,
            sandbox=options.sandbox,
            jobs=options.jobs,
            timeout_s=options.timeout_s,
            command=options.command,
        )
    )
    _check_contracts(probe.reply_sets)
    return CrossoverPlan(options, transports, probe, (), "", table8)


def _check_contracts(reply_sets: Sequence[ReplySet]) -> None:
    """Some model has both contracts, and each such model the same draws under both."""
    draws: dict[str, dict[str, set[int | None]]] = {}
    for rs in reply_sets:
        for reply in rs.replies:
            who = reply.model or rs.origin
            draws.setdefault(who, {}).setdefault(reply.contract, set()).add(reply.draw)
    if not any(set(CONTRACTS) <= set(found) for found in draws.values()):
        shown = "; ".join(f"{m}: {', '.join(sorted(c))}" for m, c in sorted(draws.items()))
        raise ProbeError(
            "no model has replies under both the raw and the disclosed contract "
            f"({shown}); a crossover needs both",
            hint="generate both: `boundary-audit generate -c raw -c disclosed ...`",
        )
    for model, found in sorted(draws.items()):
        if set(CONTRACTS) <= set(found) and found["raw"] != found["disclosed"]:
            raw, disclosed = (_draws(found[c]) for c in CONTRACTS)
            raise ProbeError(
                f"{model}: the raw replies have draws [{raw}] and the disclosed ones "
                f"[{disclosed}]; the crossover pairs replies by (task, draw)"
            )


def _draws(found: set[int | None]) -> str:
    return ", ".join(
        "-" if d is None else str(d) for d in sorted(found, key=lambda d: -1 if d is None else d)
    )


def execute_crossover(plan: CrossoverPlan, *, progress: Progress | None = None) -> CrossoverReport:
    """Run the planned probes (unless the runs were read back) and build the report."""
    o = plan.options
    notes: tuple[str, ...] = ()
    if plan.probe is not None:
        with make_sandbox(o.sandbox, Limits(timeout_s=o.timeout_s)) as sandbox:
            probed = execute_probes(plan.probe, sandbox, progress=progress)
        records, where, notes = probed.records, probed.sandbox, probed.notes
        notes = notes + tuple(
            f"transport {k.transport} skipped: {k.reason}" for k in probed.skipped
        )
    else:
        records, where = plan.records, plan.sandbox
    ran = {r.transport for r in records}
    transports = tuple(t for t in plan.transports if t in ran)
    if not transports:
        raise ProbeError("no boundary transport could run here (see the notes above)")
    try:
        return build_crossover(
            records,
            transports=transports,
            bootstrap=o.bootstrap,
            tool_version=__version__,
            command=o.command,
            sandbox=where,
            notes=notes,
            table8=plan.table8,
            family_groups=family_groups(),
        )
    except MetricsInputError as exc:
        raise ProbeError(exc.message) from None


def family_groups() -> tuple[tuple[str, str], ...]:
    """(family, mechanism group) in suite order; families outside the study's groups: `other`."""
    found: dict[str, str] = {}
    for task in load_tasks("all"):
        group = CORE_FAMILIES.get(task.family)
        found.setdefault(task.family, MECHANISM_GROUPS[group] if group else "other")
    return tuple(found.items())


def run_crossover(
    options: CrossoverOptions, *, progress: Progress | None = None
) -> CrossoverReport:
    """Prepare and execute: the whole crossover in one call."""
    return execute_crossover(prepare_crossover(options), progress=progress)


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise ProbeError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProbeError(f"{path}: not a JSON {what}: {exc}") from None
    if not isinstance(data, dict):
        raise ProbeError(f"{path}: not a {what} (expected a JSON object)")
    return data


def read_runs(path: Path) -> tuple[list[RunRecord], str]:
    """The runs of a probe or crossover JSON report, and the sandbox they ran in."""
    doc = _load_json(path, "run report")
    if doc.get("schema") not in RUN_SCHEMAS:
        raise ProbeError(
            f"{path}: schema {doc.get('schema')!r} is not one of {', '.join(RUN_SCHEMAS)}"
        )
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        raise ProbeError(f"{path}: no runs")
    records = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise ProbeError(f"{path}: runs[{i}] is not an object")
        try:
            base = as_run(run, index=i)
        except MetricsInputError as exc:
            raise ProbeError(f"{path}: {exc.message}") from None
        reason = run.get("reason", "")
        records.append(
            RunRecord(
                task_id=base.task_id, family=base.family, tier=base.tier, core=base.core,
                transport=base.transport, reply_set=base.reply_set, reply_id=base.reply_id,
                draw=base.draw, model=base.model, contract=base.contract, passed=base.passed,
                reason=reason if isinstance(reason, str) else "",
            )
        )  # fmt: skip
    sandbox = doc.get("sandbox")
    return records, sandbox if isinstance(sandbox, str) else ""


def read_table8(path: Path) -> tuple[Table8Row, ...]:
    """The rows of a `table8 --format json` report."""
    doc = _load_json(path, "table8 report")
    if doc.get("schema") != TABLE8_SCHEMA:
        raise ProbeError(f"{path}: schema {doc.get('schema')!r} is not {TABLE8_SCHEMA}")
    rows = doc.get("rows")
    if not isinstance(rows, list):
        raise ProbeError(f"{path}: no rows")
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(_table8_row(row))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProbeError(f"{path}: rows[{i}] is not a table8 row ({exc})") from None
    return tuple(out)


def _table8_row(row: dict[str, Any]) -> Table8Row:
    damage = tuple(
        (
            str(m["reply_set"]),
            int(m["tasks"]),
            int(m["passed_raw"]),
            int(m["passed_boundary"]),
            float(m["damage_pp"]),
        )
        for m in row["measures"]
    )
    return Table8Row(
        system=str(row["system_name"]),
        contract=str(row["contract"]),
        anchors=tuple(str(a) for a in row["anchors"]),
        observed=str(row["observed"]),
        boundary_class=str(row["class"]),
        parse_layers=tuple(str(x) for x in row["parse_layers"]),
        damage=damage,
        fix=str(row["fix"]),
    )
