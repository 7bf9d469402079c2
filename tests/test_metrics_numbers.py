"""The one rounding rule and the formatters, against the study's printed numbers."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from boundary_audit.errors import ExitCode
from boundary_audit.metrics import (
    UNICODE_MINUS,
    MetricsInputError,
    format_count,
    format_p_value,
    format_percent,
    format_points,
    percent,
    round_half_away,
    to_points,
)

PRINTED_OF_56 = {
    0: "0.0", 8: "14.3", 11: "19.6", 14: "25.0", 15: "26.8", 16: "28.6", 17: "30.4",
    19: "33.9", 24: "42.9", 31: "55.4", 32: "57.1", 33: "58.9", 35: "62.5", 38: "67.9",
    44: "78.6", 45: "80.4", 47: "83.9", 48: "85.7", 50: "89.3", 51: "91.1", 53: "94.6",
    54: "96.4", 55: "98.2", 56: "100.0",
}  # fmt: skip
"""k -> the study's printed percentage for k/56 (Tables 4, 9, 14)."""

PRINTED_OF_42 = {7: "16.7", 8: "19.0", 18: "42.9", 21: "50.0", 25: "59.5", 39: "92.9", 41: "97.6"}
"""k -> the study's printed percentage for k/42 (Table 5)."""


@pytest.mark.parametrize(("k", "printed"), sorted(PRINTED_OF_56.items()))
def test_percent_of_56_matches_the_study(k: int, printed: str) -> None:
    assert format_percent(Fraction(k, 56)) == printed


@pytest.mark.parametrize(("k", "printed"), sorted(PRINTED_OF_42.items()))
def test_percent_of_42_matches_the_study(k: int, printed: str) -> None:
    assert format_percent(Fraction(k, 42)) == printed


def test_percent_is_a_decimal_with_one_place() -> None:
    assert percent(Fraction(17, 56)) == Decimal("30.4")
    assert str(percent(Fraction(1))) == "100.0"
    assert to_points(Fraction(17, 56)) == Fraction(425, 14)


def test_differences_are_rounded_once_from_exact_values() -> None:
    # RN − RR of GPT-5.6-sol: 17/56 − 53/56; the printed cells would give −64.2.
    assert format_points(Fraction(17, 56) - Fraction(53, 56)) == "-64.3"
    assert Decimal("30.4") - Decimal("94.6") == Decimal("-64.2")


def test_ties_round_half_away_from_zero() -> None:
    assert round_half_away(Fraction(1225, 100)) == Decimal("12.3")  # half-even would say 12.2
    assert round_half_away(Fraction(-1225, 100)) == Decimal("-12.3")
    assert round_half_away(Fraction(1235, 100)) == Decimal("12.4")
    assert round_half_away(Fraction(5, 2), 0) == Decimal("3")
    assert round_half_away(Fraction(1, 3), 3) == Decimal("0.333")
    assert format_percent(Fraction(1, 16)) == "6.3"


@pytest.mark.parametrize("total", [56, 42, 52, 39])
def test_the_study_denominators_never_produce_a_tie(total: int) -> None:
    # So half-even and half-away agree on every number the study prints (docs/metrics.md).
    for k in range(-total, total + 1):
        tenths = Fraction(1000 * k, total)  # the percentage in units of 0.1
        assert (tenths - tenths.numerator // tenths.denominator) != Fraction(1, 2), (k, total)


def test_format_points_signs() -> None:
    assert format_points(Fraction(34, 56)) == "+60.7"
    assert format_points(Fraction(-36, 56)) == "-64.3"
    assert format_points(Fraction(-36, 56), minus=UNICODE_MINUS) == "\u221264.3"
    assert format_points(0) == "0.0"
    assert format_points(Fraction(-1, 10_000)) == "-0.0"
    assert format_points(Fraction(1, 10_000)) == "+0.0"
    assert format_points(Fraction(2, 42), places=2) == "+4.76"


def test_format_p_value_as_the_study_prints_it() -> None:
    assert format_p_value(Fraction(2, 2**14)) == ".000122"
    assert format_p_value(Fraction(4, 2**14)) == ".000244"
    assert format_p_value(Fraction(1, 4)) == ".250000"
    assert format_p_value(1) == "1.000000"
    assert format_p_value(0) == ".000000"
    assert format_p_value(Fraction(128, 2**14)) == ".007813"  # 0.0078125: a tie, away from zero


def test_format_p_value_rejects_a_non_probability() -> None:
    with pytest.raises(MetricsInputError, match=r"^a probability must lie in \[0, 1\], not 3/2$"):
        format_p_value(Fraction(3, 2))
    assert MetricsInputError.exit_code is ExitCode.INPUT


def test_format_count() -> None:
    assert format_count(17, 56) == "17/56"
