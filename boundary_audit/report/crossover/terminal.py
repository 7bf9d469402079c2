"""`crossover --format terminal` (the default): rich tables of the crossover, per transport.

Rendered through `console.isolated_console`, so the same report gives the same text whatever
the caller's terminal; only `color` and `width` change it. Per boundary transport: the four
cells and the effects (the study's Table 4, with the interaction), the statistics of each
effect (the Table-15 columns plus the leave-one-family-out range), the spread across draws when
there are several, and the rank flips.
"""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from boundary_audit.report.console import isolated_console
from boundary_audit.report.crossover.markdown import (
    NAMES,
    p_text,
    points,
    rate,
    units_text,
    with_ci,
)
from boundary_audit.results.crossover import CELLS, EFFECTS, ConfigCrossover, CrossoverReport

ORDER = ("damage", "compensation", "interaction", "matched_gap")


class CrossoverTerminal:
    """Renders a `CrossoverReport` for people at a terminal."""

    def __init__(self, *, color: bool = False, width: int = 120) -> None:
        self.color, self.width = color, width

    def render(self, report: CrossoverReport) -> str:
        """Header, then per transport the cells, the statistics, the draws and the flips."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        out.print(
            Text(f"boundary-audit {report.tool_version}: crossover in sandbox "
                 f"{report.sandbox or '-'}", style="bold"),
            soft_wrap=True,
        )  # fmt: skip
        out.print(
            f"{len(report.tasks)} tasks, {len(report.records)} runs, {report.errors} errors; "
            f"cells contract-then-transport (R raw / N disclosed; R {report.baseline} / N the "
            "boundary)",
            soft_wrap=True,
        )
        for transport in report.transports:
            configs = [c for c in report.configs if c.transport == transport]
            out.print(Text(f"Crossover through {transport}", style="bold"), soft_wrap=True)
            out.print(self._cells(configs))
            out.print(Text(f"Statistics through {transport}", style="bold"), soft_wrap=True)
            out.print(self._stats(configs))
            if any(c.spread for c in configs):
                out.print(Text("Spread across draws", style="bold"), soft_wrap=True)
                out.print(self._spread(configs))
            flips = next(f for f in report.flips if f.transport == transport)
            out.print(
                f"rank flips (RR order reversed by NN): {len(flips.flips)} of {flips.comparable} "
                f"comparable pairs ({flips.pairs} pairs)",
                soft_wrap=True,
            )
            for f in flips.flips:
                out.print(
                    f"  {f.first} > {f.second} by RR ({points(f.raw_margin)} pp), "
                    f"< by NN ({points(f.boundary_margin)} pp)"
                    + (", single-task margin" if f.single_task else ""),
                    soft_wrap=True,
                )
        for note in report.notes:
            out.print(f"note: {note}", soft_wrap=True)
        return buf.getvalue()

    def _cells(self, configs: list[ConfigCrossover]) -> Table:
        table = Table(header_style="bold")
        table.add_column("Model", overflow="fold")
        table.add_column("Units")
        for name in CELLS:
            table.add_column(f"{name} %", justify="right")
        for name in ORDER:
            table.add_column(f"{NAMES[name]} pp", justify="right")
        for c in configs:
            effects = [
                Text(points(c.effects[e].value), style="red" if c.effects[e].value < 0 else "")
                for e in ORDER
            ]
            table.add_row(c.model, units_text(c), *(rate(c.cells[n].rate) for n in CELLS), *effects)
        return table

    def _stats(self, configs: list[ConfigCrossover]) -> Table:
        table = Table(header_style="bold")
        table.add_column("Model", overflow="fold")
        table.add_column("Effect")
        table.add_column("pp [95% CI]", justify="right")
        table.add_column("Enum. p", justify="right")
        table.add_column("Holm p", justify="right")
        table.add_column("LOFO range", justify="right")
        table.add_column("Families −/0/+", justify="right")
        for c in configs:
            for e in EFFECTS:
                x = c.effects[e]
                s = x.sign_test
                table.add_row(
                    c.model, NAMES[e], with_ci(x), p_text(s.p), p_text(x.p_holm),
                    f"[{points(x.lofo.low)}, {points(x.lofo.high)}]",
                    f"{s.negative}/{s.zero}/{s.positive}",
                )  # fmt: skip
        return table

    def _spread(self, configs: list[ConfigCrossover]) -> Table:
        table = Table(header_style="bold")
        table.add_column("Model", overflow="fold")
        table.add_column("Cell or effect")
        table.add_column("Per draw", overflow="fold")
        table.add_column("Min", justify="right")
        table.add_column("Max", justify="right")
        for c in configs:
            if not c.spread:
                continue
            for name in (*CELLS, *ORDER):
                if name in CELLS:
                    per = [rate(d.cells[name].rate) for d in c.per_draw]
                    low, high = rate(c.spread[name].low), rate(c.spread[name].high)
                    label = f"{name} %"
                else:
                    per = [points(d.effects[name]) for d in c.per_draw]
                    low, high = points(c.spread[name].low), points(c.spread[name].high)
                    label = f"{NAMES[name]} pp"
                shown = ", ".join(f"d{d.draw}: {v}" for d, v in zip(c.per_draw, per, strict=True))
                table.add_row(c.model, label, shown, low, high)
        return table
