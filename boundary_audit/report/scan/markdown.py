"""Markdown output for code review: what was scanned, one table of active findings, the
suppressed ones, and the inputs that were skipped.

Cells are escaped for GitHub-flavoured Markdown (pipes, backticks, newlines, HTML), so a
hostile path or snippet from the scanned repository cannot break the table or inject markup.
"""

from __future__ import annotations

import re

from boundary_audit.finding import Finding
from boundary_audit.results.scan import ScanReport, evidence_text

_HEADER = (
    "Severity",
    "Check",
    "Class",
    "Layers",
    "Anchor",
    "Sink",
    "Sanitizer",
    "Model-controlled",
    "Confidence",
    "Measured",
    "Message",
)


def text(value: str) -> str:
    """`value` as inline Markdown text that stays inside one table cell."""
    one = " ".join(value.split())
    one = re.sub(r"([\\`*_\[\]<>|#~])", r"\\\1", one)
    return one.replace("&", "&amp;")


def code(value: str) -> str:
    """`value` as a code span that stays inside one table cell ('' for empty)."""
    one = " ".join(value.split())
    if not one:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", one)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{fence}{pad}{one.replace('|', chr(92) + '|')}{pad}{fence}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _finding_row(f: Finding, snippet: str) -> str:
    sink = code(f.sink) + (f"<br>{code(snippet)}" if snippet else "")
    return _row(
        [
            f.severity.value,
            f"[{f.code}]({f.help_url}) {text(f.name)}",
            f.boundary_class.value,
            str(f.parse_layers),
            code(f.primary.anchor()),
            sink,
            code(f.sanitizer or "") or "none",
            "yes" if f.model_controlled else "no",
            f.confidence.value,
            "<br>".join(text(evidence_text(ev)) for ev in f.evidence) or "not measured",
            text(f.message),
        ]
    )


def _findings_table(report: ScanReport, findings: tuple[Finding, ...]) -> list[str]:
    lines = [_row(list(_HEADER)), _row(["---"] * len(_HEADER))]
    lines += [_finding_row(f, report.sink_text_of(f)) for f in findings]
    return lines


def _header(report: ScanReport) -> list[str]:
    s = report.summary
    langs = ", ".join(f"{k} {v}" for k, v in report.languages.items()) or "none"
    return [
        f"# boundary-audit static scan: {text(report.target_name)}",
        "",
        f"- Target: {code(report.target)}",
        f"- Repository: {code(report.url)}",
        f"- Commit: {code(report.commit or '(none)')}",
        f"- Tool: boundary-audit {text(report.tool_version)}",
        f"- Regenerate: {code(report.command)}" if report.command else "- Regenerate: (unknown)",
        f"- Files scanned: {s.files_scanned} ({text(langs)}); skipped: {s.files_skipped}"
        + (f"; left out by scope: {s.files_out_of_scope}" if s.files_out_of_scope else ""),
        f"- Findings: {s.findings} ({s.active} active, {s.suppressed} suppressed"
        + (f", {s.filtered} below threshold" if s.filtered else "")
        + ")",
        "",
    ]


def _suppressed(report: ScanReport) -> list[str]:
    hidden = [f for f in report.findings if f.suppressed is not None]
    if not hidden:
        return []
    lines = [
        "",
        f"## Suppressed ({len(hidden)})",
        "",
        "| Check | Anchor | Kind | Reason |",
        "| --- | --- | --- | --- |",
    ]
    for f in hidden:
        assert f.suppressed is not None
        lines.append(
            _row([f.code, code(f.primary.anchor()), f.suppressed.kind, text(f.suppressed.reason)])
        )
    return lines


def _skipped(report: ScanReport) -> list[str]:
    if not report.skipped:
        return []
    lines = ["", f"## Skipped inputs ({len(report.skipped)})", ""]
    lines += [f"- {code(s.path)}: {text(s.reason)}" for s in report.skipped]
    return lines


class MarkdownFormat:
    """`--format markdown`."""

    def render(self, report: ScanReport) -> str:
        """The document, ending with one newline."""
        lines = _header(report)
        active = report.active
        lines += [f"## Active findings ({len(active)})", ""]
        lines += _findings_table(report, active) if active else ["No active findings."]
        lines += _suppressed(report) + _skipped(report)
        return "\n".join(lines) + "\n"
