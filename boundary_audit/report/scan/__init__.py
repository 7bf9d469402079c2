"""The static-scan report: terminal (rich), JSON v1, SARIF 2.1.0, Markdown.

`renderer_for(ScanFormat)` is the single mapping from `scan --format` to a renderer of a
`ScanReport`; a test checks that it covers every member.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from boundary_audit.report.interface import Renderer
from boundary_audit.results.scan import ScanReport


class ScanFormat(StrEnum):
    """The report formats `boundary-audit scan --format` offers."""

    TERMINAL = "terminal"
    """One line per boundary for people at a terminal (the default; `--details` for more)."""
    JSON = "json"
    """The `boundary-audit/v1` JSON contract (docs/json-v1.md)."""
    SARIF = "sarif"
    """SARIF 2.1.0, for GitHub code scanning and other SARIF viewers."""
    MARKDOWN = "markdown"
    """A review-friendly Markdown table plus the skipped inputs."""


def renderer_for(
    fmt: ScanFormat,
    *,
    color: bool = False,
    width: int = 120,
    details: bool = False,
    show_skipped: bool = False,
) -> Renderer[ScanReport]:
    """The renderer for `fmt`; `color`, `width`, `details` and `show_skipped` only affect the
    terminal format (the machine formats always carry everything)."""
    # Each format imports only its own module (a terminal scan loads no JSON or SARIF code).
    match fmt:
        case ScanFormat.TERMINAL:
            from boundary_audit.report.scan.terminal import TerminalFormat

            return TerminalFormat(
                color=color, width=width, details=details, show_skipped=show_skipped
            )
        case ScanFormat.JSON:
            from boundary_audit.report.scan.json_v1 import JsonV1Format

            return JsonV1Format()
        case ScanFormat.SARIF:
            from boundary_audit.report.scan.sarif import SarifFormat

            return SarifFormat()
        case ScanFormat.MARKDOWN:
            from boundary_audit.report.scan.markdown import MarkdownFormat

            return MarkdownFormat()
        case _:
            assert_never(fmt)
