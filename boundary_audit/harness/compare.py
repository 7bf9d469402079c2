"""Run the same replies through a real harness and through our model of it, and pair them up.

The model is the system's adapter (issue 5) once it exists, or any transport named with
`--against` (e.g. `session` for SWE-agent, `session-pipe` for LangChain, `script-sh` for
AutoGen). Both runs use the same tasks, reply sets and sandbox backend. Every (reply set, task)
whose pass/fail differs is a `Difference`, carrying both runs (reason, harness status, final
work-dir picture), and is matched against the written explanations of `explain.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from boundary_audit.harness.explain import Explanation, explain
from boundary_audit.harness.suite import CellRun, Progress, no_progress, run_suite
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.metrics.agreement import agreement
from boundary_audit.sandbox.interface import Sandbox
from boundary_audit.tasks import ReplySet, Task
from boundary_audit.transports.interface import Transport


@dataclass(frozen=True)
class Difference:
    """One reply whose outcome differs between the real harness and the model of it."""

    harness: CellRun
    against: CellRun
    explanation: Explanation | None
    """The written explanation or fix proposal that covers it, if any."""

    @property
    def key(self) -> tuple[str, str]:
        """(reply set, task id)."""
        return (self.harness.reply_set, self.harness.task_id)


@dataclass(frozen=True)
class Comparison:
    """The two measurements of one system and where they disagree."""

    harness_runs: tuple[CellRun, ...]
    against_runs: tuple[CellRun, ...]
    differences: tuple[Difference, ...]

    @property
    def against(self) -> str:
        """The label of what the harness was compared with."""
        return self.against_runs[0].transport

    @property
    def compared(self) -> int:
        """How many replies were run through both."""
        return len(self.harness_runs)

    @property
    def agreement_rate(self) -> Fraction:
        """Share of replies with the same outcome on both."""
        return Fraction(self.compared - len(self.differences), self.compared)

    @property
    def unexplained(self) -> tuple[Difference, ...]:
        """Differences no written explanation covers."""
        return tuple(d for d in self.differences if d.explanation is None)


def by_explanation(
    diffs: Sequence[Difference],
) -> list[tuple[Explanation | None, list[tuple[str, str]]]]:
    """Differences grouped by the explanation covering them (keys in order), unexplained last."""
    groups: dict[str | None, tuple[Explanation | None, list[tuple[str, str]]]] = {}
    for d in diffs:
        key = d.explanation.id if d.explanation else None
        groups.setdefault(key, (d.explanation, []))[1].append(d.key)
    named = [groups[k] for k in groups if k is not None]
    return named + ([groups[None]] if None in groups else [])


def pair(
    harness_runs: Sequence[CellRun],
    against_runs: Sequence[CellRun],
    explanations: Sequence[Explanation] = (),
) -> Comparison:
    """Pair two run lists over the same replies (metrics.agreement checks they match)."""
    result = agreement(against_runs, harness_runs, labels=("against", "harness"))
    by_key = {(r.reply_set, r.task_id): r for r in harness_runs}
    other = {(r.reply_set, r.task_id): r for r in against_runs}
    differences = []
    for d in result.disagreements:
        h, a = by_key[(d.reply_set, d.task_id)], other[(d.reply_set, d.task_id)]
        differences.append(Difference(h, a, explain(explanations, h, a)))
    return Comparison(tuple(harness_runs), tuple(against_runs), tuple(differences))


def compare(
    harness: HarnessTransport,
    against: Transport,
    tasks: Sequence[Task],
    reply_sets: Sequence[ReplySet],
    sandbox: Sandbox,
    *,
    explanations: Sequence[Explanation] = (),
    jobs: int = 2,
    progress: Progress = no_progress,
) -> Comparison:
    """Run `tasks` x `reply_sets` through both transports and pair the outcomes."""
    first = run_suite(harness, tasks, reply_sets, sandbox, jobs=jobs, progress=progress)
    second = run_suite(against, tasks, reply_sets, sandbox, jobs=jobs, progress=progress)
    return pair(first, second, explanations)
