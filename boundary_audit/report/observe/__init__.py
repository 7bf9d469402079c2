"""The `boundary-audit observe` report: terminal, Markdown, JSON (`boundary-audit/observe/v1`),
and the derived path alone as an adapter file's `[[paths]]` TOML.

`renderer_for(ObserveFormat)` maps `observe --format` to a renderer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.observe import ObserveReport


class ObserveFormat(StrEnum):
    """`boundary-audit observe --format`."""

    TERMINAL = "terminal"
    MARKDOWN = "markdown"
    JSON = "json"
    TOML = "toml"


def renderer_for(
    fmt: ObserveFormat, *, color: bool = False, width: int = 160
) -> Renderer[ObserveReport]:
    """The renderer of `fmt` (terminal output honours `color` and `width`)."""
    from boundary_audit.report.observe.json import ObserveJson
    from boundary_audit.report.observe.markdown import ObserveMarkdown
    from boundary_audit.report.observe.terminal import ObserveTerminal
    from boundary_audit.report.observe.toml import ObserveToml

    match fmt:
        case ObserveFormat.TERMINAL:
            return ObserveTerminal(color=color, width=width)
        case ObserveFormat.MARKDOWN:
            return ObserveMarkdown()
        case ObserveFormat.JSON:
            return ObserveJson()
        case ObserveFormat.TOML:
            return ObserveToml()
        case _:
            assert_never(fmt)
