"""Per-family task values, and the two means every metric is built from.

The statistics work on `FamilyValues`: for each operation family, one integer per task — an
outcome (1 passed, 0 failed) or a paired difference of outcomes on the same task (−1, 0, +1).
Two means are defined over them:

* the **task mean**: all task values pooled, sum / count;
* the **family-weighted mean**: the mean of the per-family means, so each family counts once
  whatever its size ("Benchmark analyses weight the 14 operation families equally", study
  Table 7). Reports use this one. On the 56-task core (14 families × 4 tasks) the two are equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from boundary_audit.metrics.records import MetricsInputError, Outcomes

FamilyValues = Mapping[str, Sequence[int]]
"""Family -> one integer per task (an outcome 0/1, or a paired difference −1/0/+1)."""


def outcome_values(outcomes: Outcomes) -> dict[str, tuple[int, ...]]:
    """Family -> 1/0 per task of one cell, families and tasks in sorted order."""
    return {
        family: tuple(int(r.passed) for r in results)
        for family, results in outcomes.by_family().items()
    }


def paired_differences(before: Outcomes, after: Outcomes) -> dict[str, tuple[int, ...]]:
    """Family -> `after − before` per task (−1, 0, +1), pairing the two cells task by task.

    Both cells must hold the same tasks, each in the same family; otherwise the pairing (and any
    effect computed from it) would be meaningless, so it is an input error naming the tasks.
    """
    check_same_tasks(before, after)
    first = before.by_task
    groups: dict[str, list[int]] = {}
    for result in after:
        groups.setdefault(result.family, []).append(
            int(result.passed) - int(first[result.task_id].passed)
        )
    return {family: tuple(groups[family]) for family in sorted(groups)}


def check_same_tasks(*cells: Outcomes) -> None:
    """Raise `MetricsInputError` unless all cells hold the same task ids in the same families."""
    reference = cells[0]
    ref = {r.task_id: r.family for r in reference}
    for other in cells[1:]:
        mine = {r.task_id: r.family for r in other}
        missing, extra = sorted(ref.keys() - mine.keys()), sorted(mine.keys() - ref.keys())
        if missing or extra:
            raise MetricsInputError(
                f"cells {_label(reference)} and {_label(other)} do not hold the same tasks "
                f"(only in the first: {_some(missing)}; only in the second: {_some(extra)})"
            )
        moved = sorted(t for t in ref if ref[t] != mine[t])
        if moved:
            raise MetricsInputError(
                f"task {moved[0]!r} is in family {ref[moved[0]]!r} in {_label(reference)} "
                f"but {mine[moved[0]]!r} in {_label(other)}"
            )


def _label(outcomes: Outcomes) -> str:
    return f"{outcomes.reply_set}/{outcomes.transport}"


def _some(items: list[str], limit: int = 5) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def family_means(values: FamilyValues) -> dict[str, Fraction]:
    """Family -> exact mean of its task values; an empty family is an input error."""
    means: dict[str, Fraction] = {}
    for family in sorted(values):
        tasks = values[family]
        if not tasks:
            raise MetricsInputError(f"family {family!r} has no tasks")
        means[family] = Fraction(sum(tasks), len(tasks))
    return means


def family_weighted_mean(values: FamilyValues) -> Fraction:
    """Mean of the per-family means (each family weighs the same)."""
    means = family_means(values)
    if not means:
        raise MetricsInputError("no tasks to average")
    return sum(means.values(), Fraction(0)) / len(means)


def task_mean(values: FamilyValues) -> Fraction:
    """Mean over all task values pooled (each task weighs the same)."""
    total = sum(len(tasks) for tasks in values.values())
    if total == 0:
        raise MetricsInputError("no tasks to average")
    return Fraction(sum(sum(tasks) for tasks in values.values()), total)
