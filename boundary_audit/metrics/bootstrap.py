"""Percentile bootstrap confidence intervals of a family-weighted effect.

The statistic is the family-weighted mean of `FamilyValues` (per-task outcomes or paired
differences). Two resampling schemes:

* `Scheme.FAMILIES` (default): draw as many families as there are, with replacement, each
  bringing its whole task vector; the statistic is the mean of the drawn family means. Families
  are the study's unit of analysis (its sign test is over families), and this scheme reproduces
  every interval printed in its Table 15 (see docs/metrics.md).
* `Scheme.TASKS_WITHIN_FAMILIES`: keep every family, redraw its tasks with replacement from its
  own tasks (a stratified bootstrap). Usually narrower: it ignores between-family variation.

The interval is the percentile interval: with the B resampled statistics sorted, the q-quantile
is the ceil(q·B)-th smallest (the inverse empirical CDF), at q = (1 − level)/2 and (1 + level)/2.
`bootstrap_ci` draws B resamples with `random.Random(seed)`, so a given input, seed and B always
give the same interval. `exact_bootstrap_ci` computes the same quantiles from the exact
bootstrap distribution (all resamples, weighted), which is what `bootstrap_ci` estimates.
Integer arithmetic throughout: task values are scaled to a common denominator once.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from math import ceil, lcm

from boundary_audit.metrics.families import FamilyValues, family_means
from boundary_audit.metrics.records import MetricsInputError

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_LEVEL = Fraction(95, 100)


class Scheme(StrEnum):
    """What a bootstrap resample redraws."""

    FAMILIES = "families"
    TASKS_WITHIN_FAMILIES = "tasks-within-families"


@dataclass(frozen=True)
class Interval:
    """A confidence interval [low, high] at `level`."""

    low: Fraction
    high: Fraction
    level: Fraction

    def __contains__(self, value: object) -> bool:
        """Whether an exact number lies in [low, high]."""
        return isinstance(value, Fraction | int) and self.low <= value <= self.high


@dataclass(frozen=True)
class _Scaled:
    """Task values × L / family size, so every statistic is an integer total / (families · L)."""

    denominator: int
    tasks: tuple[tuple[int, ...], ...]

    @property
    def families(self) -> tuple[int, ...]:
        """Each family's sum in the common unit (its mean × L)."""
        return tuple(sum(t) for t in self.tasks)


def _scaled(values: FamilyValues) -> _Scaled:
    family_means(values)  # validates: no empty family
    if not values:
        raise MetricsInputError("a bootstrap needs at least one family")
    unit = lcm(*(len(v) for v in values.values()))
    tasks = tuple(tuple(x * (unit // len(v)) for x in v) for _, v in sorted(values.items()))
    return _Scaled(len(tasks) * unit, tasks)


def _level(level: Fraction | float) -> Fraction:
    exact = Fraction(str(level)) if isinstance(level, float) else Fraction(level)
    if not 0 < exact < 1:
        raise MetricsInputError(f"a confidence level must lie strictly between 0 and 1: {level}")
    return exact


def _quantile_ranks(level: Fraction, count: int) -> tuple[int, int]:
    """1-based ranks of the lower and upper percentile among `count` ordered outcomes."""
    low, high = (1 - level) / 2, (1 + level) / 2
    return max(1, ceil(low * count)), max(1, ceil(high * count))


def bootstrap_ci(
    values: FamilyValues,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: Fraction | float = DEFAULT_LEVEL,
    scheme: Scheme = Scheme.FAMILIES,
) -> Interval:
    """Seeded percentile bootstrap interval of the family-weighted mean of `values`."""
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsInputError(f"resamples must be a positive integer, not {resamples!r}")
    exact_level = _level(level)
    scaled = _scaled(values)
    rng = random.Random(seed)
    if scheme is Scheme.FAMILIES:
        pool, k = scaled.families, len(scaled.tasks)
        totals = sorted(sum(rng.choices(pool, k=k)) for _ in range(resamples))
    else:
        totals = sorted(
            sum(sum(rng.choices(t, k=len(t))) for t in scaled.tasks) for _ in range(resamples)
        )
    low, high = _quantile_ranks(exact_level, resamples)
    d = scaled.denominator
    return Interval(Fraction(totals[low - 1], d), Fraction(totals[high - 1], d), exact_level)


def exact_bootstrap_ci(
    values: FamilyValues,
    *,
    level: Fraction | float = DEFAULT_LEVEL,
    scheme: Scheme = Scheme.FAMILIES,
) -> Interval:
    """The percentile interval of the exact bootstrap distribution (no sampling error)."""
    exact_level = _level(level)
    scaled = _scaled(values)
    if scheme is Scheme.FAMILIES:
        distribution = _sum_of_draws(Counter(scaled.families), len(scaled.tasks))
    else:
        distribution = Counter({0: 1})
        for tasks in scaled.tasks:
            distribution = _convolve(distribution, _sum_of_draws(Counter(tasks), len(tasks)))
    ordered = sorted(distribution.items())
    weight = sum(distribution.values())
    d = scaled.denominator
    low_q, high_q = (1 - exact_level) / 2, (1 + exact_level) / 2
    return Interval(
        Fraction(_weighted_quantile(ordered, weight, low_q), d),
        Fraction(_weighted_quantile(ordered, weight, high_q), d),
        exact_level,
    )


def _convolve(a: Counter[int], b: Counter[int]) -> Counter[int]:
    out: Counter[int] = Counter()
    for x, wx in a.items():
        for y, wy in b.items():
            out[x + y] += wx * wy
    return out


def _sum_of_draws(pool: Counter[int], draws: int) -> Counter[int]:
    """Distribution (weights) of the sum of `draws` draws with replacement from `pool`."""
    total: Counter[int] = Counter({0: 1})
    for _ in range(draws):
        total = _convolve(total, pool)
    return total


def _weighted_quantile(ordered: list[tuple[int, int]], weight: int, q: Fraction) -> int:
    """Smallest value whose cumulative weight reaches q · weight (at least the first value)."""
    seen = 0
    for value, w in ordered:
        seen += w
        if seen >= q * weight:
            return value
    return ordered[-1][0]
