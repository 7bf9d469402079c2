"""`probe --format terminal` (the default): rich tables of pass rates and damage.

Rendered into a string through `console.isolated_console` (an empty environment), so the same
report gives the same text whatever the caller's terminal; only `color` and `width` change it.
One table per (reply set, transport) cell with the damage against raw, then per reply set a
table of pass rates by family (transports as columns), then notes and skipped transports.
"""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from boundary_audit import metrics
from boundary_audit.report.console import isolated_console
from boundary_audit.results.probe import ProbeReport
from boundary_audit.taxonomy import BASELINE

DASH = "—"


def _damage_text(effect: object) -> Text:
    if effect is None:
        return Text(DASH, style="dim")
    shown = metrics.format_points(effect)  # type: ignore[arg-type]
    return Text(shown, style="bold red" if shown.startswith("-") else "green")


class ProbeTerminalFormat:
    """Renders a `ProbeReport` for people at a terminal."""

    def __init__(self, *, color: bool = False, width: int = 120) -> None:
        self.color, self.width = color, width

    def render(self, report: ProbeReport) -> str:
        """Header, the overview table, per-family tables, notes and skipped transports."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        s = report.summary
        out.print(
            Text(f"boundary-audit {report.tool_version}: probe in sandbox {report.sandbox}",
                 style="bold"),
            soft_wrap=True,
        )  # fmt: skip
        out.print(
            f"{len(report.tasks)} tasks, {s.runs} runs: {s.passed} passed, {s.errors} errors, "
            f"{s.timed_out} timed out",
            soft_wrap=True,
        )
        if s.cells:
            out.print(Text("Pass rate per reply set and transport", style="bold"), soft_wrap=True)
            out.print(self._overview(report))
        for reply_set in dict.fromkeys(c.reply_set for c in s.cells):
            out.print(Text(f"Pass rate per family: {reply_set}", style="bold"), soft_wrap=True)
            out.print(self._families(report, reply_set))
        if s.draws:
            out.print(Text("Pass rate across draws", style="bold"), soft_wrap=True)
            out.print(self._draws(report))
        for note in report.notes:
            out.print(f"note: {note}", soft_wrap=True)
        for skipped in report.skipped:
            out.print(f"skipped transport {skipped.transport}: {skipped.reason}", soft_wrap=True)
        return buf.getvalue()

    def _draws(self, report: ProbeReport) -> Table:
        table = Table(header_style="bold")
        table.add_column("Reply set", overflow="fold")
        table.add_column("Transport", overflow="fold")
        table.add_column("Per draw (%)", overflow="fold")
        table.add_column("Mean %", justify="right")
        table.add_column("Range %", justify="right")
        table.add_column("Spread (pp)", justify="right")
        for d in report.summary.draws:
            per = ", ".join(f"d{n} {metrics.format_percent(rate)}" for n, _, _, _, rate in d.draws)
            table.add_row(
                d.reply_set, d.transport, per, metrics.format_percent(d.mean),
                f"{metrics.format_percent(d.low)}–{metrics.format_percent(d.high)}",
                metrics.format_percent(d.spread),
            )  # fmt: skip
        return table

    def _overview(self, report: ProbeReport) -> Table:
        damage = {(d.reply_set, d.transport): d.effect for d in report.summary.damage}
        table = Table(header_style="bold")
        table.add_column("Reply set", overflow="fold")
        table.add_column("Transport", overflow="fold")
        table.add_column("Passed", justify="right")
        table.add_column("Pass rate %", justify="right")
        table.add_column(f"Damage vs {BASELINE} (pp)", justify="right")
        table.add_column("Errors", justify="right")
        table.add_column("Timed out", justify="right")
        for c in report.summary.cells:
            table.add_row(
                c.reply_set, c.transport, f"{c.passed}/{c.total}", metrics.format_percent(c.rate),
                _damage_text(damage.get((c.reply_set, c.transport))),
                str(c.errors), str(c.timed_out),
            )  # fmt: skip
        return table

    def _families(self, report: ProbeReport, reply_set: str) -> Table:
        cells = [c for c in report.summary.cells if c.reply_set == reply_set]
        table = Table(header_style="bold")
        table.add_column("Family", overflow="fold")
        for c in cells:
            table.add_column(c.transport, justify="right", overflow="fold")
        for family in sorted({f.family for c in cells for f in c.families}):
            row = [family]
            for c in cells:
                rate = next((f for f in c.families if f.family == family), None)
                row.append(f"{rate.passed}/{rate.total}" if rate else DASH)
            table.add_row(*row)
        return table
