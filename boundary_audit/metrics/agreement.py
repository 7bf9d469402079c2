"""Agreement between two measurements of the same replies: an adapter and the real harness.

An adapter reproduces a system's boundary with our own transport; a real-harness driver pushes
the same replies through the system's own code (or `ssh` against the synthetic `nested`, as the
study's Table 9 does). Both record lists are paired on (reply set, task id); each pair must be
the same reply (equal `reply_id` where both record one) of the same task. The result lists every
pair whose outcome differs and the share of pairs that agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundary_audit.metrics.records import MetricsInputError, RunLike, as_runs
from boundary_audit.record import RunRecord

Key = tuple[str, str]
"""(reply set, task id)."""


@dataclass(frozen=True)
class Disagreement:
    """One reply whose outcome differs between the two measurements."""

    reply_set: str
    task_id: str
    family: str
    first_passed: bool
    second_passed: bool


@dataclass(frozen=True)
class Agreement:
    """How often two measurements of the same replies give the same outcome."""

    compared: int
    disagreements: tuple[Disagreement, ...]
    """Sorted by (reply set, task id)."""

    @property
    def agreeing(self) -> int:
        """Pairs with the same outcome."""
        return self.compared - len(self.disagreements)

    @property
    def rate(self) -> Fraction:
        """Share of pairs with the same outcome."""
        return Fraction(self.agreeing, self.compared)


def _index(runs: list[RunRecord], label: str) -> dict[Key, RunRecord]:
    indexed: dict[Key, RunRecord] = {}
    for run in runs:
        key = (run.reply_set, run.task_id)
        if key in indexed:
            raise MetricsInputError(
                f"{label} runs: task {run.task_id!r} of reply set {run.reply_set!r} appears "
                f"twice (transports {indexed[key].transport!r} and {run.transport!r})"
            )
        indexed[key] = run
    return indexed


def _check_pair(a: RunRecord, b: RunRecord) -> None:
    if a.family != b.family:
        raise MetricsInputError(
            f"task {a.task_id!r} is in family {a.family!r} in one list and {b.family!r} "
            "in the other"
        )
    if a.reply_id is not None and b.reply_id is not None and a.reply_id != b.reply_id:
        raise MetricsInputError(
            f"task {a.task_id!r} of reply set {a.reply_set!r}: the lists ran different replies "
            f"({a.reply_id!r} vs {b.reply_id!r})"
        )


def agreement(
    first: Iterable[RunLike | Mapping[str, Any]],
    second: Iterable[RunLike | Mapping[str, Any]],
    *,
    labels: tuple[str, str] = ("adapter", "harness"),
) -> Agreement:
    """Pair `first` and `second` (e.g. adapter and real-harness runs) and compare outcomes."""
    left, right = _index(as_runs(first), labels[0]), _index(as_runs(second), labels[1])
    if left.keys() != right.keys():
        only = sorted(left.keys() ^ right.keys())
        side = labels[0] if only[0] in left else labels[1]
        raise MetricsInputError(
            f"the {labels[0]} and {labels[1]} runs do not cover the same replies: "
            f"{len(only)} unpaired, e.g. task {only[0][1]!r} of reply set {only[0][0]!r} "
            f"only in the {side} runs"
        )
    if not left:
        raise MetricsInputError("no runs to compare")
    differing = []
    for key in sorted(left):
        a, b = left[key], right[key]
        _check_pair(a, b)
        if a.passed != b.passed:
            differing.append(Disagreement(a.reply_set, a.task_id, a.family, a.passed, b.passed))
    return Agreement(len(left), tuple(differing))
