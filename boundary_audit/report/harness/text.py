"""Pure renderers of a `HarnessReport` for people: Markdown and plain text (JSON: render_json).

Same report in, byte-identical text out: families in suite order, disagreements grouped by
their explanation, no timestamps, durations only when the report was built with timings.
Markdown is what `reports/harness/<system>.md` holds; its header carries the command that
regenerates it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from boundary_audit.metrics import format_percent, format_points
from boundary_audit.record import RunRecord
from boundary_audit.report.harness.json import render_json
from boundary_audit.results.harness import Comparison, HarnessReport, Measurement, by_explanation

__all__ = ["render_json", "render_markdown", "render_text"]


def _rate(m: Measurement, rs: str, family: str | None = None) -> str:
    rate = m.rates.get(rs)
    if rate is None:
        return "-"
    if family is None:
        return f"{format_percent(rate.headline)} ({rate.tasks.count})"
    fam = rate.by_family.get(family)
    return fam.count if fam else "-"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in [header, *rows]]
        lines = ["| " + " | ".join(r) + " |" for r in esc]
        return [lines[0], "|" + "|".join("---" for _ in header) + "|", *lines[1:]]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]


def _outcome(run: RunRecord) -> str:
    verdict = "PASS" if run.passed else "FAIL"
    reason = "" if run.passed else f": {run.reason}"
    said = f" ({run.detail})" if run.detail and run.detail != run.status else ""
    return f"{verdict} [{run.status}]{reason}{said}"


def _heading(text: str, level: int, markdown: bool) -> str:
    if markdown:
        return "#" * level + " " + text
    return text + "\n" + ("=" if level == 1 else "-") * len(text)


def _code(text: str, markdown: bool) -> str:
    return f"`{text}`" if markdown else text


def render_markdown(report: HarnessReport) -> str:
    """The review report (reports/harness/<system>.md)."""
    return "\n".join(_document(report, markdown=True)) + "\n"


def render_text(report: HarnessReport) -> str:
    """The terminal rendering: the same sections as plain, aligned text."""
    return "\n".join(_document(report, markdown=False)) + "\n"


def _document(report: HarnessReport, markdown: bool) -> list[str]:
    spec = report.spec
    out = [
        _heading(f"Real harness: {spec.title}", 1, markdown),
        "",
        f"Regenerate with: {_code(report.command, markdown)}",
        "",
        f"- harness: {', '.join(spec.packages)} (exact lock), Python {report.python_version}, "
        f"driven as {_code(report.harness.label, markdown)}",
        f"- boundary: {spec.boundary_class.value}, {spec.contract.value} contract",
        f"- sandbox: {report.sandbox}; tasks: {report.selection}; "
        f"reply sets: {', '.join(report.reply_sets)}",
        f"- tool: boundary-audit {report.tool_version}",
        "- upstream code reproduced or called:",
        *[f"  - {_code(a.where, markdown)}: {a.what}" for a in spec.anchors],
    ]
    out += _rates_section(report, markdown) + _status_section(report, markdown)
    for comp in report.comparisons:
        out += _comparison_section(report, comp, markdown)
    if report.timings:
        out += _timings_section(report, markdown)
    return out


def _rates_section(report: HarnessReport, markdown: bool) -> list[str]:
    header = ["family"] + [
        f"{m.label} {rs}" for m in report.measurements for rs in report.reply_sets
    ]
    rows = [
        [f] + [_rate(m, rs, f) for m in report.measurements for rs in report.reply_sets]
        for f in report.families
    ]
    rows.append(
        ["all (family-weighted %)"]
        + [_rate(m, rs) for m in report.measurements for rs in report.reply_sets]
    )
    out = ["", _heading("Pass rates", 2, markdown), "", *_table(header, rows, markdown)]
    damaged = [m for m in report.measurements if m.damage]
    if damaged:
        head = ["transport"] + [f"{rs} (pp vs raw)" for rs in report.reply_sets]
        body = [
            [m.label]
            + [
                format_points(m.damage[rs].effect) if rs in m.damage else "-"
                for rs in report.reply_sets
            ]
            for m in damaged
        ]
        out += [
            "",
            f"Damage against {_code('raw', markdown)} (family-weighted points):",
            "",
            *_table(head, body, markdown),
        ]
    return out


def _status_section(report: HarnessReport, markdown: bool) -> list[str]:
    counts = report.status_counts()
    statuses = sorted({s for c in counts.values() for s in c})
    rows = [[s] + [str(counts[rs][s]) for rs in report.reply_sets] for s in statuses]
    return [
        "",
        _heading("What the harness itself reported", 2, markdown),
        "",
        *_table(["status", *report.reply_sets], rows, markdown),
    ]


def _comparison_section(report: HarnessReport, comp: Comparison, markdown: bool) -> list[str]:
    against = comp.against
    agree = comp.compared - len(comp.differences)
    out = [
        "",
        _heading(f"Agreement with {_code(against, markdown)}", 2, markdown),
        "",
        f"{agree} of {comp.compared} replies have the same outcome "
        f"({format_percent(comp.agreement_rate)}%); {len(comp.differences)} differ, "
        f"{len(comp.unexplained)} without a written explanation.",
    ]
    by_key = {d.key: d for d in comp.differences}
    for expl, keys in by_explanation(comp.differences):
        title = f"{expl.id} ({expl.kind})" if expl else "UNEXPLAINED"
        out += ["", _heading(title, 3, markdown), ""]
        if expl:
            out += [expl.text, ""]
        rows = [
            [k[1], k[0], _outcome(by_key[k].harness), _outcome(by_key[k].against)] for k in keys
        ]
        out += _table(["task", "reply set", report.harness.label, against], rows, markdown)
        out += ["", "Final work dirs (harness | against):"]
        for k in keys:
            d = by_key[k]
            h_state = ", ".join(d.harness.final_state) or "(empty)"
            a_state = ", ".join(d.against.final_state) or "(empty)"
            out.append(
                f"- {k[1]} ({k[0]}): {_code(h_state, markdown)} | {_code(a_state, markdown)}"
            )
    return out


def _timings_section(report: HarnessReport, markdown: bool) -> list[str]:
    means = {
        m.label: Fraction(sum(int(r.duration_s * 1000) for r in m.runs), len(m.runs))
        for m in report.measurements
    }
    base = means.get("raw")
    rows = [
        [label, f"{float(ms):.0f}", f"{float(ms / base):.1f}x" if base else "-"]
        for label, ms in means.items()
    ]
    header = ["transport", "mean ms", "vs raw"]
    return ["", _heading("Cost per run", 2, markdown), "", *_table(header, rows, markdown)]
