"""`crossover --format markdown`: the crossover in the study's table layouts, for reviews.

Per boundary transport: the four cells and their effects in the layout of the study's Table 4
(plus the interaction, as its Table 5), the two primary components with their statistics in
the layout of its Table 15 (effect [95 % CI], enumerated family-sign p, Holm p), the matched gap
and the interaction with the same statistics, the leave-one-family-out ranges, each draw's
crossover and the spread across draws, the cells and effects per family, and the rank flips.
Numbers use the study's minus sign (U+2212). No timings: the same inputs give the same bytes.
"""

from __future__ import annotations

from fractions import Fraction

from boundary_audit import metrics
from boundary_audit.report.probe.markdown import cell_text, code
from boundary_audit.results.crossover import (
    CELLS,
    ConfigCrossover,
    CrossoverReport,
    Effect,
    RankFlips,
)

MINUS = metrics.UNICODE_MINUS
DASH = "—"
NAMES = {
    "damage": "Damage",
    "compensation": "Comp.",
    "matched_gap": "Matched gap",
    "interaction": "Interaction",
}


def points(value: Fraction) -> str:
    """A signed effect with the study's minus: `−64.3`, `+60.7`, `0.0`."""
    return metrics.format_points(value, minus=MINUS)


def rate(value: Fraction) -> str:
    """A pass rate in percent: `94.6`."""
    return metrics.format_percent(value)


def with_ci(effect: Effect) -> str:
    """`−64.3 [−80.4,−46.4]` (Table 15's Effect [95% CI])."""
    return f"{points(effect.value)} [{points(effect.interval.low)},{points(effect.interval.high)}]"


def p_text(p: Fraction) -> str:
    """`.000244`."""
    return metrics.format_p_value(p)


def _tasks(value: Fraction) -> str:
    """A margin in tasks: `3`, or `1.5` with draws."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def draws_text(c: ConfigCrossover) -> str:
    """`1` without draws, else the draw count."""
    return str(len(c.draws))


def units_text(c: ConfigCrossover) -> str:
    """`56 tasks` or `56 tasks × 2 draws`."""
    if c.draws == (None,) or len(c.draws) == 1:
        return f"{c.tasks} tasks"
    return f"{c.tasks} tasks × {len(c.draws)} draws"


class CrossoverMarkdown:
    """Renders a `CrossoverReport` as Markdown."""

    def render(self, report: CrossoverReport) -> str:
        """The whole report, ending with a newline."""
        parts = [self._header(report)]
        for transport in report.transports:
            configs = [c for c in report.configs if c.transport == transport]
            parts += [
                self._cells(transport, configs),
                self._table15(transport, configs),
                self._more_stats(transport, configs),
                self._lofo(transport, configs),
            ]
            if any(len(c.per_draw) > 1 for c in configs):
                parts.append(self._draws(transport, configs))
            parts.append(self._flips(next(f for f in report.flips if f.transport == transport)))
            parts += [self._families(c, report.family_groups) for c in configs]
        return "\n".join(parts).rstrip("\n") + "\n"

    def _header(self, report: CrossoverReport) -> str:
        b = report.bootstrap
        ci = (
            "exact bootstrap distribution over families"
            if b.method == "exact"
            else f"{b.resamples} seeded resamples of families (seed {b.seed})"
        )
        lines = [
            "# boundary-audit crossover report",
            "",
            f"- Regenerate: {code(report.command) if report.command else DASH}",
            f"- Tool: boundary-audit {report.tool_version}; sandbox: {report.sandbox or DASH}",
            f"- Tasks: {len(report.tasks)}; reply sets: {', '.join(report.reply_sets)}",
            f"- Cells: contract first (R raw, N disclosed), transport second (R {report.baseline}, "
            f"N the boundary: {', '.join(report.transports)}). Damage RN−RR, compensation NN−RN, "
            "matched gap NN−RR, interaction (NN−NR)−(RN−RR), in percentage points; families "
            "weighted equally; draws paired by (task, draw).",
            f"- Statistics: enumerated two-sided family-sign test; Holm across the "
            f"configurations, per transport and effect; {metrics.format_percent(b.level, 0)} % "
            f"percentile intervals from the {ci}; leave-one-family-out ranges.",
        ]
        if report.errors:
            lines.append(
                f"- **{report.errors} runs could not be carried out** (`error: ...`): "
                "the cells below count them as failures and are not a measurement."
            )
        lines += [f"- Note: {cell_text(n)}" for n in report.notes]
        return "\n".join(lines) + "\n"

    def _cells(self, transport: str, configs: list[ConfigCrossover]) -> str:
        rows = [
            f"## All four crossover cells through `{transport}` (Table 4 layout)",
            "",
            "Cells are pass rates (%); effects are percentage points.",
            "",
            "| Model | Units | RR | RN | NR | NN | Damage | Comp. | Interaction | Matched gap |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for c in configs:
            cells = " | ".join(rate(c.cells[n].rate) for n in CELLS)
            effects = " | ".join(
                points(c.effects[e].value)
                for e in ("damage", "compensation", "interaction", "matched_gap")
            )
            rows.append(f"| {cell_text(c.model)} | {units_text(c)} | {cells} | {effects} |")
        return "\n".join(rows) + "\n"

    def _table15(self, transport: str, configs: list[ConfigCrossover]) -> str:
        rows = [
            f"## Family-sign tests through `{transport}` (Table 15 layout)",
            "",
            "Enumerated and Holm-adjusted two-sided family-sign p values for the two primary "
            "components. Effect sizes are percentage points.",
            "",
            "| Model | Fixed-reply transport: Effect [95% CI] | Enum. p | Holm p "
            "| Contract-conditioned compensation: Effect [95% CI] | Enum. p | Holm p |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for c in configs:
            d, k = c.effects["damage"], c.effects["compensation"]
            rows.append(
                f"| {cell_text(c.model)} | {with_ci(d)} | {p_text(d.sign_test.p)} "
                f"| {p_text(d.p_holm)} | {with_ci(k)} | {p_text(k.sign_test.p)} "
                f"| {p_text(k.p_holm)} |"
            )
        return "\n".join(rows) + "\n"

    def _more_stats(self, transport: str, configs: list[ConfigCrossover]) -> str:
        rows = [
            f"## Matched gap and interaction through `{transport}`",
            "",
            "| Model | Matched gap [95% CI] | Enum. p | Holm p | Interaction [95% CI] | Enum. p "
            "| Holm p |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for c in configs:
            g, i = c.effects["matched_gap"], c.effects["interaction"]
            rows.append(
                f"| {cell_text(c.model)} | {with_ci(g)} | {p_text(g.sign_test.p)} "
                f"| {p_text(g.p_holm)} | {with_ci(i)} | {p_text(i.sign_test.p)} "
                f"| {p_text(i.p_holm)} |"
            )
        return "\n".join(rows) + "\n"

    def _lofo(self, transport: str, configs: list[ConfigCrossover]) -> str:
        rows = [
            f"## Leave-one-family-out ranges through `{transport}` (pp)",
            "",
            "| Model | Damage | Comp. | Matched gap | Interaction | Families (−/0/+) of damage |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for c in configs:
            ranges = " | ".join(
                f"[{points(c.effects[e].lofo.low)}, {points(c.effects[e].lofo.high)}]"
                for e in ("damage", "compensation", "matched_gap", "interaction")
            )
            s = c.effects["damage"].sign_test
            rows.append(f"| {cell_text(c.model)} | {ranges} | {s.negative}/{s.zero}/{s.positive} |")
        return "\n".join(rows) + "\n"

    def _draws(self, transport: str, configs: list[ConfigCrossover]) -> str:
        rows = [
            f"## Each draw through `{transport}`, and the spread across draws",
            "",
            "| Model | Draw | RR | RN | NR | NN | Damage | Comp. | Interaction | Matched gap |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        order = ("damage", "compensation", "interaction", "matched_gap")
        for c in configs:
            for d in c.per_draw:
                cells = " | ".join(rate(d.cells[n].rate) for n in CELLS)
                effects = " | ".join(points(d.effects[e]) for e in order)
                shown = DASH if d.draw is None else str(d.draw)
                rows.append(f"| {cell_text(c.model)} | {shown} | {cells} | {effects} |")
            if c.spread:
                cells = " | ".join(
                    f"{rate(c.spread[n].low)}–{rate(c.spread[n].high)}" for n in CELLS
                )
                effects = " | ".join(
                    f"{points(c.spread[e].low)}…{points(c.spread[e].high)}" for e in order
                )
                rows.append(f"| {cell_text(c.model)} | range | {cells} | {effects} |")
        return "\n".join(rows) + "\n"

    def _flips(self, flips: RankFlips) -> str:
        rows = [
            f"## Rank flips through `{flips.transport}`",
            "",
            f"Pairs of configurations whose order by RR (raw contract, raw execution) is reversed "
            f"by NN (disclosed contract through the boundary): {len(flips.flips)} of "
            f"{flips.comparable} comparable pairs ({flips.pairs} "
            f"{'pair' if flips.pairs == 1 else 'pairs'}; a pair tied in either score is not "
            "comparable).",
            "",
        ]
        if not flips.flips:
            return "\n".join(rows) + "\n"
        rows += [
            "| Higher by RR | Higher by NN | RR margin (pp) | NN margin (pp) | Margin in tasks "
            "| Single-task margin |",
            "|---|---|---:|---:|---:|---|",
        ]
        for f in flips.flips:
            rows.append(
                f"| {cell_text(f.first)} | {cell_text(f.second)} | {points(f.raw_margin)} "
                f"| {points(-f.boundary_margin)} "
                f"| {_tasks(f.raw_tasks)} / {_tasks(-f.boundary_tasks)} "
                f"| {'yes' if f.single_task else 'no'} |"
            )
        return "\n".join(rows) + "\n"

    def _families(self, c: ConfigCrossover, groups: tuple[tuple[str, str], ...]) -> str:
        rows = [
            f"## Per family: {cell_text(c.model)} through `{c.transport}`",
            "",
            "| Family | RR | RN | NR | NN | Damage | Comp. | Matched gap | Interaction |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        cells = {n: {f: (p, t) for f, p, t in c.cells[n].families} for n in CELLS}
        effects = {e: dict(c.effects[e].families) for e in c.effects}
        order = {f: i for i, (f, _) in enumerate(groups)}
        for family in sorted(cells["RR"], key=lambda f: (order.get(f, len(order)), f)):
            shown = " | ".join("{}/{}".format(*cells[n][family]) for n in CELLS)
            values = " | ".join(
                points(effects[e][family])
                for e in ("damage", "compensation", "matched_gap", "interaction")
            )
            rows.append(f"| {cell_text(family)} | {shown} | {values} |")
        return "\n".join(rows) + "\n"
