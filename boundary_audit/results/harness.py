"""The harness report: what one system's real harness did to the task suite, as pure data.

A `Comparison` pairs the real harness's runs with those of our model of it (the adapter, or
any `--against` transport) over the same replies: every (reply set, task) whose pass/fail
differs is a `Difference` carrying both runs, matched against the written explanations.

`build_report` gathers a real-harness run (and optionally the `raw` baseline and comparisons
with the adapter or other transports) into a `HarnessReport`; the renderers (`render.py`,
`render_json.py`) turn it into JSON, Markdown or plain text without running anything. Rates
and damage come from `metrics` (family-weighted, one rounding rule); families are listed in
the task suite's order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from boundary_audit import __version__
from boundary_audit.harness.explain import Explanation, explain
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.metrics import Damage, PassRate, cells, damage, pass_rate
from boundary_audit.metrics.agreement import agreement
from boundary_audit.record import RunRecord
from boundary_audit.taxonomy import BASELINE

SCHEMA = "boundary-audit/harness/v1"


@dataclass(frozen=True)
class Difference:
    """One reply whose outcome differs between the real harness and the model of it."""

    harness: RunRecord
    against: RunRecord
    explanation: Explanation | None
    """The written explanation or fix proposal that covers it, if any."""

    @property
    def key(self) -> tuple[str, str]:
        """(reply set, task id)."""
        return (self.harness.reply_set, self.harness.task_id)


@dataclass(frozen=True)
class Comparison:
    """The two measurements of one system and where they disagree."""

    harness_runs: tuple[RunRecord, ...]
    against_runs: tuple[RunRecord, ...]
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
    harness_runs: Sequence[RunRecord],
    against_runs: Sequence[RunRecord],
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


@dataclass(frozen=True)
class Measurement:
    """One transport's runs over the suite, with its pass rate per reply set."""

    label: str
    role: str
    """`harness`, `against` or `baseline`."""
    runs: tuple[RunRecord, ...]
    rates: dict[str, PassRate]
    """Reply set -> pass rate."""
    damage: dict[str, Damage] = field(default_factory=dict)
    """Reply set -> damage relative to the `raw` baseline (when the baseline ran)."""


@dataclass(frozen=True)
class HarnessReport:
    """Everything the renderers show for one system."""

    spec: HarnessSpec
    command: str
    """The command line that regenerates this report."""
    python_version: str
    sandbox: str
    selection: str
    reply_sets: tuple[str, ...]
    families: tuple[str, ...]
    """Families in suite order."""
    measurements: tuple[Measurement, ...]
    """harness first, then each compared transport, then the baseline (those that ran)."""
    comparisons: tuple[Comparison, ...]
    timings: bool = False
    tool_version: str = __version__

    @property
    def harness(self) -> Measurement:
        """The real-harness measurement."""
        return self.measurements[0]

    def status_counts(self) -> dict[str, Counter[str]]:
        """Reply set -> how often each harness status occurred."""
        counts: dict[str, Counter[str]] = {rs: Counter() for rs in self.reply_sets}
        for run in self.harness.runs:
            counts[run.reply_set][run.status] += 1
        return counts


def _measure(
    label: str, role: str, runs: Sequence[RunRecord], baseline: Sequence[RunRecord]
) -> Measurement:
    grouped = cells(runs)
    rates = {rs: pass_rate(outcomes) for (rs, _), outcomes in grouped.items()}
    base = cells(baseline)
    dmg = {
        rs: damage(base[(rs, BASELINE)], outcomes)
        for (rs, _), outcomes in grouped.items()
        if (rs, BASELINE) in base
    }
    return Measurement(label, role, tuple(runs), rates, dmg)


def build_report(
    *,
    spec: HarnessSpec,
    command: str,
    python_version: str,
    sandbox: str,
    selection: str,
    harness_runs: Sequence[RunRecord],
    baseline_runs: Sequence[RunRecord] = (),
    comparisons: Sequence[Comparison] = (),
    timings: bool = False,
) -> HarnessReport:
    """Assemble the report from runs already made (nothing is executed here)."""
    measurements = [_measure(harness_runs[0].transport, "harness", harness_runs, baseline_runs)]
    for comparison in comparisons:
        runs = comparison.against_runs
        measurements.append(_measure(comparison.against, "against", runs, baseline_runs))
    if baseline_runs:
        measurements.append(_measure(BASELINE, "baseline", baseline_runs, ()))
    families = tuple(dict.fromkeys(r.family for r in harness_runs))
    return HarnessReport(
        spec=spec,
        command=command,
        python_version=python_version,
        sandbox=sandbox,
        selection=selection,
        reply_sets=tuple(sorted({r.reply_set for r in harness_runs})),
        families=families,
        measurements=tuple(measurements),
        comparisons=tuple(comparisons),
        timings=timings,
    )
