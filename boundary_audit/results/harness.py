"""The harness report: what one system's real harness did to the task suite, as pure data.

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

from boundary_audit import __version__
from boundary_audit.harness.compare import Comparison
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.harness.suite import CellRun
from boundary_audit.metrics import Damage, PassRate, cells, damage, pass_rate

SCHEMA = "boundary-audit/harness/v1"
BASELINE = "raw"


@dataclass(frozen=True)
class Measurement:
    """One transport's runs over the suite, with its pass rate per reply set."""

    label: str
    role: str
    """`harness`, `against` or `baseline`."""
    runs: tuple[CellRun, ...]
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
    label: str, role: str, runs: Sequence[CellRun], baseline: Sequence[CellRun]
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
    harness_runs: Sequence[CellRun],
    baseline_runs: Sequence[CellRun] = (),
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
