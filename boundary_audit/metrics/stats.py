"""The study's statistics (its Table 15): family-sign tests, Holm adjustment, LOFO ranges.

All inputs are `FamilyValues` (family -> per-task integers: outcomes or paired differences), and
the effect of a family is the mean of its task values. Probabilities are exact `Fraction`s.

* `family_sign_test`: exact two-sided binomial sign test over the families with a nonzero effect:
  p = min(1, 2 · P(X ≤ min(k, n − k))), X ~ Binomial(n, 1/2), k = families with a negative effect.
* `family_sign_flip_test`: the *enumerated* sign test the study's "Enum. p" column reports: under
  H0 each nonzero family effect is equally likely to carry either sign; p is the share of the 2^n
  sign assignments whose |sum of family effects| is at least the observed |sum|. It equals the
  binomial test whenever every nonzero family has the same sign (2/2^n), and differs otherwise
  (e.g. Table 15's .001221 = 20/2^14 and .013672 = 224/2^14 are not binomial tail values).
* `holm`: Holm's step-down adjustment, returned in input order (monotone in rank, capped at 1).
* `lofo_range`: the effect recomputed with each family left out in turn; its min and max.

Bootstrap confidence intervals live in `metrics.bootstrap` and are re-exported here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb, isnan, lcm
from typing import TypeVar

from boundary_audit.metrics.bootstrap import (
    Interval,
    Scheme,
    bootstrap_ci,
    exact_bootstrap_ci,
)
from boundary_audit.metrics.families import FamilyValues, family_means, family_weighted_mean
from boundary_audit.metrics.records import MetricsInputError

__all__ = [
    "Interval",
    "LofoRange",
    "Scheme",
    "SignTest",
    "bootstrap_ci",
    "exact_bootstrap_ci",
    "family_sign_flip_test",
    "family_sign_test",
    "holm",
    "lofo_range",
]

P = TypeVar("P", float, Fraction)


@dataclass(frozen=True)
class SignTest:
    """The outcome of a family-sign test."""

    negative: int
    """Families whose effect is below zero."""
    positive: int
    """Families whose effect is above zero."""
    zero: int
    """Families with no effect: dropped from the test."""
    p: Fraction
    """Exact two-sided p value."""

    @property
    def families(self) -> int:
        """n: the families that entered the test (nonzero effect)."""
        return self.negative + self.positive


def _signs(values: FamilyValues) -> tuple[dict[str, Fraction], int, int, int]:
    means = family_means(values)
    if not means:
        raise MetricsInputError("a sign test needs at least one family")
    negative = sum(1 for m in means.values() if m < 0)
    positive = sum(1 for m in means.values() if m > 0)
    return means, negative, positive, len(means) - negative - positive


def family_sign_test(values: FamilyValues) -> SignTest:
    """Exact two-sided binomial sign test over the families' mean effects (zeros dropped)."""
    _, negative, positive, zero = _signs(values)
    n = negative + positive
    tail = sum(comb(n, j) for j in range(min(negative, positive) + 1))
    p = min(Fraction(1), Fraction(2 * tail, 2**n))
    return SignTest(negative, positive, zero, p)


def family_sign_flip_test(values: FamilyValues) -> SignTest:
    """Exact two-sided sign-flip test, enumerating all 2^n signs of the nonzero family effects."""
    means, negative, positive, zero = _signs(values)
    nonzero = [m for m in means.values() if m != 0]
    scale = lcm(*(m.denominator for m in nonzero)) if nonzero else 1
    magnitudes = [abs(int(m * scale)) for m in nonzero]
    sums: Counter[int] = Counter({0: 1})
    for a in magnitudes:
        step: Counter[int] = Counter()
        for total, ways in sums.items():
            step[total + a] += ways
            step[total - a] += ways
        sums = step
    observed = abs(sum(int(m * scale) for m in nonzero))
    extreme = sum(ways for total, ways in sums.items() if abs(total) >= observed)
    return SignTest(negative, positive, zero, Fraction(extreme, 2 ** len(nonzero)))


def holm(p_values: Sequence[P]) -> list[P]:
    """Holm step-down adjusted p values, in the order given.

    The i-th smallest p (0-based rank r) becomes max over ranks ≤ r of min(1, (m − r) · p), so the
    adjusted values never fall below the raw ones, never decrease with rank, and never exceed 1.
    Floats stay floats and Fractions stay Fractions.
    """
    for p in p_values:
        if (isinstance(p, float) and isnan(p)) or not 0 <= p <= 1:
            raise MetricsInputError(f"not a p value: {p!r}")
    m = len(p_values)
    adjusted: list[P] = list(p_values)
    running: P | None = None
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        raw = p_values[index]
        scaled = (m - rank) * raw
        capped = scaled if scaled <= 1 else type(raw)(1)
        running = capped if running is None or capped > running else running
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class LofoRange:
    """An effect recomputed with each family left out in turn."""

    low: Fraction
    high: Fraction
    without: Mapping[str, Fraction]
    """Family left out -> the effect over the remaining families."""


def lofo_range(
    values: FamilyValues,
    statistic: Callable[[FamilyValues], Fraction] = family_weighted_mean,
) -> LofoRange:
    """Leave-one-family-out range of `statistic` (default: the family-weighted mean)."""
    if len(values) < 2:
        raise MetricsInputError("a leave-one-family-out range needs at least two families")
    without = {
        left_out: statistic({f: v for f, v in values.items() if f != left_out})
        for left_out in sorted(values)
    }
    return LofoRange(min(without.values()), max(without.values()), without)
