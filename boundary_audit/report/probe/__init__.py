"""The `boundary-audit probe` report: terminal (rich), JSON (`boundary-audit/probe/v1`), Markdown.

`renderer_for(ProbeFormat)` is the one mapping from `probe --format` to a renderer of a
`ProbeReport`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.probe import ProbeReport


class ProbeFormat(StrEnum):
    """The values of `probe --format`."""

    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"


def renderer_for(
    fmt: ProbeFormat, *, timings: bool = True, color: bool = False, width: int = 120
) -> Renderer[ProbeReport]:
    """The renderer for `fmt`; `timings` affects JSON only, `color`/`width` the terminal."""
    from boundary_audit.report.probe.json import ProbeJsonFormat
    from boundary_audit.report.probe.markdown import ProbeMarkdownFormat
    from boundary_audit.report.probe.terminal import ProbeTerminalFormat

    match fmt:
        case ProbeFormat.TERMINAL:
            return ProbeTerminalFormat(color=color, width=width)
        case ProbeFormat.JSON:
            return ProbeJsonFormat(timings=timings)
        case ProbeFormat.MARKDOWN:
            return ProbeMarkdownFormat()
        case _:
            assert_never(fmt)
