"""The Table-8 report in the terminal: a rich table of the rows, then variants and notes.

Rendered into a string through `console.isolated_console` (an empty environment), so only the
`color` and `width` arguments change the text. The columns are the Table-8 columns; the
Markdown and JSON renderers carry the per-path detail (every anchor, probe and broken task).
"""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from boundary_audit.report.console import isolated_console
from boundary_audit.report.table8.cells import (
    MARK,
    anchor_cell,
    breaks_cell,
    contract_cell,
    damage_cell,
    errors_note,
    harness_cell,
    has_harness,
    layers_cell,
    observed_cell,
    system_cell,
)
from boundary_audit.results.table8 import Row, Table8Report


def _table(rows: tuple[Row, ...], report: Table8Report) -> Table:
    table = Table(show_lines=True, header_style="bold")
    driven = has_harness(rows)
    for name, ratio in (
        ("System", 2),
        ("Contract", 2),
        ("Source anchor (file:lines @sha)", 4),
        ("Observed boundary", 5),
        ("Parse layers", 4),
        ("Damage (pp)", 3),
        *([("Real harness (pp; agreement)", 3)] if driven else []),
        ("What breaks", 4),
        ("Fix", 3),
    ):
        table.add_column(name, overflow="fold", ratio=ratio)
    for row in rows:
        damage = Text(
            damage_cell(row), style="bold red" if any(m.damage_pp < 0 for m in row.measures) else ""
        )
        table.add_row(
            system_cell(row),
            contract_cell(row),
            anchor_cell(row),
            observed_cell(row, report),
            layers_cell(row),
            damage,
            *([harness_cell(row)] if driven else []),
            breaks_cell(row),
            row.fix,
        )
    return table


class Table8Terminal:
    """`render(report) -> str` for a terminal of `width` columns."""

    def __init__(self, *, color: bool = False, width: int = 160) -> None:
        self.color = color
        self.width = width

    def render(self, report: Table8Report) -> str:
        """Header, the table, variants, marks and notes."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        out.print(
            Text(
                f"boundary-audit {report.tool_version}: {report.title}, over "
                f"{report.task_count} tasks ({report.core_count} core), replies "
                f"{', '.join(report.reply_sets)}, baseline {report.baseline}, "
                f"sandbox {report.sandbox}",
                style="bold",
            )
        )
        out.print(Text(f"regenerate: {report.command}", style="dim"))
        out.print(_table(report.rows, report))
        if report.variants:
            out.print(Text("Variants (measured, not table rows):", style="bold"))
            out.print(_table(report.variants, report))
        for row in report.all_rows:
            if row.marked:
                out.print(Text(f"{MARK} {row.system_name} ({row.path}): {row.marked}"))
        for row in report.all_rows:
            if errors_note(row):
                out.print(Text(f"{row.system_name} ({row.path}): {errors_note(row)}", style="bold"))
        for note in report.notes:
            out.print(Text(f"note: {note}", style="dim"))
        return buf.getvalue()
