"""Damage = pass(boundary) − pass(baseline): Tables 6, 9 and 22 of the study, flips, errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from boundary_audit.metrics import (
    UNICODE_MINUS,
    MetricsInputError,
    Outcomes,
    TaskResult,
    damage,
    damage_from_runs,
    damages,
    format_points,
)
from tests.test_metrics_study import (
    HOSTILE_TIERS,
    TABLE4,
    cell_runs,
    counts_of,
    spread,
)

TABLE9 = {
    # configuration: (raw %, ssh %, ssh damage, nested damage), as printed
    "GPT-5.6-sol": ("94.6", "30.4", "−64.3", "−64.3"),
    "GPT-5.5": ("100.0", "28.6", "−71.4", "−71.4"),
    "Opus-5": ("96.4", "30.4", "−66.1", "−66.1"),
    "Gemini-3.1-Pro": ("98.2", "26.8", "−71.4", "−73.2"),
    "Gemini-3.5-Flash": ("96.4", "28.6", "−67.9", "−67.9"),
    "Opus-4.8": ("91.1", "26.8", "−64.3", "−64.3"),
    "Qwen3.5-27B": ("85.7", "30.4", "−55.4", "−55.4"),
    "Gemini-3.1-Flash-Lite": ("78.6", "19.6", "−58.9", "−58.9"),
}

TABLE22 = {
    # configuration: (raw, correct serializer, naive embedding) passed of 56; naive damage
    "GPT-5.6-sol": (53, 53, 21, "−57.1"),
    "GPT-5.5": (56, 56, 19, "−66.1"),
    "Opus-5": (54, 54, 22, "−57.1"),
    "Opus-4.8": (51, 51, 18, "−58.9"),
    "Qwen3.5-27B": (48, 48, 19, "−51.8"),
    "Gemini-3.1-Flash-Lite": (44, 44, 8, "−64.3"),
}

TABLE6 = {
    # model: (raw, nested wrapper, temporary script) passed of 42; script gain
    "GPT-5.6-sol": (41, 8, 41, "+78.6"),
    "Opus-4.8": (40, 7, 40, "+78.6"),
    "Qwen3.5-27B": (30, 9, 30, "+50.0"),
}


def pp(value: Fraction) -> str:
    return format_points(value, minus=UNICODE_MINUS)


def test_table9_ssh_damage_and_the_one_configuration_where_it_differs() -> None:
    differs = []
    for config, (raw, ssh, ssh_damage, nested_damage) in TABLE9.items():
        rr, rn = counts_of(TABLE4[config][0]), counts_of(TABLE4[config][1])
        runs = cell_runs(config, "raw", spread(counts_of(raw)))
        runs += cell_runs(config, "ssh", spread(counts_of(ssh)))
        runs += cell_runs(config, "nested", spread(rn))
        assert counts_of(raw) == rr
        through_ssh = damage_from_runs(runs, reply_set=config, transport="ssh")
        through_nested = damage_from_runs(runs, reply_set=config, transport="nested")
        assert pp(through_ssh.effect) == ssh_damage
        assert pp(through_nested.effect) == nested_damage == TABLE4[config][4]
        if through_ssh.effect != through_nested.effect:
            differs.append(config)
    assert differs == ["Gemini-3.1-Pro"]  # "to the decimal for seven of eight configurations"


@pytest.mark.parametrize("config", sorted(TABLE22))
def test_table22_serializer_damage(config: str) -> None:
    raw, correct, naive, naive_damage = TABLE22[config]
    runs = cell_runs(config, "raw", spread(raw)) + cell_runs(
        config, "json-correct", spread(correct)
    )
    runs += cell_runs(config, "json-naive", spread(naive))
    assert pp(damage_from_runs(runs, reply_set=config, transport="json-naive").effect) == (
        naive_damage
    )
    correct_damage = damage_from_runs(runs, reply_set=config, transport="json-correct")
    assert correct_damage.effect == 0
    assert correct_damage.pass_to_fail == correct_damage.fail_to_pass == ()


@pytest.mark.parametrize("model", sorted(TABLE6))
def test_table6_script_gain_over_42_tasks(model: str) -> None:
    raw, nested, script, gain = TABLE6[model]
    runs = cell_runs(model, "nested", spread(nested, per_family=3), tiers=HOSTILE_TIERS)
    runs += cell_runs(model, "script", spread(script, per_family=3), tiers=HOSTILE_TIERS)
    runs += cell_runs(model, "raw", spread(raw, per_family=3), tiers=HOSTILE_TIERS)
    gained = damage_from_runs(
        runs, reply_set=model, transport="script", baseline_transport="nested"
    )
    assert pp(gained.effect) == gain
    assert damage_from_runs(runs, reply_set=model, transport="script").effect == 0


def _cell(transport: str, passes: dict[str, bool]) -> Outcomes:
    family = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "b3": "b"}
    results = tuple(TaskResult(t, family[t], 1, True, p) for t, p in passes.items())
    return Outcomes("oracle", transport, results)


def test_task_level_flips_and_per_family_damage() -> None:
    raw = _cell("raw", {"a1": True, "a2": True, "b1": False, "b2": True, "b3": True})
    tmux = _cell("tmux", {"a1": False, "a2": True, "b1": True, "b2": False, "b3": False})
    measured = damage(raw, tmux)
    assert measured.pass_to_fail == ("a1", "b2", "b3")
    assert measured.fail_to_pass == ("b1",)
    assert measured.differences == {"a": (-1, 0), "b": (1, -1, -1)}
    assert measured.by_family == {"a": Fraction(-1, 2), "b": Fraction(-1, 3)}
    assert measured.effect == Fraction(-5, 12)  # families weigh the same
    assert measured.task_effect == Fraction(-2, 5)
    assert measured.effect == measured.boundary.headline - measured.baseline.headline
    assert (measured.baseline.tasks.count, measured.boundary.tasks.count) == ("4/5", "2/5")


def test_cells_over_different_tasks_cannot_be_compared() -> None:
    raw = _cell("raw", {"a1": True, "a2": True, "b1": True})
    tmux = _cell("tmux", {"a1": True, "b2": True, "b3": False})
    with pytest.raises(MetricsInputError) as err:
        damage(raw, tmux)
    assert str(err.value) == (
        "cells oracle/raw and oracle/tmux do not hold the same tasks "
        "(only in the first: a2, b1; only in the second: b2, b3)"
    )


def test_a_task_in_two_families_cannot_be_paired() -> None:
    raw = Outcomes("oracle", "raw", (TaskResult("t", "a", 0, True, True),))
    nested = Outcomes("oracle", "nested", (TaskResult("t", "b", 0, True, True),))
    with pytest.raises(MetricsInputError) as err:
        damage(raw, nested)
    assert str(err.value) == "task 't' is in family 'a' in oracle/raw but 'b' in oracle/nested"


def test_damages_of_every_cell_with_a_raw_baseline() -> None:
    runs = cell_runs("oracle", "raw", spread(56)) + cell_runs("oracle", "nested", spread(20))
    runs += cell_runs("oracle", "ssh", spread(19)) + cell_runs("naive", "nested", spread(3))
    found = damages(runs)
    assert [(d.boundary.reply_set, d.boundary.transport) for d in found] == [
        ("oracle", "nested"),
        ("oracle", "ssh"),
    ]
    assert [d.effect for d in found] == [Fraction(-36, 56), Fraction(-37, 56)]
    assert len(found[0].pass_to_fail) == 36


def test_damages_without_any_baseline_pair_is_an_input_error() -> None:
    with pytest.raises(MetricsInputError) as err:
        damages(cell_runs("naive", "nested", spread(3)))
    assert str(err.value) == "no reply set ran both on 'raw' and on another transport"
