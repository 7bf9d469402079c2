"""The QuoteBench study's printed tables as test data, and builders of run records for them.

The study (seed/000_a6f2c8c8f4a3f26d.txt) prints pass rates, counts and effects but not the
per-task outcomes behind them. The builders here construct run records that reproduce the
printed counts; the tests in test_metrics_*.py then check that our definitions, computed from
those records, print exactly the study's numbers. `TABLE15_FAMILIES` goes further: for each of
the eight same-window configurations it gives one per-family breakdown of the four crossover
cells that is consistent with Table 4 *and* with Table 15's effects, enumerated p values and
bootstrap intervals (the study does not publish the breakdown; any consistent one will do).
The tests in this module check the builders themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

FAMILIES = (
    "write-file", "json-writing", "git-commit", "env-passing", "heredoc-writing",
    "argv-passing", "hostile-filenames", "find-glob", "bulk-rename", "grep-count",
    "sed-replace", "field-lookup", "ssh-nested", "ssh-heredoc",
)  # fmt: skip
"""The study's 14 operation families (Table 7), in its order."""

CORE_TIERS = (0, 1, 2, 3)
HOSTILE_TIERS = (1, 2, 3)


@dataclass(frozen=True)
class RunObject:
    """A runner-style record object (metrics must accept objects as well as mappings)."""

    task_id: str
    family: str
    tier: int
    core: bool
    transport: str
    reply_set: str
    reply_id: str | None
    contract: str | None
    model: str | None
    passed: bool


def spread(total: int, *, per_family: int = 4, families: int = 14) -> list[int]:
    """`total` passes dealt round-robin over the families (each family gets at most per_family)."""
    assert 0 <= total <= per_family * families
    counts = [0] * families
    for i in range(total):
        counts[i % families] += 1
    return counts


def cell_runs(
    reply_set: str,
    transport: str,
    family_passes: Sequence[int],
    *,
    tiers: Sequence[int] = CORE_TIERS,
    contract: str | None = None,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Records of one cell: in family i, the first family_passes[i] tasks (by tier) pass."""
    assert len(family_passes) == len(FAMILIES)
    runs = []
    for family, passes in zip(FAMILIES, family_passes, strict=True):
        assert 0 <= passes <= len(tiers)
        for j, tier in enumerate(tiers):
            task = f"{family}/t{tier}"
            runs.append(
                {
                    "task_id": task, "family": family, "tier": tier, "core": True,
                    "transport": transport, "reply_set": reply_set,
                    "reply_id": f"{reply_set}:{task}", "contract": contract, "model": model,
                    "passed": j < passes,
                }
            )  # fmt: skip
    return runs


def crossover_runs(
    model: str,
    cells: Sequence[Sequence[int]],
    *,
    transport: str = "nested",
    tiers: Sequence[int] = CORE_TIERS,
) -> list[dict[str, Any]]:
    """The four cells RR, RN, NR, NN of one model from per-family pass counts of each cell."""
    rr, rn, nr, nn = cells
    raw_set, disclosed_set = f"{model}/raw", f"{model}/disclosed"
    return [
        *cell_runs(raw_set, "raw", rr, tiers=tiers, contract="raw", model=model),
        *cell_runs(raw_set, transport, rn, tiers=tiers, contract="raw", model=model),
        *cell_runs(disclosed_set, "raw", nr, tiers=tiers, contract="disclosed", model=model),
        *cell_runs(disclosed_set, transport, nn, tiers=tiers, contract="disclosed", model=model),
    ]


def counts_of(percent: str, total: int = 56) -> int:
    """The task count k with round(100·k/total, 1) == percent; asserts it is unique."""
    hits = [k for k in range(total + 1) if f"{100 * k / total:.1f}" == percent]
    assert len(hits) == 1, (percent, total, hits)
    return hits[0]


TABLE4 = {
    # model: (RR, RN, NR, NN, damage, compensation, matched gap), as printed
    "GPT-5.6-sol": ("94.6", "30.4", "55.4", "91.1", "−64.3", "+60.7", "−3.6"),
    "GPT-5.5": ("100.0", "28.6", "50.0", "89.3", "−71.4", "+60.7", "−10.7"),
    "Opus-5": ("96.4", "30.4", "42.9", "89.3", "−66.1", "+58.9", "−7.1"),
    "Gemini-3.1-Pro": ("98.2", "25.0", "33.9", "80.4", "−73.2", "+55.4", "−17.9"),
    "Gemini-3.5-Flash": ("96.4", "28.6", "67.9", "58.9", "−67.9", "+30.4", "−37.5"),
    "Opus-4.8": ("91.1", "26.8", "62.5", "57.1", "−64.3", "+30.4", "−33.9"),
    "Qwen3.5-27B": ("85.7", "30.4", "83.9", "30.4", "−55.4", "0.0", "−55.4"),
    "Gemini-3.1-Flash-Lite": ("78.6", "19.6", "80.4", "14.3", "−58.9", "−5.4", "−64.3"),
}

TABLE15 = {
    # model: ((damage effect, CI, enum p, Holm p), (compensation effect, CI, enum p, Holm p))
    "GPT-5.6-sol": (("−64.3", "[−80.4,−46.4]", ".000244", ".001465"),
                    ("+60.7", "[+46.4,+75.0]", ".000244", ".001953")),
    "GPT-5.5": (("−71.4", "[−85.7,−55.4]", ".000244", ".001465"),
                ("+60.7", "[+44.6,+75.0]", ".000244", ".001953")),
    "Opus-5": (("−66.1", "[−82.1,−50.0]", ".000244", ".001465"),
               ("+58.9", "[+41.1,+75.0]", ".000488", ".002930")),
    "Gemini-3.1-Pro": (("−73.2", "[−87.5,−58.9]", ".000122", ".000977"),
                       ("+55.4", "[+33.9,+73.2]", ".001221", ".006104")),
    "Gemini-3.5-Flash": (("−67.9", "[−82.1,−51.8]", ".000244", ".001465"),
                         ("+30.4", "[+12.5,+48.2]", ".013672", ".041016")),
    "Opus-4.8": (("−64.3", "[−80.4,−46.4]", ".000244", ".001465"),
                 ("+30.4", "[+14.3,+48.2]", ".003906", ".015625")),
    "Qwen3.5-27B": (("−55.4", "[−69.6,−41.1]", ".000244", ".001465"),
                    ("0.0", "[0.0,0.0]", "1.000000", "1.000000")),
    "Gemini-3.1-Flash-Lite": (("−58.9", "[−71.4,−48.2]", ".000122", ".000977"),
                              ("−5.4", "[−10.7,0.0]", ".250000", ".500000")),
}  # fmt: skip

TABLE15_FAMILIES: dict[str, list[tuple[int, int, int, int]]] = {
    # model: per family (in FAMILIES order), passes out of 4 in the cells (RR, RN, NR, NN)
    "GPT-5.6-sol": [(4, 0, 3, 3), (4, 0, 3, 4), (4, 0, 3, 2), (4, 0, 2, 2), (4, 0, 2, 4),
                    (4, 1, 2, 4), (3, 0, 2, 4), (4, 2, 2, 4), (3, 1, 2, 4), (4, 2, 2, 4),
                    (4, 2, 2, 4), (3, 2, 2, 4), (4, 3, 2, 4), (4, 4, 2, 4)],
    "GPT-5.5": [(4, 0, 2, 3), (4, 0, 2, 3), (4, 0, 2, 4), (4, 0, 2, 4), (4, 0, 2, 3),
                (4, 1, 2, 2), (4, 1, 2, 4), (4, 1, 2, 4), (4, 1, 2, 4), (4, 1, 2, 4),
                (4, 2, 2, 4), (4, 2, 2, 3), (4, 3, 2, 4), (4, 4, 2, 4)],
    "Opus-5": [(4, 0, 2, 4), (4, 0, 2, 3), (4, 0, 2, 3), (4, 0, 2, 4), (4, 0, 2, 3),
               (4, 1, 2, 4), (4, 1, 2, 2), (4, 2, 2, 4), (4, 2, 2, 4), (3, 1, 2, 4),
               (4, 2, 1, 4), (3, 1, 1, 4), (4, 3, 1, 4), (4, 4, 1, 3)],
    "Gemini-3.1-Pro": [(4, 0, 2, 3), (4, 0, 2, 3), (4, 0, 2, 4), (4, 0, 2, 3), (4, 0, 2, 3),
                       (4, 0, 1, 3), (4, 0, 1, 4), (4, 2, 1, 4), (4, 2, 1, 3), (4, 2, 1, 3),
                       (4, 2, 1, 3), (3, 1, 1, 4), (4, 2, 1, 4), (4, 3, 1, 1)],
    "Gemini-3.5-Flash": [(4, 0, 3, 2), (4, 0, 3, 1), (4, 0, 3, 1), (4, 0, 3, 2), (4, 0, 3, 4),
                         (4, 1, 3, 0), (4, 1, 3, 2), (4, 2, 3, 4), (4, 2, 3, 1), (4, 2, 3, 4),
                         (4, 2, 2, 1), (4, 2, 2, 3), (4, 2, 2, 4), (2, 2, 2, 4)],
    "Opus-4.8": [(4, 0, 3, 4), (4, 0, 3, 2), (4, 0, 3, 0), (4, 0, 3, 4), (4, 0, 3, 1),
                 (4, 1, 3, 2), (4, 1, 3, 1), (4, 2, 2, 3), (4, 2, 2, 3), (4, 2, 2, 4),
                 (4, 2, 2, 2), (4, 3, 2, 3), (3, 2, 2, 3), (0, 0, 2, 0)],
    "Qwen3.5-27B": [(4, 0, 4, 0), (4, 0, 4, 0), (4, 0, 4, 0), (4, 2, 4, 2), (4, 2, 4, 2),
                    (4, 2, 3, 2), (4, 2, 3, 2), (4, 2, 3, 2), (4, 2, 3, 2), (4, 2, 3, 2),
                    (4, 2, 3, 2), (3, 1, 3, 1), (1, 0, 3, 0), (0, 0, 3, 0)],
    "Gemini-3.1-Flash-Lite": [(4, 0, 4, 0), (4, 0, 4, 0), (4, 0, 4, 0), (4, 2, 3, 1),
                              (4, 2, 3, 1), (4, 2, 3, 2), (4, 2, 3, 2), (4, 2, 3, 2),
                              (2, 0, 3, 0), (2, 0, 3, 0), (2, 0, 3, 0), (2, 0, 3, 0),
                              (2, 0, 3, 0), (2, 1, 3, 0)],
}  # fmt: skip


TABLE2 = {
    # model: (control, hostile, All 56 %, hostile LOFO range %), as printed
    "GPT-5.5": ("14/14", "42/42", "100.0", "[100.0, 100.0]"),
    "Opus-5": ("14/14", "42/42", "100.0", "[100.0, 100.0]"),
    "Fable-5": ("14/14", "42/42", "100.0", "[100.0, 100.0]"),
    "GPT-5.6-sol": ("14/14", "41/42", "98.2", "[97.4, 100.0]"),
    "Opus-4.8": ("12/14", "41/42", "94.6", "[97.4, 100.0]"),
    "Gemini-3.1-Pro": ("14/14", "37/42", "91.1", "[87.2, 89.7]"),
    "Sonnet-4.6": ("9/14", "27/42", "64.3", "[61.5, 69.2]"),
    "Gemini-3.5-Flash": ("10/14", "26/42", "64.3", "[59.0, 66.7]"),
    "Haiku-4.5": ("8/14", "13/42", "37.5", "[28.2, 33.3]"),
    "Qwen3.5-27B": ("8/14", "9/42", "30.4", "[15.4, 23.1]"),
    "Qwen3.5-4B": ("5/14", "7/42", "21.4", "[10.3, 17.9]"),
    "Qwen3.5-9B": ("5/14", "5/42", "17.9", "[5.1, 12.8]"),
    "Gemini-3.1-Flash-Lite": ("6/14", "2/42", "14.3", "[2.6, 5.1]"),
}


def hostile_breakdown(total: int, fewest: int, most: int) -> list[int]:
    """Hostile passes (of 3) per family summing to `total`, with min `fewest` and max `most`."""
    counts = [fewest] * 14
    counts[0] = most
    left = total - sum(counts)
    for i in range(1, 14):
        add = min(left, most - counts[i]) if i != 13 else 0
        counts[i] += add
        left -= add
    assert left == 0 and min(counts) == fewest and max(counts) == most, (total, counts)
    return counts


def scorecard_runs(control: int, hostile: Sequence[int]) -> list[dict[str, Any]]:
    """One matched-nested cell: `control` families pass tier 0; family i passes hostile[i]."""
    controls = [1 if i < control else 0 for i in range(14)]
    runs = cell_runs("best", "nested", [0] * 14)
    for run in runs:
        i, tier = FAMILIES.index(run["family"]), run["tier"]
        run["passed"] = controls[i] == 1 if tier == 0 else tier <= hostile[i]
    return runs


def table15_runs(model: str) -> list[dict[str, Any]]:
    """The four crossover cells of `model` built from its per-family breakdown."""
    columns = list(zip(*TABLE15_FAMILIES[model], strict=True))
    return crossover_runs(model, columns)


def test_spread_deals_every_pass_once() -> None:
    assert spread(17) == [2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    assert spread(56) == [4] * 14
    assert spread(0) == [0] * 14


def test_cell_runs_pass_the_first_tasks_of_each_family() -> None:
    runs = cell_runs("r", "raw", [1] + [0] * 13, tiers=HOSTILE_TIERS)
    assert len(runs) == 42
    assert [(r["task_id"], r["passed"]) for r in runs[:4]] == [
        ("write-file/t1", True), ("write-file/t2", False), ("write-file/t3", False),
        ("json-writing/t1", False),
    ]  # fmt: skip


def test_counts_of_inverts_the_printed_percentages() -> None:
    assert counts_of("30.4") == 17
    assert counts_of("19.0", 42) == 8


def test_table15_breakdowns_reproduce_table4_cells() -> None:
    for model, printed in TABLE4.items():
        totals = [sum(col) for col in zip(*TABLE15_FAMILIES[model], strict=True)]
        assert totals == [counts_of(p) for p in printed[:4]], model
