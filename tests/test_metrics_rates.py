"""Pass rates: counts, plain and family-weighted means, against the study's Table 2."""

from __future__ import annotations

from fractions import Fraction

import pytest

from boundary_audit.metrics import (
    MetricsInputError,
    Outcomes,
    Rate,
    TaskResult,
    cell,
    format_percent,
    pass_rate,
    pass_rates,
)
from tests.test_metrics_study import (
    FAMILIES,
    TABLE2,
    cell_runs,
    counts_of,
    hostile_breakdown,
    scorecard_runs,
    spread,
)


def _table2_outcomes(model: str) -> Outcomes:
    control, hostile, _, lofo = TABLE2[model]
    low, high = (counts_of(x, 39) for x in lofo.strip("[]").split(", "))
    k = int(hostile.split("/")[0])
    families = hostile_breakdown(k, fewest=k - high, most=k - low)
    runs = scorecard_runs(int(control.split("/")[0]), families)
    return cell(runs, reply_set="best", transport="nested")


@pytest.mark.parametrize("model", sorted(TABLE2))
def test_table2_control_hostile_and_all56(model: str) -> None:
    control, hostile, all56, _ = TABLE2[model]
    outcomes = _table2_outcomes(model)
    assert pass_rate(outcomes.subset(tiers={0})).tasks.count == control
    assert pass_rate(outcomes.subset(tiers={1, 2, 3})).tasks.count == hostile
    rate = pass_rate(outcomes)
    assert str(rate.tasks) == all56
    assert format_percent(rate.headline) == all56  # equal families: weighted == plain


def test_rate_counts_and_percent() -> None:
    rate = Rate(17, 56)
    assert (rate.value, rate.count, str(rate)) == (Fraction(17, 56), "17/56", "30.4")


@pytest.mark.parametrize(("passed", "total"), [(0, 0), (5, 4), (-1, 4)])
def test_an_impossible_count_is_an_input_error(passed: int, total: int) -> None:
    with pytest.raises(MetricsInputError, match=rf"^not a pass count: {passed}/{total}$"):
        Rate(passed, total)


def test_family_weighted_and_plain_means_differ_when_families_differ_in_size() -> None:
    outcomes = Outcomes(
        "oracle",
        "argv-shlex",
        (
            TaskResult("a/1", "a", 0, True, True),
            TaskResult("b/1", "b", 0, False, False),
            TaskResult("b/2", "b", 1, False, False),
            TaskResult("b/3", "b", 2, False, False),
        ),
    )
    rate = pass_rate(outcomes)
    assert rate.tasks.value == Fraction(1, 4)
    assert rate.family_weighted == rate.headline == Fraction(1, 2)
    assert {f: r.count for f, r in rate.by_family.items()} == {"a": "1/1", "b": "0/3"}


def test_pass_rate_per_family_of_a_core_cell() -> None:
    runs = cell_runs("gpt/raw", "raw", spread(53))
    rate = pass_rate(cell(runs, reply_set="gpt/raw", transport="raw"))
    assert list(rate.by_family) == sorted(FAMILIES)
    assert {r.count for r in rate.by_family.values()} == {"4/4", "3/4"}
    assert rate.by_family["ssh-heredoc"].count == "3/4"
    assert rate.by_family["write-file"].count == "4/4"
    assert str(rate.tasks) == "94.6"


def test_pass_rates_rate_every_cell_in_key_order() -> None:
    runs = cell_runs("naive", "raw", spread(10)) + cell_runs("oracle", "nested", spread(20))
    runs += cell_runs("oracle", "raw", spread(56))
    rates = pass_rates(runs)
    assert [(r.reply_set, r.transport, r.tasks.count) for r in rates] == [
        ("naive", "raw", "10/56"),
        ("oracle", "nested", "20/56"),
        ("oracle", "raw", "56/56"),
    ]


def test_an_empty_cell_cannot_be_rated() -> None:
    with pytest.raises(MetricsInputError, match=r"^cell oracle/raw has no tasks to rate$"):
        pass_rate(Outcomes("oracle", "raw", ()))
