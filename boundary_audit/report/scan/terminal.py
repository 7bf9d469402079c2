"""The default output: a rich table of active findings, the counts and the skipped inputs.

Rendered into a string through `console.isolated_console`, so the same report gives the same
text whatever the caller's terminal, `COLUMNS` or `NO_COLOR`; only the `color` and `width`
arguments change it. Suppressed findings are counted, not listed (the machine formats list
them). The one-line summary with the full sha is the CLI's stderr line.
"""

from __future__ import annotations

import io
from functools import partial

from rich.table import Table
from rich.text import Text

from boundary_audit.finding import Finding
from boundary_audit.report.console import isolated_console
from boundary_audit.results.scan import ScanReport, evidence_text, plural

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}
MAX_SKIPPED_SHOWN = 20
"""Skipped inputs listed by name; the rest are counted (JSON and SARIF list them all)."""


def _row(f: Finding) -> tuple[Text | str, ...]:
    sev = Text(f.severity.value, style=_SEVERITY_STYLE.get(f.severity.value, ""))
    layers = "1 layer" if f.parse_layers == 1 else f"{f.parse_layers} layers"
    where = Text(f.primary.anchor())
    if f.message:
        where.append("\n" + f.message, style="dim")
    for ev in f.evidence:
        where.append("\nmeasured: " + evidence_text(ev), style="bold")
    sink = f"{f.sink or '?'}\nsanitizer: {f.sanitizer or 'none'}"
    model = f"{'yes' if f.model_controlled else 'no'}\n{f.confidence.value}"
    return (sev, f"{f.code}\n{f.name}", f"{f.boundary_class.value}\n{layers}", where, sink, model)


def _table(findings: tuple[Finding, ...]) -> Table:
    table = Table(show_lines=True, header_style="bold")
    table.add_column("Severity", no_wrap=True)
    table.add_column("Check", overflow="fold", ratio=2)
    table.add_column("Class", overflow="fold", ratio=2)
    table.add_column("Anchor / message", overflow="fold", ratio=5)
    table.add_column("Sink / sanitizer", overflow="fold", ratio=3)
    table.add_column("Model-controlled\nconfidence", overflow="fold", ratio=2)
    for f in findings:
        table.add_row(*_row(f))
    return table


def _counts(report: ScanReport) -> str:
    s = report.summary
    parts = [f"{n} {sev}" for sev, n in s.active_by_severity.items()]
    active = f"{s.active} active" + (f" ({', '.join(parts)})" if parts else "")
    by_kind = ", ".join(f"{n} {k}" for k, n in s.suppressed_by.items() if n)
    suppressed = f"{s.suppressed} suppressed" + (f" ({by_kind})" if by_kind else "")
    langs = ", ".join(f"{k} {v}" for k, v in report.languages.items())
    files = f"{plural(s.files_scanned, 'file')} scanned" + (f" ({langs})" if langs else "")
    if s.files_out_of_scope:
        files += f", {s.files_out_of_scope} left out by scope"
    return f"{active}; {suppressed}; {s.active_model_controlled} model-controlled; {files}"


class TerminalFormat:
    """`--format terminal` (the default)."""

    def __init__(self, *, color: bool = False, width: int = 120) -> None:
        self.color = color
        self.width = width

    def render(self, report: ScanReport) -> str:
        """Header, findings table (or "no active findings"), counts, skipped inputs."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        out.print(
            Text(
                f"boundary-audit {report.tool_version}: static scan of {report.target_name}",
                style="bold",
            ),
            soft_wrap=True,
        )
        out.print(f"commit {report.commit or '(none)'}  url {report.url}", soft_wrap=True)
        line = partial(out.print, soft_wrap=True)
        if report.active:
            out.print(_table(report.active))
        else:
            line("no active findings")
        line(_counts(report))
        if report.skipped:
            line(f"skipped ({len(report.skipped)}):")
            for s in report.skipped[:MAX_SKIPPED_SHOWN]:
                line(Text(f"  {s.path}: {s.reason}"))
            if len(report.skipped) > MAX_SKIPPED_SHOWN:
                rest = len(report.skipped) - MAX_SKIPPED_SHOWN
                line(f"  … and {rest} more (see --format json)")
        return buf.getvalue()
