"""Draws: several replies of one model to the same task under one contract, and their spread.

A model asked k times per task (`generate --draws k`) gives k reply sets of one contract, one
per draw, each with one reply per task. Each draw's cell has its own pass rate; `draw_spread`
reports them together: the rate of every draw, their mean (which is the rate of all draws
pooled when every draw holds the same tasks) and the range (lowest, highest, and the spread
between them, in exact proportions). The crossover pairs its cells by (task, draw): `pooled`
turns the cells of several draws into one cell whose units are (task, draw) pairs, named
`TASK#dN`, so that every paired metric (damage, the crossover, the statistics) treats each
draw's reply as its own paired unit within the task's family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from boundary_audit.metrics.families import check_same_tasks
from boundary_audit.metrics.rates import pass_rate
from boundary_audit.metrics.records import MetricsInputError, Outcomes, TaskResult


@dataclass(frozen=True)
class DrawSpread:
    """Pass rates of one (reply set, transport) across draws."""

    rates: Mapping[int, Fraction]
    """Draw -> that draw's family-weighted pass rate, in draw order."""
    passed: Mapping[int, tuple[int, int]]
    """Draw -> (tasks passed, tasks)."""

    @property
    def mean(self) -> Fraction:
        """The mean of the draws' rates."""
        return sum(self.rates.values(), Fraction(0)) / len(self.rates)

    @property
    def low(self) -> Fraction:
        """The lowest draw's rate."""
        return min(self.rates.values())

    @property
    def high(self) -> Fraction:
        """The highest draw's rate."""
        return max(self.rates.values())

    @property
    def spread(self) -> Fraction:
        """high − low (× 100 = percentage points)."""
        return self.high - self.low


def draw_spread(cells: Mapping[int, Outcomes]) -> DrawSpread:
    """The spread of the draws' pass rates; every draw's cell must hold the same tasks."""
    if not cells:
        raise MetricsInputError("a spread across draws needs at least one draw")
    ordered = [cells[d] for d in sorted(cells)]
    check_same_tasks(*ordered)
    rates = {d: pass_rate(cells[d]) for d in sorted(cells)}
    return DrawSpread(
        rates={d: r.headline for d, r in rates.items()},
        passed={d: (r.tasks.passed, r.tasks.total) for d, r in rates.items()},
    )


def unit_id(task_id: str, draw: int | None) -> str:
    """The paired unit of a task's reply in one draw: `TASK#dN` (the task id without a draw)."""
    return task_id if draw is None else f"{task_id}#d{draw}"


def pooled(cells: Mapping[int | None, Outcomes], *, reply_set: str, transport: str) -> Outcomes:
    """One cell of (task, draw) units from the cells of several draws of one reply set.

    Every draw must hold the same tasks; a single draw `None` gives the cell back unchanged.
    """
    if not cells:
        raise MetricsInputError(f"no draws to pool for {reply_set}/{transport}")
    keys = sorted(cells, key=lambda d: -1 if d is None else d)
    if None in cells and len(cells) > 1:
        raise MetricsInputError(
            f"{reply_set}/{transport}: replies with and without a draw cannot be pooled"
        )
    check_same_tasks(*(cells[d] for d in keys))
    if keys == [None]:
        only = cells[None]
        return Outcomes(reply_set, transport, only.results)
    results = tuple(
        TaskResult(unit_id(r.task_id, d), r.family, r.tier, r.core, r.passed, r.reply_id)
        for d in keys
        for r in cells[d]
    )
    return Outcomes(reply_set, transport, results)
