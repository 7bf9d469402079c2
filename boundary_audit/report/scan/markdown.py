"""Markdown output for code review: what was scanned, one table of active findings, the
suppressed ones, and the inputs that were skipped.

Cells are escaped for GitHub-flavoured Markdown (pipes, backticks, newlines, HTML), so a
hostile path or snippet from the scanned repository cannot break the table or inject markup.
"""

from __future__ import annotations

import re

from boundary_audit.finding import Finding
from boundary_audit.results.scan import (
    BoundaryRow,
    ScanReport,
    boundary_row,
    evidence_text,
    fix_text,
    plural,
)

_HEADER = (
    "Severity",
    "Check",
    "Class",
    "Layers",
    "Anchor",
    "Contract",
    "Damage (core)",
    "Fix (verified)",
    "Path",
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


def _damage(row: BoundaryRow) -> str:
    if row.status == "not-model":
        return text(row.why)
    if row.status == "measured" and row.damage is not None:
        return text(row.damage.text())
    return {"static": "not probed", "error": "error: " + row.why}.get(
        row.status, text("not measured: " + row.why)
    )


def _fix(row: BoundaryRow) -> str:
    f = row.finding
    words = text(fix_text(f))
    if row.status == "measured" and row.fix and row.damage is not None:
        after = row.fixed.text() if row.fixed is not None else "not measured"
        return f"{words}: {text(row.damage.text())} → {text(after)}"
    return words


def _path(f: Finding) -> str:
    p = f.boundary_path
    if p is None:
        return ""
    routes = "<br>".join(
        code(r.transport.label() + "".join(f" after {s.label()}" for s in r.preprocess))
        + (f" ({text(r.assumes)})" if r.assumes else "")
        for r in p.routes
    )
    return routes + (" (from the sink's text)" if p.hinted else "")


def _finding_row(row: BoundaryRow, snippet: str) -> str:
    f = row.finding
    sink = code(f.sink) + (f"<br>{code(snippet)}" if snippet else "")
    return _row(
        [
            f.severity.value,
            f"{f.code} {text(f.name)}",
            f.boundary_class.value,
            str(f.parse_layers),
            code(f.primary.anchor()),
            f.contract.value,
            _damage(row),
            _fix(row),
            _path(f),
            sink,
            code(f.sanitizer or "") or "none",
            "yes" if f.model_controlled else "no",
            f.confidence.value,
            "<br>".join(text(evidence_text(ev) + f" [{ev.role}]") for ev in f.evidence)
            or "not measured",
            text(f.message),
        ]
    )


def _findings_table(report: ScanReport, findings: tuple[Finding, ...]) -> list[str]:
    lines = [_row(list(_HEADER)), _row(["---"] * len(_HEADER))]
    lines += [_finding_row(boundary_row(report, f), report.sink_text_of(f)) for f in findings]
    return lines


def _header(report: ScanReport) -> list[str]:
    s = report.summary
    langs = ", ".join(f"{k} {v}" for k, v in report.languages.items()) or "none"
    return (
        [
            f"# boundary-audit static scan: {text(report.target_name)}",
            "",
            f"- Target: {code(report.target)}",
            f"- Repository: {code(report.url)}",
            f"- Commit: {code(report.commit or '(none)')}",
            f"- Tool: boundary-audit {text(report.tool_version)}",
            f"- Regenerate: {code(report.command)}"
            if report.command
            else "- Regenerate: (unknown)",
            f"- Files scanned: {s.files_scanned} ({text(langs)}); skipped: {s.files_skipped}"
            + (f"; left out by scope: {s.files_out_of_scope}" if s.files_out_of_scope else ""),
            f"- Findings: {s.findings} ({s.active} active, {s.suppressed} suppressed"
            + (f", {s.filtered} below threshold" if s.filtered else "")
            + ")",
        ]
        + _probe(report)
        + [""]
    )


def _probe(report: ScanReport) -> list[str]:
    p = report.probe
    if p is None:
        return []
    out = [
        f"- Measured: {text(', '.join(p.reply_sets))} replies over {p.core} core tasks "
        f"(families weighted equally; {p.tasks - p.core} boundary tasks reported apart), "
        f"in {text(report.sandbox)}"
    ]
    if p.errors:
        first = p.errors[0]
        out.append(
            f"- Errors: {plural(p.error_runs, 'run')} could not be carried out (left out of the "
            f"pass rates and the damage): {code(first.transport)}: {text(first.reason)}"
        )
    out += [f"- Not measured: {code(t)}: {text(w)}" for t, w in p.not_measured]
    for f in report.active:
        m = report.adapter_of(f)
        if m is None:
            continue
        out.append(f"- {code(f.primary.anchor())} against Table 8's {code(m.label)}:")
        out += [
            f"  - {text(c.field)}: scan {code(c.scan) or '(none)'} {'=' if c.same else '≠'} "
            f"adapter {code(c.adapter) or '(none)'}" + (f": {text(c.note)}" if c.note else "")
            for c in m.fields
        ]
    return out


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
