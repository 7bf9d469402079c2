"""The dynamic columns: push the task suite through raw and through every boundary path.

One run of the parallel runner covers the whole matrix: every selected task, every reply set,
through `raw` (the baseline, `bash -c R`) and through each path's `AdapterTransport`. Damage
is measured on the core tasks, as the study measures it (family-weighted, in points, with the
metrics stage's rounding); boundary-family tasks outside the core are reported by name when
they pass raw and break through the path. Probes run per path in their own sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from boundary_audit.metrics import cell, damage, round_half_away, to_points
from boundary_audit.pipelines.runner import plan_cells, run_cells
from boundary_audit.probes import Fingerprint, Probe, fingerprint
from boundary_audit.progress import Progress
from boundary_audit.record import RunRecord, SkippedTransport
from boundary_audit.results.table8 import FamilyDamage, Measure
from boundary_audit.sandbox.interface import Sandbox
from boundary_audit.tasks import ReplySet, Task
from boundary_audit.taxonomy import BASELINE
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport


@dataclass(frozen=True)
class Matrix:
    """Every run record of one table, and the paths that could not run in the sandbox."""

    records: tuple[RunRecord, ...]
    skipped: tuple[SkippedTransport, ...]


def run_matrix(
    tasks: Sequence[Task],
    reply_sets: Sequence[ReplySet],
    paths: Sequence[Transport],
    sandbox: Sandbox,
    *,
    jobs: int = 2,
    progress: Progress | None = None,
) -> Matrix:
    """Run (reply set x [raw, *paths] x task) once, in parallel, deterministically ordered."""
    baseline = make_transport(BASELINE)
    cells, skipped = plan_cells(tasks, reply_sets, [baseline, *paths], sandbox)
    try:
        records = run_cells(cells, sandbox, jobs=jobs, progress=progress)
    finally:
        for transport in (baseline, *paths):
            transport.close()
    return Matrix(records, tuple(skipped))


REASON_LIMIT = 160


_ELAPSED = re.compile(r"timed out after [0-9.]+s")


def short_reason(reason: str) -> str:
    """The validator's reason without what varies between identical runs: the byte excerpts
    (a broken reply can print `date` or a temp path into a file) and the elapsed time of a
    timeout. What differed, not how."""
    first = _ELAPSED.sub("timed out", reason.splitlines()[0] if reason else "")
    cut = first.find(": expected ")
    kept = first if cut < 0 else first[:cut]
    return kept if len(kept) <= REASON_LIMIT else kept[: REASON_LIMIT - 1] + "…"


def _points(value: object) -> float:
    return float(round_half_away(to_points(value)))  # type: ignore[arg-type]


def measure(records: Sequence[RunRecord], label: str, reply_set: str) -> Measure:
    """Raw versus the path `label` for one reply set.

    Damage is measured over the core tasks among `records` (over all of them when none is
    core); the other tasks that pass raw and break through the path are listed by name. A
    task whose run could not be carried out on either side (reason `error: ...`) is left out
    of both pass counts and of the damage, and counted in `errors` (the first reason named);
    with no task left the measure has `tasks == 0` and no damage figure.
    """
    mine = [r for r in records if r.reply_set == reply_set and r.transport in (BASELINE, label)]
    errored = [r for r in mine if r.errored]
    dropped = {r.task_id for r in errored}
    usable = [r for r in mine if r.task_id not in dropped]
    has_core = any(r.core for r in mine)
    core = [r for r in usable if r.core] if has_core else usable
    first_error = next(
        (r for r in errored if r.transport == label), errored[0] if errored else None
    )
    error = f"{first_error.transport}: {first_error.reason}" if first_error else ""
    present = {r.transport for r in core}
    if not {BASELINE, label} <= present:
        return Measure(reply_set, 0, 0, 0, 0.0, errors=len(errored), error=error)
    base = cell(core, reply_set=reply_set, transport=BASELINE)
    through = cell(core, reply_set=reply_set, transport=label)
    dmg = damage(base, through)
    families = sorted(
        (FamilyDamage(f, _points(v)) for f, v in dmg.by_family.items() if v != 0),
        key=lambda fd: (fd.points, fd.family),
    )
    reasons = {
        r.task_id: short_reason(r.reason) for r in usable if r.transport == label and not r.passed
    }
    raw_pass = {r.task_id for r in usable if r.transport == BASELINE and r.passed}
    scoped = {r.task_id for r in core}
    extra = [r for r in usable if r.transport == label and r.task_id not in scoped]
    extra_broken = sorted(r.task_id for r in extra if not r.passed and r.task_id in raw_pass)
    broken = tuple(dmg.pass_to_fail)
    return Measure(
        reply_set=reply_set,
        tasks=dmg.baseline.tasks.total,
        passed_raw=dmg.baseline.tasks.passed,
        passed_boundary=dmg.boundary.tasks.passed,
        damage_pp=_points(dmg.effect),
        families=tuple(families),
        broken=broken,
        fixed=tuple(dmg.fail_to_pass),
        boundary_broken=tuple(extra_broken),
        errors=len(errored),
        reasons={t: reasons[t] for t in (*broken, *extra_broken)},
        error=error,
        boundary_tasks=len({r.task_id for r in extra}),
    )


def fingerprints(
    paths: Sequence[Transport],
    sandbox: Sandbox,
    probes: Sequence[Probe],
    *,
    jobs: int = 2,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Fingerprint]:
    """Path label -> its probe facts (paths the sandbox cannot run are left out)."""
    out: dict[str, Fingerprint] = {}
    for path in paths:
        if path.supports(sandbox) is None:
            out[path.label] = fingerprint(path, sandbox, probes, jobs=jobs, progress=progress)
    return out
