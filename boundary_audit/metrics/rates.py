"""Pass rates per (reply set, transport): overall, per family, plain and family-weighted.

A `PassRate` carries the counts (so a report can print "17/56") and two exact means:
`tasks.value` (passed / tasks) and `family_weighted` (mean of the per-family rates). Reports use
the family-weighted mean — `PassRate.headline` — because the study weights its 14 operation
families equally (Table 7); with four tasks in every family both equal k/56.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundary_audit.metrics.families import outcome_values
from boundary_audit.metrics.numbers import format_count, format_percent
from boundary_audit.metrics.records import MetricsInputError, Outcomes, RunLike, cells


@dataclass(frozen=True)
class Rate:
    """`passed` out of `total` tasks."""

    passed: int
    total: int

    def __post_init__(self) -> None:
        if self.total <= 0 or not 0 <= self.passed <= self.total:
            raise MetricsInputError(f"not a pass count: {self.passed}/{self.total}")

    @property
    def value(self) -> Fraction:
        """The exact proportion passed."""
        return Fraction(self.passed, self.total)

    @property
    def count(self) -> str:
        """`"17/56"`."""
        return format_count(self.passed, self.total)

    def __str__(self) -> str:
        """The percentage to one decimal: `"30.4"`."""
        return format_percent(self.value)


@dataclass(frozen=True)
class PassRate:
    """The pass rate of one cell."""

    reply_set: str
    transport: str
    tasks: Rate
    """All tasks pooled (the plain task mean)."""
    by_family: Mapping[str, Rate]
    """Family -> its own rate, in sorted family order."""

    @property
    def family_weighted(self) -> Fraction:
        """Mean of the per-family rates: each family weighs the same."""
        return sum((r.value for r in self.by_family.values()), Fraction(0)) / len(self.by_family)

    @property
    def headline(self) -> Fraction:
        """The number reports print: the family-weighted rate."""
        return self.family_weighted


def pass_rate(outcomes: Outcomes) -> PassRate:
    """The pass rate of one cell; a cell without tasks is an input error."""
    if not outcomes.results:
        raise MetricsInputError(
            f"cell {outcomes.reply_set}/{outcomes.transport} has no tasks to rate"
        )
    values = outcome_values(outcomes)
    by_family = {family: Rate(sum(v), len(v)) for family, v in values.items()}
    passed = sum(r.passed for r in by_family.values())
    return PassRate(outcomes.reply_set, outcomes.transport, Rate(passed, len(outcomes)), by_family)


def pass_rates(records: Iterable[RunLike | Mapping[str, Any]]) -> list[PassRate]:
    """The pass rate of every (reply set, transport) cell in `records`, sorted by that key."""
    return [pass_rate(outcomes) for outcomes in cells(records).values()]
