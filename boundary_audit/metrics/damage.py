"""Damage: what a boundary transport does to the same replies, relative to a baseline transport.

damage = pass(boundary) − pass(baseline), as an exact proportion (× 100 = percentage points;
negative means the boundary destroyed commands). It is computed overall (family-weighted, and as
a plain task mean), per family, and task by task: which tasks flipped pass→fail and fail→pass
(the study's PF/FP counts, Table 17). The two cells are paired by task id and must hold the same
tasks. The baseline is normally `raw` (`bash -c R`), the study's reference path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundary_audit.metrics.families import (
    family_means,
    family_weighted_mean,
    paired_differences,
    task_mean,
)
from boundary_audit.metrics.rates import PassRate, pass_rate
from boundary_audit.metrics.records import MetricsInputError, Outcomes, RunLike, cell, cells
from boundary_audit.taxonomy import BASELINE

"""The transport damage is measured against unless told otherwise."""


@dataclass(frozen=True)
class Damage:
    """The effect of moving one reply set from the baseline transport to a boundary transport."""

    baseline: PassRate
    boundary: PassRate
    differences: Mapping[str, tuple[int, ...]]
    """Family -> boundary − baseline per task (−1, 0, +1): the input to `metrics.stats`."""
    pass_to_fail: tuple[str, ...]
    """Task ids that passed on the baseline and fail through the boundary (sorted)."""
    fail_to_pass: tuple[str, ...]
    """Task ids that failed on the baseline and pass through the boundary (sorted)."""

    @property
    def effect(self) -> Fraction:
        """Family-weighted damage (the number reports print); equals boundary − baseline."""
        return family_weighted_mean(self.differences)

    @property
    def task_effect(self) -> Fraction:
        """Damage as a plain task mean."""
        return task_mean(self.differences)

    @property
    def by_family(self) -> dict[str, Fraction]:
        """Family -> damage within that family."""
        return family_means(self.differences)


def damage(baseline: Outcomes, boundary: Outcomes) -> Damage:
    """Damage of `boundary` relative to `baseline`, paired task by task."""
    differences = paired_differences(baseline, boundary)
    before = baseline.by_task
    flips: dict[int, list[str]] = {-1: [], 1: []}
    for result in boundary:
        change = int(result.passed) - int(before[result.task_id].passed)
        if change:
            flips[change].append(result.task_id)
    return Damage(
        baseline=pass_rate(baseline),
        boundary=pass_rate(boundary),
        differences=differences,
        pass_to_fail=tuple(flips[-1]),
        fail_to_pass=tuple(flips[1]),
    )


def damage_from_runs(
    records: Iterable[RunLike | Mapping[str, Any]],
    *,
    reply_set: str,
    transport: str,
    baseline_transport: str = BASELINE,
) -> Damage:
    """Damage of `transport` on `reply_set`, against `baseline_transport` on the same replies."""
    runs = list(records)
    base = cell(runs, reply_set=reply_set, transport=baseline_transport)
    return damage(base, cell(runs, reply_set=reply_set, transport=transport))


def damages(
    records: Iterable[RunLike | Mapping[str, Any]],
    *,
    baseline_transport: str = BASELINE,
) -> list[Damage]:
    """Damage of every non-baseline cell whose reply set also ran on the baseline transport.

    Sorted by (reply set, transport). Reply sets that never ran on the baseline are skipped:
    there is nothing to measure their damage against. No measurable pair is an input error.
    """
    grouped = cells(records)
    found = [
        damage(grouped[(reply_set, baseline_transport)], outcomes)
        for (reply_set, transport), outcomes in grouped.items()
        if transport != baseline_transport and (reply_set, baseline_transport) in grouped
    ]
    if not found:
        raise MetricsInputError(
            f"no reply set ran both on {baseline_transport!r} and on another transport"
        )
    return found
