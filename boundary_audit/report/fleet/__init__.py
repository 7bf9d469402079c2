"""The `boundary-audit fleet` report: terminal (rich), JSON (`boundary-audit/fleet/v1`),
Markdown and a self-contained HTML page.

`renderer_for(FleetFormat)` is the one mapping from `fleet --format` to a renderer of a
`FleetReport`. Every format carries the same facts: per target its Table-8-style rows (class,
location, contract, derived path, damage per reply set, the fix and whether it was verified),
the named transports, the crossover per model and contract with the rank flips, the diff
against the previous run, and the units that could not be carried out.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.fleet import FleetReport


class FleetFormat(StrEnum):
    """The values of `fleet --format`."""

    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"


def renderer_for(
    fmt: FleetFormat, *, color: bool = False, width: int = 120
) -> Renderer[FleetReport]:
    """The renderer for `fmt`; `color` and `width` affect the terminal format only."""
    from boundary_audit.report.fleet.html import FleetHtml
    from boundary_audit.report.fleet.json_v1 import FleetJson
    from boundary_audit.report.fleet.markdown import FleetMarkdown
    from boundary_audit.report.fleet.terminal import FleetTerminal

    match fmt:
        case FleetFormat.TERMINAL:
            return FleetTerminal(color=color, width=width)
        case FleetFormat.JSON:
            return FleetJson()
        case FleetFormat.MARKDOWN:
            return FleetMarkdown()
        case FleetFormat.HTML:
            return FleetHtml()
        case _:
            assert_never(fmt)
