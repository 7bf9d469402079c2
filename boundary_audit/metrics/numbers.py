"""Exact numbers and the one rounding rule every printed metric uses.

Metrics are kept as exact `Fraction` proportions (17/56, not 0.30357…) until they are printed.
Percentages and percentage points are the proportion × 100, rounded **once**, at the end, to a
fixed number of decimals with round-half-away-from-zero applied to the exact rational value:

* a difference is computed from exact proportions and then rounded (RN − RR for 17/56 and 53/56
  prints −64.3; subtracting the printed 30.4 and 94.6 would give −64.2);
* rounding is symmetric in sign, so a negated effect prints as the negated text;
* there is no binary floating point anywhere, so 12.25 is a true tie and becomes 12.3.

NOTE(metrics): the study's values are k/56 and k/42 (and k/39, k/52 for leave-one-family-out);
none of those is ever a tie at one decimal, so half-even and half-away agree on every number it
prints. Half-away is chosen because it is what a reader doing the division by hand expects.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from boundary_audit.metrics.records import MetricsInputError

Number = Fraction | int
"""An exact quantity: a proportion, a difference of proportions, or a probability."""

UNICODE_MINUS = "\u2212"
"""The minus sign the study's tables use; `format_points(..., minus=UNICODE_MINUS)`."""


def round_half_away(value: Number, places: int = 1) -> Decimal:
    """`value` rounded to `places` decimals, ties away from zero, computed exactly."""
    exact = Fraction(value)
    scaled_num = abs(exact.numerator) * 10**places
    quotient, remainder = divmod(scaled_num, exact.denominator)
    if 2 * remainder >= exact.denominator:
        quotient += 1
    signed = -quotient if exact < 0 else quotient
    return Decimal(signed).scaleb(-places)


def to_points(proportion: Number) -> Fraction:
    """A proportion (or a difference of proportions) in percent / percentage points, exactly."""
    return Fraction(proportion) * 100


def percent(proportion: Number, places: int = 1) -> Decimal:
    """The proportion as a percentage rounded by the one rule: 17/56 -> Decimal('30.4')."""
    return round_half_away(to_points(proportion), places)


def format_percent(proportion: Number, places: int = 1) -> str:
    """`"30.4"` for 17/56, `"100.0"` for 1."""
    return str(percent(proportion, places))


def format_points(effect: Number, places: int = 1, *, minus: str = "-") -> str:
    """A signed effect in percentage points: `"+60.7"`, `"-64.3"`, and `"0.0"` for exactly zero.

    The sign is that of the exact value, so an effect that is negative but rounds to zero prints
    as `"-0.0"` rather than hiding its direction.
    """
    exact = Fraction(effect)
    magnitude = percent(abs(exact), places)
    if exact > 0:
        return f"+{magnitude}"
    if exact < 0:
        return f"{minus}{magnitude}"
    return str(magnitude)


def format_p_value(p: Number, places: int = 6) -> str:
    """A probability as the study prints it: `".000244"`, `".250000"`, `"1.000000"`."""
    exact = Fraction(p)
    if not 0 <= exact <= 1:
        raise MetricsInputError(f"a probability must lie in [0, 1], not {exact}")
    text = str(round_half_away(exact, places))
    return text[1:] if text.startswith("0.") else text


def format_count(passed: int, total: int) -> str:
    """`"17/56"`."""
    return f"{passed}/{total}"
