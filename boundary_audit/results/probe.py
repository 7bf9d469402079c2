"""The probe report: run records plus a summary computed once by `boundary_audit.metrics`.

Renderers (`probe_terminal`, `probe_json`, `probe_markdown`) only read a `ProbeReport`; they
never see the runner, the transports or the sandbox. The summary has one *cell* per
(reply set, transport) and, whenever `raw` ran, the damage of every other transport against
it, overall and per family, in exact fractions (printed with the metrics' one rounding rule).

A reply file holding replies from several models is summarised per model: its cells are
labelled `FILE:MODEL`, so that every cell holds at most one outcome per task. A file with
several draws arrives split into one reply set per draw (`FILE#raw-d0`, ...); the summary then
also has one `DrawSummary` per (file, contract, model, transport): each draw's pass rate and
their spread. Without draws there is none, and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundary_audit import metrics
from boundary_audit.record import RunRecord, SkippedTransport
from boundary_audit.taxonomy import BASELINE


@dataclass(frozen=True)
class FamilyRate:
    """One family's pass count in one cell."""

    family: str
    passed: int
    total: int

    @property
    def rate(self) -> Fraction:
        """passed / total, exactly."""
        return Fraction(self.passed, self.total)


@dataclass(frozen=True)
class CellSummary:
    """One (reply set, transport) cell."""

    reply_set: str
    transport: str
    passed: int
    total: int
    rate: Fraction
    """The family-weighted pass rate (each family weighs the same, as in the study)."""
    families: tuple[FamilyRate, ...]
    errors: int
    timed_out: int


@dataclass(frozen=True)
class DamageSummary:
    """pass(transport) - pass(baseline) on the same replies."""

    reply_set: str
    transport: str
    baseline: str
    effect: Fraction
    """Family-weighted difference of proportions (x 100 = percentage points)."""
    families: tuple[tuple[str, Fraction], ...]
    pass_to_fail: tuple[str, ...]
    fail_to_pass: tuple[str, ...]


@dataclass(frozen=True)
class DrawSummary:
    """The pass rates of several draws of one reply set through one transport."""

    reply_set: str
    """The cells' label without the draw (`FILE#raw`, `FILE#raw:MODEL`)."""
    transport: str
    draws: tuple[tuple[int, str, int, int, Fraction], ...]
    """(draw, that draw's cell label, passed, total, family-weighted rate), in draw order."""
    mean: Fraction
    low: Fraction
    high: Fraction

    @property
    def spread(self) -> Fraction:
        """high − low."""
        return self.high - self.low


@dataclass(frozen=True)
class ProbeSummary:
    """Totals, cells in run order, and damage against the baseline."""

    runs: int
    passed: int
    errors: int
    timed_out: int
    cells: tuple[CellSummary, ...]
    damage: tuple[DamageSummary, ...]
    draws: tuple[DrawSummary, ...] = ()
    """One entry per reply set and transport that ran several draws (empty without draws)."""


@dataclass(frozen=True)
class ProbeReport:
    """Everything a probe renderer prints."""

    tool_version: str
    command: str
    sandbox: str
    tasks: tuple[str, ...]
    reply_sets: tuple[str, ...]
    transports: tuple[str, ...]
    notes: tuple[str, ...]
    skipped: tuple[SkippedTransport, ...]
    records: tuple[RunRecord, ...]
    summary: ProbeSummary


def summary_set(record: RunRecord, multi_model: set[str]) -> str:
    """The cell label of `record`'s reply set (`FILE:MODEL` for multi-model files)."""
    if record.reply_set in multi_model:
        return f"{record.reply_set}:{record.model or '-'}"
    return record.reply_set


def multi_model_sets(records: Sequence[RunRecord]) -> set[str]:
    """Reply sets whose records come from more than one model."""
    models: dict[str, set[str | None]] = {}
    for r in records:
        models.setdefault(r.reply_set, set()).add(r.model)
    return {name for name, found in models.items() if len(found) > 1}


def summarize(records: Sequence[RunRecord]) -> ProbeSummary:
    """Counts, per-cell pass rates by family, and damage against `raw` where it ran."""
    multi = multi_model_sets(records)
    rows = [{**_metric_row(r), "reply_set": summary_set(r, multi)} for r in records]
    order = list(dict.fromkeys((row["reply_set"], row["transport"]) for row in rows))
    grouped = metrics.cells(rows) if rows else {}
    cells = tuple(_cell(key, grouped[key], records, multi) for key in order)
    damage = tuple(
        _damage(grouped[(rs, BASELINE)], grouped[(rs, tr)])
        for rs, tr in order
        if tr != BASELINE and (rs, BASELINE) in grouped
    )
    return ProbeSummary(
        runs=len(records),
        passed=sum(r.passed for r in records),
        errors=sum(r.errored for r in records),
        timed_out=sum(r.timed_out for r in records),
        cells=cells,
        damage=damage,
        draws=_draws(records, multi, grouped),
    )


def _draws(
    records: Sequence[RunRecord],
    multi: set[str],
    grouped: dict[tuple[str, str], metrics.Outcomes],
) -> tuple[DrawSummary, ...]:
    """Cells of the same reply set and transport that differ only in their draw."""
    found: dict[tuple[str, str], dict[int, str]] = {}
    for r in records:
        if r.draw is None:
            continue
        base = r.reply_set.removesuffix(f"-d{r.draw}")
        if base == r.reply_set:
            continue  # one draw only: the file was not split
        if r.reply_set in multi:
            base = f"{base}:{r.model or '-'}"
        found.setdefault((base, r.transport), {})[r.draw] = summary_set(r, multi)
    out = []
    for (base, transport), labels in found.items():
        if len(labels) < 2:
            continue
        cells = {d: grouped[(labels[d], transport)] for d in sorted(labels)}
        spread = metrics.draw_spread(cells)
        rows = tuple((d, labels[d], *spread.passed[d], spread.rates[d]) for d in sorted(labels))
        out.append(DrawSummary(base, transport, rows, spread.mean, spread.low, spread.high))
    return tuple(out)


def _metric_row(r: RunRecord) -> dict[str, Any]:
    return {
        "task_id": r.task_id,
        "family": r.family,
        "tier": r.tier,
        "core": r.core,
        "transport": r.transport,
        "reply_set": r.reply_set,
        "reply_id": r.reply_id,
        "contract": r.contract,
        "model": r.model,
        "passed": r.passed,
    }


def _cell(
    key: tuple[str, str],
    outcomes: metrics.Outcomes,
    records: Sequence[RunRecord],
    multi: set[str],
) -> CellSummary:
    rate = metrics.pass_rate(outcomes)
    mine = [r for r in records if (summary_set(r, multi), r.transport) == key]
    return CellSummary(
        reply_set=key[0],
        transport=key[1],
        passed=rate.tasks.passed,
        total=rate.tasks.total,
        rate=rate.headline,
        families=tuple(FamilyRate(f, r.passed, r.total) for f, r in rate.by_family.items()),
        errors=sum(r.errored for r in mine),
        timed_out=sum(r.timed_out for r in mine),
    )


def _damage(baseline: metrics.Outcomes, boundary: metrics.Outcomes) -> DamageSummary:
    d = metrics.damage(baseline, boundary)
    return DamageSummary(
        reply_set=boundary.reply_set,
        transport=boundary.transport,
        baseline=baseline.transport,
        effect=d.effect,
        families=tuple(sorted(d.by_family.items())),
        pass_to_fail=d.pass_to_fail,
        fail_to_pass=d.fail_to_pass,
    )


def summary_line(report: ProbeReport) -> str:
    """The one line the CLI writes to stderr after a probe."""
    s = report.summary
    parts = [f"probed {len(report.tasks)} tasks: {s.passed}/{s.runs} runs passed"]
    if s.errors:
        parts.append(f"{s.errors} errors")
    if s.timed_out:
        parts.append(f"{s.timed_out} timed out")
    parts.extend(
        f"{d.transport} {metrics.format_points(d.effect)} pp ({d.reply_set})" for d in s.damage
    )
    return ", ".join(parts) + f" [sandbox {report.sandbox}]"
