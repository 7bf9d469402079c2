"""From what a fleet run collected (the store's units) to the `FleetReport`.

Everything here reads the store through `FleetRun`, in plan order: targets in the plan's
order, reply sets in the plan's order, records in the runner's order. The crossover of a
scope (one target's derived paths; the named transports) is computed when its records hold
a model's replies under both the raw and the disclosed contract; a scope without such a pair
is left out with a note, never an error.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from boundary_audit import __version__
from boundary_audit.fleet.run import FleetRun
from boundary_audit.fleet.store import Store
from boundary_audit.fleet.worker import read_record
from boundary_audit.metrics.records import MetricsInputError
from boundary_audit.pipelines.crossover import family_groups
from boundary_audit.pipelines.matrix import measure
from boundary_audit.record import RunRecord
from boundary_audit.results import fleet as rf
from boundary_audit.results.crossover import CONTRACTS, CrossoverReport, build_crossover
from boundary_audit.results.probe import multi_model_sets, summary_set


def _has_pair(records: Sequence[RunRecord]) -> bool:
    seen: dict[str, set[str]] = {}
    for r in records:
        if r.contract in CONTRACTS:
            seen.setdefault(r.model or r.reply_set, set()).add(r.contract)
    return any(set(CONTRACTS) <= found for found in seen.values())


def _crossover(
    records: Sequence[RunRecord], transports: Sequence[str], sandbox: str
) -> CrossoverReport | None:
    if not transports or not _has_pair(records):
        return None
    try:
        return build_crossover(
            records,
            transports=transports,
            tool_version=__version__,
            sandbox=sandbox,
            family_groups=family_groups(),
        )
    except MetricsInputError:
        return None


def _target_records(store: Store, keys: Sequence[str]) -> list[RunRecord]:
    out = []
    for key in keys:
        got = store.get(key)
        if got is not None and "record" in got:
            out.append(read_record(got["record"]))
    return out


def _failures(run: FleetRun) -> tuple[tuple[str, int, str], ...]:
    kinds: Counter[str] = Counter()
    first: dict[str, str] = {}
    for key, why in sorted(run.failed.items()):
        kind = key.split(":", 1)[0] if ":" in key else "run"
        kinds[kind] += 1
        first.setdefault(kind, why.removeprefix("error: "))
    return tuple((k, kinds[k], first[k]) for k in ("scan", "run", "target") if k in kinds)


def build_report(
    run: FleetRun, store: Store, previous: Mapping[str, Any] | None = None
) -> rf.FleetReport:
    """The fleet report of `run`, diffed against `previous` (a fleet JSON document)."""
    plan = run.plan
    names = [rs.name for rs in run.reply_sets]
    targets: list[rf.TargetRow] = []
    crossovers: list[tuple[str, CrossoverReport]] = []
    notes: list[str] = []
    for t in plan.targets:
        doc = run.targets.get(t.name, {})
        if "scan_json" not in doc:
            error = str(doc.get("error", "not reported"))
            targets.append(rf.TargetRow(t.name, t.repo, "", 0, 0, (), 0, error=error))
            continue
        row = rf.target_row(t.name, t.repo, doc["scan_json"], names)
        targets.append(row)
        labels = list(dict.fromkeys(b.path.split(" +")[0] for b in row.boundaries if b.routes))
        x = _crossover(_target_records(store, doc.get("runs", ())), labels, run.sandbox)
        if x is not None:
            crossovers.append((t.name, x))
    # A file of several models is one set per contract and draw; its cells are per model
    # (`FILE#raw:MODEL`), as `probe` labels them.
    multi = multi_model_sets(run.shared)
    cells = [replace(r, reply_set=summary_set(r, multi)) for r in run.shared]
    cell_names = sorted(
        dict.fromkeys(r.reply_set for r in cells),
        key=lambda c: names.index(c.rsplit(":", 1)[0] if c not in names else c),
    )
    named = tuple(
        rf.NamedRow(label, tuple(measure(cells, label, n) for n in cell_names))
        for label in plan.named
    )
    if plan.named:
        x = _crossover(run.shared, list(plan.named), run.sandbox)
        if x is not None:
            crossovers.append(("named", x))
    if any(r.contract in CONTRACTS for r in run.shared) and not crossovers:
        notes.append("no crossover: no model has replies under both the raw and disclosed contract")
    current = rf.snapshot(targets)
    before = rf.snapshot_of_document(previous) if previous is not None else None
    measured = {t.name for t in targets if not t.error}
    return rf.FleetReport(
        tool_version=__version__,
        plan=plan.name,
        command=shlex.join(["boundary-audit", "fleet", plan.path.name]),
        sandbox=run.sandbox,
        tasks=len(run.tasks),
        reply_sets=tuple(names),
        transports=tuple(plan.transports),
        targets=tuple(targets),
        named=named,
        crossovers=tuple(crossovers),
        diff=rf.diff(before, current, measured),
        units=rf.UnitCounts(run.total, run.done, len(run.failed)),
        failures=_failures(run),
        notes=tuple(notes),
    )
