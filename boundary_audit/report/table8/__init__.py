"""The Table-8 report: terminal (rich), Markdown, JSON (`boundary-audit/table8/v1`).

`renderer_for(Table8Format)` maps `table8 --format` to a renderer; `FILE_NAMES` is what
`--output-dir` writes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.table8 import Table8Report


class Table8Format(StrEnum):
    """`boundary-audit table8 --format`."""

    TERMINAL = "terminal"
    MARKDOWN = "markdown"
    JSON = "json"


FILE_NAMES = {Table8Format.MARKDOWN: "table8.md", Table8Format.JSON: "table8.json"}
"""What `--output-dir` writes."""


def renderer_for(
    fmt: Table8Format, *, color: bool = False, width: int = 160
) -> Renderer[Table8Report]:
    """The renderer of `fmt` (terminal output honours `color` and `width`)."""
    from boundary_audit.report.table8.json import Table8Json
    from boundary_audit.report.table8.markdown import Table8Markdown
    from boundary_audit.report.table8.terminal import Table8Terminal

    match fmt:
        case Table8Format.TERMINAL:
            return Table8Terminal(color=color, width=width)
        case Table8Format.MARKDOWN:
            return Table8Markdown()
        case Table8Format.JSON:
            return Table8Json()
        case _:
            assert_never(fmt)
