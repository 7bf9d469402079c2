"""The Table-8 output formats: `Table8Format` (the `--format` values) mapped to renderers."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from boundary_audit.report.table8_json import Table8Json
from boundary_audit.report.table8_markdown import Table8Markdown
from boundary_audit.report.table8_terminal import Table8Terminal
from boundary_audit.table8.model import Table8Report


class Table8Format(StrEnum):
    """`boundary-audit table8 --format`."""

    TERMINAL = "terminal"
    MARKDOWN = "markdown"
    JSON = "json"


class Table8Renderer(Protocol):
    """Anything that renders a Table-8 report to text."""

    def render(self, report: Table8Report) -> str:
        """The report as text."""


FILE_NAMES = {Table8Format.MARKDOWN: "table8.md", Table8Format.JSON: "table8.json"}
"""What `--output-dir` writes."""


def table8_formatter_for(
    fmt: Table8Format, *, color: bool = False, width: int = 160
) -> Table8Renderer:
    """The renderer of `fmt` (terminal output honours `color` and `width`)."""
    if fmt is Table8Format.TERMINAL:
        return Table8Terminal(color=color, width=width)
    if fmt is Table8Format.MARKDOWN:
        return Table8Markdown()
    if fmt is Table8Format.JSON:
        return Table8Json()
    raise AssertionError(fmt)  # pragma: no cover - the enum is exhaustive
