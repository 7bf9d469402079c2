"""`crossover --format json`: the `boundary-audit/crossover/v1` document.

Keys in a fixed order: schema, tool, command, sandbox, tasks, reply_sets, baseline,
transports, statistics, notes, errors, configurations, rank_flips, runs. Rates and effects are
numbers in percent / percentage points rounded once to one decimal (the metrics' rule); p values
are rounded to six decimals and also given exactly (`"4/16384"`). `runs` are the probe runs the
crossover was computed from (the probe JSON's run objects), so that `crossover --runs` can read
this document back; `timings=False` leaves their durations out, and the same inputs then give
the same bytes.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from boundary_audit import metrics
from boundary_audit.results.crossover import (
    CELLS,
    EFFECTS,
    SCHEMA,
    CellRate,
    ConfigCrossover,
    CrossoverReport,
    Effect,
    RankFlips,
)


def pct(value: Fraction) -> float:
    """Percent (or percentage points), one decimal."""
    return float(metrics.round_half_away(metrics.to_points(value)))


def p_value(p: Fraction) -> float:
    """A probability rounded to six decimals."""
    return float(metrics.round_half_away(p, 6))


def _cell(c: CellRate) -> dict[str, Any]:
    return {
        "passed": c.passed,
        "total": c.total,
        "pass_rate": pct(c.rate),
        "families": [
            {"family": f, "passed": p, "total": t, "pass_rate": pct(Fraction(p, t))}
            for f, p, t in c.families
        ],
    }


def _effect(e: Effect) -> dict[str, Any]:
    return {
        "points": pct(e.value),
        "ci": [pct(e.interval.low), pct(e.interval.high)],
        "sign_test": {
            "negative": e.sign_test.negative,
            "positive": e.sign_test.positive,
            "zero": e.sign_test.zero,
            "p": p_value(e.sign_test.p),
            "p_exact": str(e.sign_test.p),
        },
        "p_holm": p_value(e.p_holm),
        "p_holm_exact": str(e.p_holm),
        "lofo": [pct(e.lofo.low), pct(e.lofo.high)],
        "families": [{"family": f, "points": pct(v)} for f, v in e.families],
    }


def _config(c: ConfigCrossover) -> dict[str, Any]:
    return {
        "model": c.model,
        "transport": c.transport,
        "baseline": c.baseline,
        "reply_sets": {k: list(v) for k, v in c.reply_sets.items()},
        "draws": list(c.draws),
        "tasks": c.tasks,
        "cells": {name: _cell(c.cells[name]) for name in CELLS},
        "effects": {name: _effect(c.effects[name]) for name in EFFECTS},
        "per_draw": [
            {
                "draw": d.draw,
                "cells": {n: pct(d.cells[n].rate) for n in CELLS},
                "effects": {n: pct(d.effects[n]) for n in EFFECTS},
            }
            for d in c.per_draw
        ],
        "spread": {n: [pct(s.low), pct(s.high)] for n, s in c.spread.items()},
    }


def _flips(f: RankFlips) -> dict[str, Any]:
    return {
        "transport": f.transport,
        "pairs": f.pairs,
        "comparable": f.comparable,
        "flips": [
            {
                "first": x.first,
                "second": x.second,
                "raw_margin_points": pct(x.raw_margin),
                "boundary_margin_points": pct(x.boundary_margin),
                "raw_margin_tasks": float(x.raw_tasks),
                "boundary_margin_tasks": float(x.boundary_tasks),
                "single_task": x.single_task,
            }
            for x in f.flips
        ],
    }


def document(report: CrossoverReport, *, timings: bool = True) -> dict[str, Any]:
    """The report as JSON-ready data, keys in their fixed order."""
    b = report.bootstrap
    return {
        "schema": SCHEMA,
        "tool": {"name": "boundary-audit", "version": report.tool_version},
        "command": report.command,
        "sandbox": report.sandbox,
        "tasks": len(report.tasks),
        "reply_sets": list(report.reply_sets),
        "baseline": report.baseline,
        "transports": list(report.transports),
        "statistics": {
            "sign_test": "enumerated family-sign test (two-sided) over the families",
            "holm": "across the configurations, per transport and effect",
            "bootstrap": b.method,
            "resamples": b.resamples,
            "seed": b.seed if b.resamples else None,
            "level": pct(b.level),
            "unit": "(task, draw)",
        },
        "notes": list(report.notes),
        "errors": report.errors,
        "configurations": [_config(c) for c in report.configs],
        "rank_flips": [_flips(f) for f in report.flips],
        "runs": [r.as_json(timings=timings) for r in report.records],
    }


class CrossoverJson:
    """Renders a `CrossoverReport` as JSON."""

    def __init__(self, *, timings: bool = True) -> None:
        self.timings = timings

    def render(self, report: CrossoverReport) -> str:
        """The whole document, ending with a newline."""
        text = json.dumps(document(report, timings=self.timings), indent=2, ensure_ascii=False)
        return text + "\n"
