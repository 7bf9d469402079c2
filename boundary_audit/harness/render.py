"""Pure renderers of a `HarnessReport`: JSON (`boundary-audit/harness/v1`), Markdown, plain text.

Same report in, byte-identical text out: fixed key order, families in suite order, runs in
(transport, reply set, task) order, no timestamps, and durations only when the report was built
with timings. Markdown is what `reports/harness/<system>.md` holds; its header carries the
command that regenerates it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from boundary_audit.harness.compare import Difference
from boundary_audit.harness.report import SCHEMA, HarnessReport, Measurement
from boundary_audit.harness.suite import CellRun
from boundary_audit.metrics import format_percent, format_points


def _rate(m: Measurement, rs: str, family: str | None = None) -> str:
    rate = m.rates.get(rs)
    if rate is None:
        return "-"
    if family is None:
        return f"{format_percent(rate.headline)} ({rate.tasks.count})"
    fam = rate.by_family.get(family)
    return fam.count if fam else "-"


def _run_json(run: CellRun, timings: bool, state: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "task_id": run.task_id,
        "family": run.family,
        "tier": run.tier,
        "core": run.core,
        "transport": run.transport,
        "reply_set": run.reply_set,
        "reply_id": run.reply_id,
        "passed": run.passed,
        "reason": run.reason,
        "status": run.status,
        "detail": run.detail,
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
    }
    if timings:
        doc["duration_s"] = run.duration_s
    if state:
        doc["final_state"] = list(run.final_state)
    return doc


def _measurement_json(m: Measurement, report: HarnessReport) -> dict[str, Any]:
    rates = {
        rs: {
            "passed": r.tasks.passed,
            "tasks": r.tasks.total,
            "family_weighted_percent": format_percent(r.headline),
            "by_family": {
                f: {"passed": v.passed, "tasks": v.total}
                for f in report.families
                if (v := r.by_family.get(f))
            },
        }
        for rs, r in sorted(m.rates.items())
    }
    damage = {
        rs: {
            "points": format_points(d.effect),
            "pass_to_fail": list(d.pass_to_fail),
            "fail_to_pass": list(d.fail_to_pass),
        }
        for rs, d in sorted(m.damage.items())
    }
    return {"transport": m.label, "role": m.role, "pass_rates": rates, "damage_vs_raw": damage}


def render_json(report: HarnessReport) -> str:
    """The machine-readable report, one JSON document ending in a newline."""
    spec, comp = report.spec, report.comparison
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "tool": f"boundary-audit {report.tool_version}",
        "command": report.command,
        "system": {
            "name": spec.name,
            "title": spec.title,
            "version": spec.version,
            "packages": list(spec.packages),
            "python": report.python_version,
            "boundary_class": spec.boundary_class.value,
            "contract": spec.contract.value,
            "anchors": [{"where": a.where, "what": a.what} for a in spec.anchors],
        },
        "sandbox": report.sandbox,
        "selection": report.selection,
        "reply_sets": list(report.reply_sets),
        "measurements": [_measurement_json(m, report) for m in report.measurements],
        "harness_statuses": {
            rs: dict(sorted(c.items())) for rs, c in report.status_counts().items()
        },
        "agreement": None,
        "differences": [],
        "explanations": [],
        "runs": [_run_json(r, report.timings) for m in report.measurements for r in m.runs],
    }
    if comp is not None:
        doc["agreement"] = {
            "against": report.measurements[1].label,
            "compared": comp.compared,
            "agreeing": comp.compared - len(comp.differences),
            "percent": format_percent(comp.agreement_rate),
            "unexplained": len(comp.unexplained),
        }
        doc["differences"] = [_difference_json(d) for d in comp.differences]
        doc["explanations"] = [
            {"id": e.id, "kind": e.kind, "text": e.text, "covers": [f"{rs}/{t}" for rs, t in keys]}
            for e, keys in _by_explanation(comp.differences)
            if e is not None
        ]
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _difference_json(d: Difference) -> dict[str, Any]:
    return {
        "reply_set": d.harness.reply_set,
        "task_id": d.harness.task_id,
        "family": d.harness.family,
        "explanation": d.explanation.id if d.explanation else None,
        "harness": _run_json(d.harness, False, state=True),
        "against": _run_json(d.against, False, state=True),
    }


def _by_explanation(diffs: Sequence[Difference]) -> list[tuple[Any, list[tuple[str, str]]]]:
    groups: dict[str | None, tuple[Any, list[tuple[str, str]]]] = {}
    for d in diffs:
        key = d.explanation.id if d.explanation else None
        groups.setdefault(key, (d.explanation, []))[1].append(d.key)
    named = [groups[k] for k in groups if k is not None]
    return named + ([groups[None]] if None in groups else [])


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


def _outcome(run: CellRun) -> str:
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
    out += _comparison_section(report, markdown)
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


def _comparison_section(report: HarnessReport, markdown: bool) -> list[str]:
    comp = report.comparison
    if comp is None:
        return []
    against = report.measurements[1].label
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
    for expl, keys in _by_explanation(comp.differences):
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
