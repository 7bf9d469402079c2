"""`fleet --format json`: the `boundary-audit/fleet/v1` document (docs/fleet.md, "JSON").

Keys in a fixed order, no durations, no worker names and no dates: the same store gives the
same bytes whatever the number of workers. The previous run's document is what the next run
diffs against (`results.fleet.snapshot_of_document` reads it back).
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit.report.crossover.json import document as crossover_document
from boundary_audit.results.fleet import SCHEMA, BoundaryRow, Change, Damage, FleetReport
from boundary_audit.results.table8 import Measure


def _damage(d: Damage) -> dict[str, Any]:
    return {
        "reply_set": d.reply_set,
        "low": d.low,
        "high": d.high,
        "tasks": d.tasks,
        "errors": d.errors,
    }


def _boundary(b: BoundaryRow) -> dict[str, Any]:
    return {
        "fingerprint": b.fingerprint,
        "class": b.boundary_class,
        "location": b.location,
        "contract": b.contract,
        "path": b.path,
        "routes": b.routes,
        "damage": [_damage(d) for d in b.damage],
        "fix": b.fix,
        "fix_damage": [_damage(d) for d in b.fix_damage],
        "verified_fix": b.verified_fix,
        "confidence": b.confidence,
        "adapter": b.adapter,
    }


def _measure(m: Measure) -> dict[str, Any]:
    return {
        "reply_set": m.reply_set,
        "tasks": m.tasks,
        "passed_raw": m.passed_raw,
        "passed_boundary": m.passed_boundary,
        "damage_pp": m.damage_pp if m.measured else None,
        "broken": list(m.broken),
        "errors": m.errors,
    }


def _change(c: Change) -> dict[str, Any]:
    return {
        "kind": c.kind,
        "target": c.target,
        "fingerprint": c.fingerprint,
        "class": c.boundary_class,
        "location": c.location,
        "before": dict(c.before),
        "after": dict(c.after),
    }


CROSSOVER_KEYS = ("transports", "statistics", "notes", "errors", "configurations", "rank_flips")


def document(report: FleetReport) -> dict[str, Any]:
    """The report as JSON-ready data."""
    return {
        "schema": SCHEMA,
        "tool": {"name": "boundary-audit", "version": report.tool_version},
        "plan": report.plan,
        "command": report.command,
        "sandbox": report.sandbox,
        "tasks": report.tasks,
        "reply_sets": list(report.reply_sets),
        "transports": list(report.transports),
        "units": {
            "total": report.units.total,
            "done": report.units.done,
            "failed": report.units.failed,
        },
        "complete": report.complete,
        "failures": [{"kind": k, "units": n, "reason": why} for k, n, why in report.failures],
        "targets": [
            {
                "name": t.name,
                "repo": t.repo,
                "commit": t.commit,
                "error": t.error,
                "findings": t.findings,
                "model_controlled": t.model_controlled,
                "error_runs": t.error_runs,
                "boundaries": [_boundary(b) for b in t.boundaries],
                "notes": list(t.notes),
            }
            for t in report.targets
        ],
        "named": [
            {"transport": n.transport, "measures": [_measure(m) for m in n.measures]}
            for n in report.named
        ],
        "crossovers": [
            {"scope": scope} | {k: crossover_document(x)[k] for k in CROSSOVER_KEYS}
            for scope, x in report.crossovers
        ],
        "diff": {
            "previous": report.diff.previous,
            "changes": [_change(c) for c in report.diff.changes],
        },
        "notes": list(report.notes),
    }


class FleetJson:
    """Renders a `FleetReport` as JSON."""

    def render(self, report: FleetReport) -> str:
        """The whole document, two-space indented, ending with a newline."""
        return json.dumps(document(report), indent=2, ensure_ascii=False) + "\n"
