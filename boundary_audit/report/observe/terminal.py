"""The observe report on a terminal: the Markdown body as text, then the Table-8 row as the
Table-8 terminal renderer draws it."""

from __future__ import annotations

from boundary_audit.report.observe.markdown import body_lines
from boundary_audit.report.table8.terminal import Table8Terminal
from boundary_audit.results.observe import ObserveReport


class ObserveTerminal:
    """`--format terminal` (the default)."""

    def __init__(self, *, color: bool = False, width: int = 160) -> None:
        self.color, self.width = color, width

    def render(self, report: ObserveReport) -> str:
        text = "\n".join(body_lines(report)) + "\n"
        if report.table8 is not None:
            text += "\n" + Table8Terminal(color=self.color, width=self.width).render(report.table8)
        return text
