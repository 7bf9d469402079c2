"""Report stage: the static-scan report model and its renderers.

Formats: terminal (rich), JSON v1, SARIF 2.1.0, Markdown.

`formatter_for(OutputFormat)` is the single mapping from a CLI format choice to a renderer; a
test checks that it covers every `OutputFormat` member.
"""

from __future__ import annotations

from typing import assert_never

from boundary_audit.report.interface import OutputFormat, ReportFormat
from boundary_audit.report.json_v1 import JsonV1Format
from boundary_audit.report.markdown import MarkdownFormat
from boundary_audit.report.model import CheckInfo, ScanReport, Summary, summary_line
from boundary_audit.report.sarif import SarifFormat
from boundary_audit.report.terminal import TerminalFormat

__all__ = [
    "CheckInfo",
    "JsonV1Format",
    "MarkdownFormat",
    "OutputFormat",
    "ReportFormat",
    "SarifFormat",
    "ScanReport",
    "Summary",
    "TerminalFormat",
    "formatter_for",
    "summary_line",
]


def formatter_for(fmt: OutputFormat, *, color: bool = False, width: int = 120) -> ReportFormat:
    """The renderer for `fmt`; `color` and `width` only affect the terminal format."""
    match fmt:
        case OutputFormat.TERMINAL:
            return TerminalFormat(color=color, width=width)
        case OutputFormat.JSON:
            return JsonV1Format()
        case OutputFormat.SARIF:
            return SarifFormat()
        case OutputFormat.MARKDOWN:
            return MarkdownFormat()
        case _:
            assert_never(fmt)
