"""Statistics against the study's Table 15 (sign tests, Holm, bootstrap) and Table 2 (LOFO)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from boundary_audit.metrics import (
    UNICODE_MINUS,
    Interval,
    MetricsInputError,
    Scheme,
    bootstrap_ci,
    cell,
    crossovers,
    exact_bootstrap_ci,
    family_sign_flip_test,
    family_sign_test,
    format_p_value,
    format_points,
    holm,
    lofo_range,
    outcome_values,
)
from tests.test_metrics_study import (
    TABLE2,
    TABLE15,
    counts_of,
    hostile_breakdown,
    scorecard_runs,
    table15_runs,
)

MODELS = list(TABLE15)  # the study's row order
COLUMNS = ("damage", "compensation")  # "Fixed-reply transport", "Contract-conditioned comp."


def pp(value: Fraction) -> str:
    return format_points(value, minus=UNICODE_MINUS)


def ci_text(interval: Interval) -> str:
    return f"[{pp(interval.low)},{pp(interval.high)}]"


def family_values(signs: list[int], per_family: int = 4) -> dict[str, list[int]]:
    """Family i holds one task of value signs[i] and per_family − 1 zeros."""
    return {f"f{i:02d}": [s] + [0] * (per_family - 1) for i, s in enumerate(signs)}


def test_all_14_families_negative() -> None:
    result = family_sign_test(family_values([-1] * 14))
    assert (result.negative, result.positive, result.zero, result.families) == (14, 0, 0, 14)
    assert result.p == Fraction(2, 2**14)
    assert format_p_value(result.p) == ".000122"


def test_13_nonzero_families_all_negative() -> None:
    result = family_sign_test(family_values([-1] * 13 + [0]))
    assert (result.families, result.zero, result.p) == (13, 1, Fraction(2, 2**13))
    assert format_p_value(result.p) == ".000244"


def test_no_nonzero_family_gives_one() -> None:
    assert family_sign_test(family_values([0] * 14)).p == 1
    assert family_sign_flip_test(family_values([0] * 14)).p == 1


def test_three_of_three_negative() -> None:
    result = family_sign_test(family_values([-1, -1, -1] + [0] * 11))
    assert result.p == Fraction(1, 4) and format_p_value(result.p) == ".250000"


def test_binomial_tail_with_mixed_signs() -> None:
    # n = 13, k = 1: 2 · (C(13,0) + C(13,1)) / 2^13
    result = family_sign_test(family_values([1] * 12 + [-1, 0]))
    assert (result.negative, result.positive, result.p) == (1, 12, Fraction(28, 2**13))
    assert family_sign_test(family_values([1, -1])).p == 1  # 2 · 3/4 capped at 1


def test_family_effect_is_the_mean_of_its_tasks() -> None:
    # The family {+1, −1, −1, 0} has mean −1/4: one negative family, whatever the task count.
    values = {"a": [1, -1, -1, 0], "b": [1, -1, 0, 0]}
    result = family_sign_test(values)
    assert (result.negative, result.positive, result.zero) == (1, 0, 1)


def test_sign_flip_agrees_with_binomial_when_signs_agree_and_not_otherwise() -> None:
    same = family_values([-1] * 9 + [0] * 5)
    assert family_sign_flip_test(same).p == family_sign_test(same).p == Fraction(2, 2**9)
    # Family effects 1, 1/4, −1/4 (in quarters 4, 1, −1; observed sum 4). Of the 8 sign
    # assignments, ±4±1±1 reaches |sum| ≥ 4 in 6 (all but +4−1−1 and −4+1+1).
    values = {"a": [1, 1, 1, 1], "b": [1, 0, 0, 0], "c": [-1, 0, 0, 0]}
    assert family_sign_flip_test(values).p == Fraction(6, 8)
    assert family_sign_test(values).p == 1


@pytest.mark.parametrize("model", MODELS)
def test_table15_effects_intervals_and_enumerated_p(model: str) -> None:
    found = crossovers(table15_runs(model), transport="nested")[model]
    for column, printed in zip(COLUMNS, TABLE15[model], strict=True):
        effect, interval, enum_p, _ = printed
        values = found.components[column]
        assert pp(getattr(found, column)) == effect
        assert format_p_value(family_sign_flip_test(values).p) == enum_p
        assert ci_text(exact_bootstrap_ci(values)) == interval
        assert ci_text(bootstrap_ci(values, seed=0)) == interval


def test_table15_holm_column_from_exact_p_values() -> None:
    for index, column in enumerate(COLUMNS):
        exact = []
        for model in MODELS:
            found = crossovers(table15_runs(model), transport="nested")[model]
            exact.append(family_sign_flip_test(found.components[column]).p)
        printed = [format_p_value(p) for p in holm(exact)]
        assert printed == [TABLE15[m][index][3] for m in MODELS]


def test_table15_holm_column_from_the_printed_enumerated_p_values() -> None:
    # Every enumerated p over 14 families is a multiple of 2^-14, and six decimals identify the
    # multiple; Holm on those exact values reproduces the printed column.
    for index in range(2):
        printed = [TABLE15[m][index][2] for m in MODELS]
        exact = [Fraction(round(Fraction(p) * 2**14), 2**14) for p in printed]
        assert [format_p_value(p) for p in exact] == printed
        adjusted = [format_p_value(p) for p in holm(exact)]
        assert adjusted == [TABLE15[m][index][3] for m in MODELS]


def test_holm_on_the_rounded_decimals_misses_the_printed_column() -> None:
    # 6 × .000244 = .001464, but the study prints 6 × 4/2^14 = .00146484… as .001465.
    rounded = [float(TABLE15[m][0][2]) for m in MODELS]
    assert f"{holm(rounded)[0]:.6f}" == "0.001464"
    assert TABLE15[MODELS[0]][0][3] == ".001465"


def test_two_printed_p_values_are_not_binomial_sign_test_values() -> None:
    # Gemini-3.1-Pro compensation (.001221 = 20/2^14) and Gemini-3.5-Flash compensation
    # (.013672 = 224/2^14): no binomial sign test over ≤ 14 families yields them.
    from math import comb

    binomial = {
        min(Fraction(1), Fraction(2 * sum(comb(n, j) for j in range(k + 1)), 2**n))
        for n in range(15)
        for k in range(n // 2 + 1)
    }
    assert Fraction(20, 2**14) not in binomial and Fraction(224, 2**14) not in binomial
    for model, expected in (("Gemini-3.1-Pro", ".001221"), ("Gemini-3.5-Flash", ".013672")):
        found = crossovers(table15_runs(model), transport="nested")[model]
        values = found.components["compensation"]
        assert format_p_value(family_sign_flip_test(values).p) == expected
        assert format_p_value(family_sign_test(values).p) != expected


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([Fraction(1, 2), Fraction(1, 100)]) == [Fraction(1, 2), Fraction(1, 50)]
    assert holm([Fraction(3, 4), Fraction(1, 2)]) == [Fraction(1), Fraction(1)]
    assert holm([0.2]) == [0.2]
    assert holm([]) == []
    assert all(isinstance(p, Fraction) for p in holm([Fraction(9, 10), Fraction(1, 10)]))


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan")])
def test_holm_rejects_non_probabilities(bad: float) -> None:
    with pytest.raises(MetricsInputError, match=r"^not a p value: "):
        holm([0.1, bad])


@pytest.mark.parametrize("model", sorted(TABLE2))
def test_table2_hostile_lofo_range(model: str) -> None:
    control, hostile, _, printed = TABLE2[model]
    low, high = (counts_of(x, 39) for x in printed.strip("[]").split(", "))
    k = int(hostile.split("/")[0])
    runs = scorecard_runs(int(control.split("/")[0]), hostile_breakdown(k, k - high, k - low))
    hostile_cell = cell(runs, reply_set="best", transport="nested").subset(tiers={1, 2, 3})
    found = lofo_range(outcome_values(hostile_cell))
    assert f"[{pp(found.low)}, {pp(found.high)}]".replace("+", "") == printed
    assert len(found.without) == 14


def test_lofo_by_hand_and_with_another_statistic() -> None:
    values = {"a": [1, 1], "b": [0, 0, 0, 1], "c": [0]}
    found = lofo_range(values)
    assert found.without == {"a": Fraction(1, 8), "b": Fraction(1, 2), "c": Fraction(5, 8)}
    assert (found.low, found.high) == (Fraction(1, 8), Fraction(5, 8))
    with pytest.raises(MetricsInputError, match="at least two families"):
        lofo_range({"a": [1]})


def test_exact_bootstrap_by_hand() -> None:
    # Families {1} and {0}: resampling two families gives means 1, 1/2, 1/2, 0.
    values = {"a": [1], "b": [0]}
    assert exact_bootstrap_ci(values) == Interval(Fraction(0), Fraction(1), Fraction(95, 100))
    half = exact_bootstrap_ci(values, level=Fraction(1, 2))
    assert (half.low, half.high) == (Fraction(0), Fraction(1, 2))
    assert Fraction(1, 2) in half and Fraction(3, 4) not in half and 0.25 not in half
    tasks = exact_bootstrap_ci(values, scheme=Scheme.TASKS_WITHIN_FAMILIES)
    assert (tasks.low, tasks.high) == (Fraction(1, 2), Fraction(1, 2))  # nothing varies


def test_seeded_bootstrap_is_deterministic_and_tracks_the_exact_one() -> None:
    values = {f"f{i}": [1 if j < i % 5 else 0 for j in range(4)] for i in range(14)}
    first = bootstrap_ci(values, seed=7, resamples=2000)
    assert first == bootstrap_ci(values, seed=7, resamples=2000)
    for scheme in Scheme:
        exact = exact_bootstrap_ci(values, scheme=scheme)
        sampled = bootstrap_ci(values, scheme=scheme)
        assert abs(sampled.low - exact.low) <= Fraction(1, 56)
        assert abs(sampled.high - exact.high) <= Fraction(1, 56)


def test_within_family_resampling_is_narrower_than_table15() -> None:
    found = crossovers(table15_runs("GPT-5.6-sol"), transport="nested")["GPT-5.6-sol"]
    values = found.components["damage"]
    families = exact_bootstrap_ci(values)
    tasks = exact_bootstrap_ci(values, scheme=Scheme.TASKS_WITHIN_FAMILIES)
    assert families.low < tasks.low and tasks.high < families.high


def test_bootstrap_rejects_bad_arguments() -> None:
    values = {"a": [1], "b": [0]}
    with pytest.raises(MetricsInputError, match=r"^resamples must be a positive integer, not 0$"):
        bootstrap_ci(values, resamples=0)
    with pytest.raises(MetricsInputError, match=r"^a confidence level must lie strictly"):
        bootstrap_ci(values, level=1)
    with pytest.raises(MetricsInputError, match=r"^family 'a' has no tasks$"):
        exact_bootstrap_ci({"a": [], "b": [0]})
    assert bootstrap_ci(values, level=0.5, resamples=10).level == Fraction(1, 2)


def test_percentile_is_the_ceil_q_b_th_smallest_resample() -> None:
    # The documented rule, replayed by hand: families in sorted order, k draws per resample
    # from random.Random(seed).choices, statistic = mean of the drawn family means.
    import random

    values = {"a": [1], "b": [1, 0], "c": [1, 0, 0], "d": [1, 0, 0, 0, 0], "e": [1] + [0] * 6}
    means = [Fraction(1), Fraction(1, 2), Fraction(1, 3), Fraction(1, 5), Fraction(1, 7)]
    rng = random.Random(2)
    stats = sorted(sum(rng.choices(means, k=5), Fraction(0)) / 5 for _ in range(40))
    assert len(set(stats[2:5])) == len(set(stats[34:37])) == 3  # neighbours differ: rank matters
    found = bootstrap_ci(values, resamples=40, seed=2, level=Fraction(80, 100))
    assert (found.low, found.high) == (stats[4 - 1], stats[36 - 1])  # ceil(.1·40), ceil(.9·40)
