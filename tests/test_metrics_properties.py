"""Properties every input must satisfy: zero damage, crossover identities, Holm, sign tests."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from boundary_audit.metrics import (
    Outcomes,
    TaskResult,
    bootstrap_ci,
    crossover,
    damage,
    exact_bootstrap_ci,
    family_means,
    family_sign_flip_test,
    family_sign_test,
    family_weighted_mean,
    format_points,
    holm,
    lofo_range,
)

FAMILY_NAMES = [f"fam{i:02d}" for i in range(14)]

outcome_vectors = st.lists(
    st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=14
)  # family -> outcomes per task

family_values = st.lists(
    st.lists(st.integers(-1, 1), min_size=1, max_size=5), min_size=1, max_size=14
).map(lambda fams: {FAMILY_NAMES[i]: v for i, v in enumerate(fams)})

p_values = st.lists(
    st.fractions(min_value=0, max_value=1, max_denominator=10**6), min_size=0, max_size=16
)


def outcomes(reply_set: str, transport: str, families: list[list[bool]]) -> Outcomes:
    results = tuple(
        TaskResult(f"{FAMILY_NAMES[f]}/t{t}", FAMILY_NAMES[f], t, True, passed)
        for f, tasks in enumerate(families)
        for t, passed in enumerate(tasks)
    )
    return Outcomes(reply_set, transport, results)


def reshaped(shape: list[list[bool]], flat: list[bool]) -> list[list[bool]]:
    out, i = [], 0
    for tasks in shape:
        out.append(flat[i : i + len(tasks)])
        i += len(tasks)
    return out


@given(outcome_vectors)
def test_damage_of_identical_outcomes_is_zero(families: list[list[bool]]) -> None:
    found = damage(outcomes("r", "raw", families), outcomes("r", "script", families))
    assert found.effect == found.task_effect == 0
    assert set(found.by_family.values()) == {Fraction(0)}
    assert found.pass_to_fail == found.fail_to_pass == ()


@given(outcome_vectors, st.data())
def test_crossover_identities(shape: list[list[bool]], data: st.DataObject) -> None:
    size = sum(len(tasks) for tasks in shape)
    flats = [data.draw(st.lists(st.booleans(), min_size=size, max_size=size)) for _ in range(4)]
    rr, rn, nr, nn = (reshaped(shape, flat) for flat in flats)
    found = crossover(
        outcomes("raw", "raw", rr),
        outcomes("raw", "nested", rn),
        outcomes("disclosed", "raw", nr),
        outcomes("disclosed", "nested", nn),
    )
    cells = [c.headline for c in (found.rr, found.rn, found.nr, found.nn)]
    assert found.matched_gap == found.damage + found.compensation
    assert found.damage == cells[1] - cells[0]
    assert found.compensation == cells[3] - cells[1]
    assert found.interaction == (cells[3] - cells[2]) - (cells[1] - cells[0])


@given(p_values)
def test_holm_never_decreases_and_stays_monotone_and_capped(ps: list[Fraction]) -> None:
    adjusted = holm(ps)
    assert len(adjusted) == len(ps)
    assert all(raw <= adj <= 1 for raw, adj in zip(ps, adjusted, strict=True))
    ranked = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adjusted[a] <= adjusted[b] for a, b in zip(ranked, ranked[1:], strict=False))


@given(family_values)
def test_sign_tests_are_symmetric(values: dict[str, list[int]]) -> None:
    negated = {family: [-x for x in tasks] for family, tasks in values.items()}
    for test in (family_sign_test, family_sign_flip_test):
        result, mirrored = test(values), test(negated)
        assert result.p == mirrored.p
        assert (result.negative, result.positive) == (mirrored.positive, mirrored.negative)
        assert 0 < result.p <= 1


@given(family_values)
def test_sign_flip_equals_binomial_when_all_nonzero_families_agree(
    values: dict[str, list[int]],
) -> None:
    means = family_means(values)
    if all(m >= 0 for m in means.values()) or all(m <= 0 for m in means.values()):
        assert family_sign_flip_test(values).p == family_sign_test(values).p


@given(family_values)
def test_lofo_brackets_the_family_weighted_mean(values: dict[str, list[int]]) -> None:
    if len(values) < 2:
        return
    found = lofo_range(values)
    assert found.low <= family_weighted_mean(values) <= found.high


@settings(max_examples=30, deadline=None)
@given(family_values, st.integers(0, 2**32))
def test_bootstrap_interval_lies_between_the_extreme_family_means(
    values: dict[str, list[int]], seed: int
) -> None:
    means = family_means(values).values()
    for interval in (bootstrap_ci(values, seed=seed, resamples=200), exact_bootstrap_ci(values)):
        assert min(means) <= interval.low <= interval.high <= max(means)


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=1))
def test_points_format_is_symmetric_in_sign(x: Fraction) -> None:
    assert format_points(-x) == "-" + format_points(x)[1:]
