"""The 2×2 crossover against the study's Tables 4, 5, 14 and 21, and its input errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from boundary_audit.metrics import (
    UNICODE_MINUS,
    Crossover,
    MetricsInputError,
    crossover,
    crossover_from_runs,
    crossovers,
    format_percent,
    format_points,
)
from tests.test_metrics_study import (
    HOSTILE_TIERS,
    TABLE4,
    TABLE15_FAMILIES,
    cell_runs,
    counts_of,
    crossover_runs,
    spread,
    table15_runs,
)

TABLE5 = {
    # model: (RR, RN, NR, NN, damage, compensation, interaction, matched gap) over 42 tasks
    "GPT-5.6-sol": ("92.9", "19.0", "50.0", "97.6", "−73.8", "+78.6", "+121.4", "+4.8"),
    "Opus-4.8": ("92.9", "16.7", "59.5", "42.9", "−76.2", "+26.2", "+59.5", "−50.0"),
}

TABLE14 = [
    # (configuration, rung, RR, RN, NR, NN, damage, compensation, matched gap); "∗" dropped
    ("GPT-5.6-sol", "low", "98.2", "28.6", "53.6", "91.1", "−69.6", "+62.5", "−7.1"),
    ("GPT-5.6-sol", "medium", "94.6", "30.4", "48.2", "92.9", "−64.3", "+62.5", "−1.8"),
    ("GPT-5.6-sol", "high", "98.2", "32.1", "48.2", "98.2", "−66.1", "+66.1", "+0.0"),
    ("GPT-5.6-sol", "xhigh", "98.2", "30.4", "51.8", "98.2", "−67.9", "+67.9", "+0.0"),
    ("Opus-5", "low", "98.2", "28.6", "57.1", "60.7", "−69.6", "+32.1", "−37.5"),
    ("Opus-5", "medium", "100.0", "32.1", "41.1", "91.1", "−67.9", "+58.9", "−8.9"),
    ("Opus-5", "high", "96.4", "30.4", "42.9", "96.4", "−66.1", "+66.1", "+0.0"),
    ("Opus-5", "xhigh", "98.2", "32.1", "42.9", "100.0", "−66.1", "+67.9", "+1.8"),
    ("Opus-5", "max", "100.0", "32.1", "46.4", "98.2", "−67.9", "+66.1", "−1.8"),
    ("Gemini-3.1-Pro", "low", "100.0", "25.0", "32.1", "91.1", "−75.0", "+66.1", "−8.9"),
    ("Gemini-3.1-Pro", "medium", "98.2", "26.8", "41.1", "91.1", "−71.4", "+64.3", "−7.1"),
    ("Gemini-3.1-Pro", "high", "98.2", "26.8", "35.7", "91.1", "−71.4", "+64.3", "−7.1"),
    ("Fable-5", "low", "100.0", "30.4", "48.2", "71.4", "−69.6", "+41.1", "−28.6"),
    ("Fable-5", "medium", "100.0", "30.4", "48.2", "75.0", "−69.6", "+44.6", "−25.0"),
    ("Fable-5", "high", "98.2", "32.1", "42.9", "96.4", "−66.1", "+64.3", "−1.8"),
    ("Fable-5", "xhigh", "100.0", "33.9", "46.4", "92.9", "−66.1", "+58.9", "−7.1"),
    ("Fable-5", "max", "100.0", "30.4", "35.7", "100.0", "−69.6", "+69.6", "+0.0"),
    ("Gemini-3.5-Flash", "minimal", "96.4", "23.2", "75.0", "57.1", "−73.2", "+33.9", "−39.3"),
    ("Gemini-3.5-Flash", "low", "92.9", "25.0", "67.9", "58.9", "−67.9", "+33.9", "−33.9"),
    ("Gemini-3.5-Flash", "medium", "96.4", "23.2", "76.8", "64.3", "−73.2", "+41.1", "−32.1"),
    ("Gemini-3.5-Flash", "high", "96.4", "23.2", "71.4", "62.5", "−73.2", "+39.3", "−33.9"),
    ("Opus-4.8", "low", "87.5", "28.6", "69.6", "39.3", "−58.9", "+10.7", "−48.2"),
    ("Opus-4.8", "medium", "92.9", "28.6", "67.9", "48.2", "−64.3", "+19.6", "−44.6"),
    ("Opus-4.8", "high", "96.4", "33.9", "64.3", "50.0", "−62.5", "+16.1", "−46.4"),
    ("Opus-4.8", "xhigh", "98.2", "32.1", "60.7", "62.5", "−66.1", "+30.4", "−35.7"),
    ("Opus-4.8", "max", "98.2", "30.4", "44.6", "94.6", "−67.9", "+64.3", "−3.6"),
    ("Gemini-3.1-Flash-Lite", "minimal", "78.6", "19.6", "80.4", "14.3", "−58.9", "−5.4", "−64.3"),
    ("Gemini-3.1-Flash-Lite", "low", "78.6", "19.6", "80.4", "14.3", "−58.9", "−5.4", "−64.3"),
    ("Gemini-3.1-Flash-Lite", "medium", "78.6", "19.6", "80.4", "14.3", "−58.9", "−5.4", "−64.3"),
    ("Gemini-3.1-Flash-Lite", "high", "78.6", "19.6", "80.4", "14.3", "−58.9", "−5.4", "−64.3"),
]  # fmt: skip

TABLE21 = {
    # configuration: (RR, RN, NR, NN) passed of 56 on the real ssh path; ssh comp.; nested comp.
    "GPT-5.6-sol": ((53, 17, 31, 51), "+60.7", "+60.7"),
    "GPT-5.5": ((56, 16, 28, 50), "+60.7", "+60.7"),
    "Opus-5": ((54, 17, 24, 50), "+58.9", "+58.9"),
    "Opus-4.8": ((51, 15, 35, 32), "+30.4", "+30.4"),
    "Qwen3.5-27B": ((48, 17, 47, 17), "+0.0", "+0.0"),
    "Gemini-3.1-Flash-Lite": ((44, 11, 45, 10), "−1.8", "−5.4"),
}


def pp(value: Fraction) -> str:
    return format_points(value, minus=UNICODE_MINUS)


def cells_of(found: Crossover) -> tuple[str, ...]:
    return tuple(str(c.tasks) for c in (found.rr, found.rn, found.nr, found.nn))


@pytest.mark.parametrize("model", sorted(TABLE4))
def test_table4_row(model: str) -> None:
    found = crossovers(table15_runs(model), transport="nested")[model]
    effects = (pp(found.damage), pp(found.compensation), pp(found.matched_gap))
    assert cells_of(found) + effects == TABLE4[model]
    assert found.matched_gap == found.damage + found.compensation


@pytest.mark.parametrize("row", TABLE14, ids=[f"{r[0]}-{r[1]}" for r in TABLE14])
def test_table14_row(row: tuple[str, ...]) -> None:
    config, _, *cells, dmg, comp, gap = row
    runs = crossover_runs(config, [spread(counts_of(c)) for c in cells])
    found = crossover_from_runs(
        runs, raw_replies=f"{config}/raw", disclosed_replies=f"{config}/disclosed",
        transport="nested",
    )  # fmt: skip
    assert cells_of(found) == tuple(cells)
    # Table 14 prints an exact zero gap as "+0.0"; format_points prints it unsigned.
    gap_text = pp(found.matched_gap) if found.matched_gap else "+0.0"
    assert (pp(found.damage), pp(found.compensation), gap_text) == (dmg, comp, gap)


@pytest.mark.parametrize("model", sorted(TABLE5))
def test_table5_row_over_42_hostile_tasks(model: str) -> None:
    *cells, dmg, comp, interaction, gap = TABLE5[model]
    counts = [spread(counts_of(c, 42), per_family=3) for c in cells]
    runs = crossover_runs(model, counts, tiers=HOSTILE_TIERS)
    found = crossovers(runs, transport="nested")[model]
    assert cells_of(found) == tuple(cells)
    assert found.rr.tasks.total == 42
    assert (pp(found.damage), pp(found.compensation), pp(found.interaction)) == (
        dmg, comp, interaction,
    )  # fmt: skip
    assert pp(found.matched_gap) == gap


def test_table5_interaction_is_exact() -> None:
    runs = crossover_runs(
        "GPT-5.6-sol", [spread(k, per_family=3) for k in (39, 8, 21, 41)], tiers=HOSTILE_TIERS
    )
    found = crossovers(runs, transport="nested")["GPT-5.6-sol"]
    assert found.interaction == Fraction((41 - 21) - (8 - 39), 42) == Fraction(17, 14)


@pytest.mark.parametrize("config", sorted(TABLE21))
def test_table21_ssh_compensation(config: str) -> None:
    counts, ssh_comp, nested_comp = TABLE21[config]
    runs = crossover_runs(config, [spread(k) for k in counts], transport="ssh")
    found = crossovers(runs, transport="ssh")
    comp = found[config].compensation
    assert (pp(comp) if comp else "+0.0") == ssh_comp
    assert nested_comp.replace("+0.0", "0.0") == TABLE4[config][5]


def test_components_are_per_task_and_paired() -> None:
    runs = table15_runs("GPT-5.6-sol")
    found = crossovers(runs, transport="nested")["GPT-5.6-sol"]
    rr, rn, nr, nn = TABLE15_FAMILIES["GPT-5.6-sol"][0]  # write-file: 4, 0, 3, 3
    assert found.components["damage"]["write-file"] == (-1, -1, -1, -1)
    assert found.components["compensation"]["write-file"] == (1, 1, 1, 0)
    assert found.components["matched_gap"]["write-file"] == (0, 0, 0, -1)
    assert found.components["interaction"]["write-file"] == (1, 1, 1, 1)
    assert sum(found.components["damage"]["write-file"]) == rn - rr
    assert sum(found.components["compensation"]["write-file"]) == nn - rn
    assert format_percent(found.nr.headline) == "55.4" and nr == 3


def test_crossovers_skip_models_with_one_contract() -> None:
    runs = table15_runs("Opus-5") + cell_runs(
        "lonely/raw", "raw", spread(5), contract="raw", model="lonely"
    )
    assert list(crossovers(runs, transport="nested")) == ["Opus-5"]


def test_two_reply_sets_under_one_contract_are_ambiguous() -> None:
    runs = table15_runs("Opus-5") + cell_runs(
        "Opus-5/raw-again", "raw", spread(5), contract="raw", model="Opus-5"
    )
    with pytest.raises(MetricsInputError) as err:
        crossovers(runs, transport="nested")
    assert str(err.value) == (
        "model 'Opus-5' has 2 raw reply sets (Opus-5/raw, Opus-5/raw-again); "
        "name the pair with crossover_from_runs"
    )


def test_no_model_with_both_contracts_is_an_input_error() -> None:
    runs = cell_runs("x/raw", "raw", spread(5), contract="raw", model="x")
    with pytest.raises(MetricsInputError, match=r"^no model has both a raw and a disclosed"):
        crossovers(runs, transport="nested")


def test_missing_boundary_cell_names_what_exists() -> None:
    runs = [r for r in table15_runs("Opus-5") if r["transport"] == "raw"]
    with pytest.raises(MetricsInputError) as err:
        crossovers(runs, transport="nested")
    assert str(err.value) == (
        "no runs for reply set 'Opus-5/raw' through transport 'nested' "
        "(have: Opus-5/disclosed/raw, Opus-5/raw/raw)"
    )


def test_cells_in_the_wrong_order_are_rejected() -> None:
    from boundary_audit.metrics import cells

    grouped = cells(table15_runs("Opus-5"))
    rr, rn = grouped[("Opus-5/raw", "raw")], grouped[("Opus-5/raw", "nested")]
    nr, nn = grouped[("Opus-5/disclosed", "raw")], grouped[("Opus-5/disclosed", "nested")]
    assert crossover(rr, rn, nr, nn).damage == Fraction(-37, 56)
    with pytest.raises(MetricsInputError) as err:
        crossover(rr, nr, rn, nn)
    assert str(err.value) == (
        "a crossover needs two reply sets × two transports in the order RR, RN, NR, NN "
        "(got Opus-5/raw/raw, Opus-5/disclosed/raw, Opus-5/raw/nested, Opus-5/disclosed/nested)"
    )


def test_a_transport_pair_must_replay_the_same_reply() -> None:
    runs = table15_runs("Opus-5")
    for run in runs:
        if (
            run["reply_set"] == "Opus-5/disclosed"
            and run["transport"] == "nested"
            and (run["task_id"] == "sed-replace/t2")
        ):
            run["reply_id"] = "another"
    with pytest.raises(MetricsInputError) as err:
        crossovers(runs, transport="nested")
    assert str(err.value) == (
        "task 'sed-replace/t2': raw and nested ran different replies "
        "('Opus-5/disclosed:sed-replace/t2' vs 'another') of reply set 'Opus-5/disclosed'; "
        "a transport comparison needs the same reply replayed"
    )
