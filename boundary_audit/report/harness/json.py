"""The machine-readable harness report: JSON, schema `boundary-audit/harness/v1`.

Fixed key order, families in suite order, runs in (transport, reply set, task) order, no
timestamps, durations only when the report was built with timings; ends with a newline.
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit.metrics import format_percent, format_points
from boundary_audit.record import RunRecord
from boundary_audit.results.harness import (
    SCHEMA,
    Comparison,
    Difference,
    HarnessReport,
    Measurement,
    by_explanation,
)


def _run_json(run: RunRecord, timings: bool, state: bool = False) -> dict[str, Any]:
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
    spec = report.spec
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
        "comparisons": [_comparison_json(c) for c in report.comparisons],
        "runs": [_run_json(r, report.timings) for m in report.measurements for r in m.runs],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _comparison_json(comp: Comparison) -> dict[str, Any]:
    return {
        "against": comp.against,
        "compared": comp.compared,
        "agreeing": comp.compared - len(comp.differences),
        "percent": format_percent(comp.agreement_rate),
        "unexplained": len(comp.unexplained),
        "differences": [_difference_json(d) for d in comp.differences],
        "explanations": [
            {"id": e.id, "kind": e.kind, "text": e.text, "covers": [f"{rs}/{t}" for rs, t in keys]}
            for e, keys in by_explanation(comp.differences)
            if e is not None
        ],
    }


def _difference_json(d: Difference) -> dict[str, Any]:
    return {
        "reply_set": d.harness.reply_set,
        "task_id": d.harness.task_id,
        "family": d.harness.family,
        "explanation": d.explanation.id if d.explanation else None,
        "harness": _run_json(d.harness, False, state=True),
        "against": _run_json(d.against, False, state=True),
    }
