"""The renderer interface: a `ReportFormat` turns a `ScanReport` into text, and nothing else.

Renderers are pure (no I/O, no clock, no environment): the same report renders to the same
bytes. `OutputFormat` is the CLI's choice of renderer; `boundary_audit.report.formatter_for`
maps every member to its implementation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum

from boundary_audit.report.model import ScanReport


class OutputFormat(StrEnum):
    """The report formats `boundary-audit scan --format` offers."""

    TERMINAL = "terminal"
    """A rich table for people at a terminal (the default)."""
    JSON = "json"
    """The `boundary-audit/v1` JSON contract (docs/json-v1.md)."""
    SARIF = "sarif"
    """SARIF 2.1.0, for GitHub code scanning and other SARIF viewers."""
    MARKDOWN = "markdown"
    """A review-friendly Markdown table plus the skipped inputs."""


class ReportFormat(ABC):
    """One output format of a static-scan report."""

    @abstractmethod
    def render(self, report: ScanReport) -> str:
        """The whole report as text, ending with a newline."""
        raise NotImplementedError  # pragma: no cover
