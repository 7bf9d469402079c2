"""The one mapping from `probe --format` to a renderer of a `ProbeReport`."""

from __future__ import annotations

from typing import Protocol, assert_never

from boundary_audit.report.probe_json import ProbeJsonFormat
from boundary_audit.report.probe_markdown import ProbeMarkdownFormat
from boundary_audit.report.probe_model import ProbeFormat, ProbeReport
from boundary_audit.report.probe_terminal import ProbeTerminalFormat


class ProbeRenderer(Protocol):
    """Anything that turns a probe report into text ending with a newline."""

    def render(self, report: ProbeReport) -> str:
        """The whole report."""
        ...


def probe_formatter_for(
    fmt: ProbeFormat, *, timings: bool = True, color: bool = False, width: int = 120
) -> ProbeRenderer:
    """The renderer for `fmt`; `timings` affects JSON only, `color`/`width` the terminal."""
    match fmt:
        case ProbeFormat.TERMINAL:
            return ProbeTerminalFormat(color=color, width=width)
        case ProbeFormat.JSON:
            return ProbeJsonFormat(timings=timings)
        case ProbeFormat.MARKDOWN:
            return ProbeMarkdownFormat()
        case _:
            assert_never(fmt)
