"""`probe --format markdown`: the probe report for reviews and for `reports/`.

The header carries the command that regenerates the report, the tool version and the sandbox;
then one table of pass rates (and damage against raw) per (reply set, transport), one table per
reply set of pass rates by family, the damage by family, and the runs that a boundary broke
(passed on raw, failed through the boundary) with the validator's reason. No timings: the same
inputs give the same bytes.
"""

from __future__ import annotations

from boundary_audit import metrics
from boundary_audit.results.probe import (
    ProbeReport,
    multi_model_sets,
    summary_set,
)
from boundary_audit.taxonomy import BASELINE

DASH = "—"


def cell_text(text: str) -> str:
    """`text` made safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def code(text: str) -> str:
    """`text` as inline code, with a fence longer than any backtick run inside it."""
    longest = current = 0
    for ch in text:
        current = current + 1 if ch == "`" else 0
        longest = max(longest, current)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class ProbeMarkdownFormat:
    """Renders a `ProbeReport` as Markdown."""

    def render(self, report: ProbeReport) -> str:
        """The whole report, ending with a newline."""
        parts = [self._header(report), self._overview(report)]
        parts += [self._families(report, name) for name in _cell_sets(report)]
        if report.summary.draws:
            parts.append(self._draws(report))
        if report.summary.damage:
            parts.append(self._damage_by_family(report))
            parts.append(self._broken(report))
        if report.skipped:
            parts.append(self._skipped(report))
        return "\n".join(parts).rstrip("\n") + "\n"

    def _header(self, report: ProbeReport) -> str:
        lines = [
            "# boundary-audit probe report",
            "",
            f"- Regenerate: {code(report.command) if report.command else DASH}",
            f"- Tool: boundary-audit {report.tool_version}; sandbox: {report.sandbox}",
            f"- Tasks: {len(report.tasks)}; reply sets: {', '.join(report.reply_sets)}; "
            f"transports: {', '.join(report.transports)}",
            f"- Runs: {report.summary.runs}; passed: {report.summary.passed}; "
            f"errors: {report.summary.errors}; timed out: {report.summary.timed_out}",
        ]
        lines += [f"- Note: {note}" for note in report.notes]
        return "\n".join(lines) + "\n"

    def _overview(self, report: ProbeReport) -> str:
        damage = {(d.reply_set, d.transport): d.effect for d in report.summary.damage}
        rows = [
            "## Pass rate per reply set and transport",
            "",
            "Pass rates weight every family equally; damage is pass(transport) − pass(raw) "
            "in percentage points.",
            "",
            "| Reply set | Transport | Passed | Pass rate (%) | Damage vs raw (pp) | Errors "
            "| Timed out |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for c in report.summary.cells:
            effect = damage.get((c.reply_set, c.transport))
            shown = metrics.format_points(effect) if effect is not None else DASH
            rows.append(
                f"| {cell_text(c.reply_set)} | {cell_text(c.transport)} | {c.passed}/{c.total} "
                f"| {metrics.format_percent(c.rate)} | {shown} | {c.errors} | {c.timed_out} |"
            )
        return "\n".join(rows) + "\n"

    def _families(self, report: ProbeReport, reply_set: str) -> str:
        cells = [c for c in report.summary.cells if c.reply_set == reply_set]
        families = sorted({f.family for c in cells for f in c.families})
        head = "| Family | " + " | ".join(cell_text(c.transport) for c in cells) + " |"
        rows = [f"## Pass rate per family: reply set {code(reply_set)}", "", head]
        rows.append("|---|" + "---:|" * len(cells))
        for family in families:
            found = []
            for c in cells:
                rate = next((f for f in c.families if f.family == family), None)
                found.append(
                    f"{rate.passed}/{rate.total} ({metrics.format_percent(rate.rate)})"
                    if rate
                    else DASH
                )
            rows.append(f"| {cell_text(family)} | " + " | ".join(found) + " |")
        return "\n".join(rows) + "\n"

    def _draws(self, report: ProbeReport) -> str:
        rows = [
            "## Pass rate across draws",
            "",
            "| Reply set | Transport | Per draw (%) | Mean (%) | Range (%) | Spread (pp) |",
            "|---|---|---|---:|---:|---:|",
        ]
        for d in report.summary.draws:
            per = ", ".join(f"d{n} {metrics.format_percent(rate)}" for n, _, _, _, rate in d.draws)
            rows.append(
                f"| {cell_text(d.reply_set)} | {cell_text(d.transport)} | {per} "
                f"| {metrics.format_percent(d.mean)} | {metrics.format_percent(d.low)}–"
                f"{metrics.format_percent(d.high)} | {metrics.format_percent(d.spread)} |"
            )
        return "\n".join(rows) + "\n"

    def _damage_by_family(self, report: ProbeReport) -> str:
        damage = report.summary.damage
        families = sorted({f for d in damage for f, _ in d.families})
        head = " | ".join(cell_text(f"{d.reply_set} · {d.transport}") for d in damage)
        rows = [f"## Damage against {BASELINE} per family (pp)", "", f"| Family | {head} |"]
        rows.append("|---|" + "---:|" * len(damage))
        for family in families:
            values = [dict(d.families).get(family) for d in damage]
            shown = [metrics.format_points(v) if v is not None else DASH for v in values]
            rows.append(f"| {cell_text(family)} | " + " | ".join(shown) + " |")
        return "\n".join(rows) + "\n"

    def _broken(self, report: ProbeReport) -> str:
        damage = report.summary.damage
        flipped = {(d.reply_set, d.transport, t) for d in damage for t in d.pass_to_fail}
        multi = multi_model_sets(report.records)
        broken = [
            r for r in report.records if (summary_set(r, multi), r.transport, r.task_id) in flipped
        ]
        rows = [
            f"## What breaks: passed on {BASELINE}, failed through the boundary ({len(broken)})",
            "",
        ]
        if not broken:
            return "\n".join([*rows, "None."]) + "\n"
        rows += ["| Task | Reply set | Transport | Reason |", "|---|---|---|---|"]
        rows += [
            f"| {cell_text(r.task_id)} | {cell_text(r.reply_set)} | {cell_text(r.transport)} "
            f"| {cell_text(r.reason)} |"
            for r in broken
        ]
        return "\n".join(rows) + "\n"

    def _skipped(self, report: ProbeReport) -> str:
        rows = ["## Transports not run in this sandbox", "", "| Transport | Why |", "|---|---|"]
        rows += [f"| {cell_text(k.transport)} | {cell_text(k.reason)} |" for k in report.skipped]
        return "\n".join(rows) + "\n"


def _cell_sets(report: ProbeReport) -> list[str]:
    return list(dict.fromkeys(c.reply_set for c in report.summary.cells))
