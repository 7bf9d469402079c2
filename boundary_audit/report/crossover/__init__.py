"""The `boundary-audit crossover` report: terminal (rich), JSON (`boundary-audit/crossover/v1`),
Markdown (the study's Table-4 and Table-15 layouts) and a self-contained HTML page
(`report/html/`: the heat map, the crossover bars and the Table-8 rows).

`renderer_for(CrossoverFormat)` is the one mapping from `crossover --format` to a renderer of a
`CrossoverReport`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.crossover import CrossoverReport


class CrossoverFormat(StrEnum):
    """The values of `crossover --format`."""

    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"


def renderer_for(
    fmt: CrossoverFormat, *, timings: bool = True, color: bool = False, width: int = 120
) -> Renderer[CrossoverReport]:
    """The renderer for `fmt`; `timings` affects JSON only, `color`/`width` the terminal."""
    from boundary_audit.report.crossover.json import CrossoverJson
    from boundary_audit.report.crossover.markdown import CrossoverMarkdown
    from boundary_audit.report.crossover.terminal import CrossoverTerminal
    from boundary_audit.report.html import CrossoverHtml

    match fmt:
        case CrossoverFormat.TERMINAL:
            return CrossoverTerminal(color=color, width=width)
        case CrossoverFormat.JSON:
            return CrossoverJson(timings=timings)
        case CrossoverFormat.MARKDOWN:
            return CrossoverMarkdown()
        case CrossoverFormat.HTML:
            return CrossoverHtml()
        case _:
            assert_never(fmt)
