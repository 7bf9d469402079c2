"""`probe --format json`: the `boundary-audit/probe/v1` document.

Key order is fixed (schema, tool, command, sandbox, tasks, reply_sets, transports, notes,
skipped, runs, summary), the text ends with a newline, and nothing depends on the clock except
each run's `duration_s`, which `timings=False` (`--no-timings`) leaves out so that the same
inputs give byte-identical output. Percentages and percentage points are numbers rounded once
to one decimal by the metrics' rule (half away from zero); pass rates are family-weighted. A
summary of runs with several draws has a last key, `draws` (each draw's rate and their spread);
without draws the document is what it always was.
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit import metrics
from boundary_audit.results.probe import CellSummary, DamageSummary, DrawSummary, ProbeReport

SCHEMA = "boundary-audit/probe/v1"


class ProbeJsonFormat:
    """Renders a `ProbeReport` as JSON."""

    def __init__(self, *, timings: bool = True) -> None:
        self.timings = timings

    def render(self, report: ProbeReport) -> str:
        """The whole document, ending with a newline."""
        return json.dumps(self.document(report), indent=2, ensure_ascii=False) + "\n"

    def document(self, report: ProbeReport) -> dict[str, Any]:
        """The document as plain JSON-ready data, keys in their fixed order."""
        s = report.summary
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "tool": {"name": "boundary-audit", "version": report.tool_version},
            "command": report.command,
            "sandbox": report.sandbox,
            "tasks": len(report.tasks),
            "reply_sets": list(report.reply_sets),
            "transports": list(report.transports),
            "notes": list(report.notes),
            "skipped": [{"transport": k.transport, "reason": k.reason} for k in report.skipped],
            "runs": [r.as_json(timings=self.timings) for r in report.records],
            "summary": {
                "runs": s.runs,
                "passed": s.passed,
                "errors": s.errors,
                "timed_out": s.timed_out,
                "cells": [_cell(c) for c in s.cells],
                "damage": [_damage(d) for d in s.damage],
            },
        }
        if s.draws:
            doc["summary"]["draws"] = [_draws(d) for d in s.draws]
        return doc


def _pct(value: Any) -> float:
    return float(metrics.percent(value))


def _points(value: Any) -> float:
    return float(metrics.round_half_away(metrics.to_points(value)))


def _cell(c: CellSummary) -> dict[str, Any]:
    return {
        "reply_set": c.reply_set,
        "transport": c.transport,
        "passed": c.passed,
        "total": c.total,
        "pass_rate": _pct(c.rate),
        "errors": c.errors,
        "timed_out": c.timed_out,
        "families": [
            {"family": f.family, "passed": f.passed, "total": f.total, "pass_rate": _pct(f.rate)}
            for f in c.families
        ],
    }


def _draws(d: DrawSummary) -> dict[str, Any]:
    return {
        "reply_set": d.reply_set,
        "transport": d.transport,
        "draws": [
            {"draw": n, "reply_set": label, "passed": p, "total": t, "pass_rate": _pct(rate)}
            for n, label, p, t, rate in d.draws
        ],
        "mean": _pct(d.mean),
        "low": _pct(d.low),
        "high": _pct(d.high),
        "spread_points": _points(d.spread),
    }


def _damage(d: DamageSummary) -> dict[str, Any]:
    return {
        "reply_set": d.reply_set,
        "transport": d.transport,
        "baseline": d.baseline,
        "points": _points(d.effect),
        "families": [{"family": f, "points": _points(v)} for f, v in d.families],
        "pass_to_fail": list(d.pass_to_fail),
        "fail_to_pass": list(d.fail_to_pass),
    }
