"""The Table-8 report as JSON (`boundary-audit/table8/v1`, reports/table8.json).

A frozen shape, separate from the dataclasses: keys in a fixed order, every list in report
order, two-space indent, UTF-8, one trailing newline. Fields (see docs/adapters.md): `schema`,
`tool`, `command`, `sandbox`, `tasks` {select, count, core}, `reply_sets`, `baseline`,
`probes`, `baseline_facts`, `notes`, `rows` and `variants` (each a row object: system, path,
title, extra, study {contract, anchor, observed}, contract, class, shell_parses, parse_layers,
observed, transport, preprocess, anchors, static, facts, measures, harness, harness_check,
fix, marked, notes, skipped). `harness_check` is null unless `--harness-reports` gave a
`harness compare` report for the path: {report, command, driver, transport, selection,
compared, agreeing, unexplained}.
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit.probes.model import ProbeFact
from boundary_audit.results.table8 import HarnessCheck, Measure, Row, StaticCheck, Table8Report


def _fact(f: ProbeFact) -> dict[str, Any]:
    return {
        "probe": f.probe,
        "outcome": f.outcome,
        "value": f.value,
        "meaning": f.meaning,
        "detail": f.detail,
    }


def _measure(m: Measure) -> dict[str, Any]:
    return {
        "reply_set": m.reply_set,
        "tasks": m.tasks,
        "passed_raw": m.passed_raw,
        "passed_boundary": m.passed_boundary,
        "damage_pp": m.damage_pp,
        "families": [{"family": f.family, "damage_pp": f.points} for f in m.families],
        "broken": list(m.broken),
        "fixed": list(m.fixed),
        "boundary_broken": list(m.boundary_broken),
        "reasons": {t: m.reasons[t] for t in (*m.broken, *m.boundary_broken) if t in m.reasons},
        "errors": m.errors,
        "error": m.error,
    }


def _static(s: StaticCheck | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "source": s.source,
        "commit": s.commit,
        "pinned": s.pinned,
        "note": s.note,
        "anchors": [
            {
                "anchor": a.anchor,
                "kind": a.kind,
                "expected": a.expected,
                "status": a.status,
                "detail": a.detail,
            }
            for a in s.anchors
        ],
    }


def _check(c: HarnessCheck | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "report": c.report,
        "command": c.command,
        "driver": c.driver,
        "transport": c.transport,
        "selection": c.selection,
        "compared": c.compared,
        "agreeing": c.agreeing,
        "unexplained": c.unexplained,
    }


def row_json(r: Row) -> dict[str, Any]:
    """One row in the v1 shape."""
    return {
        "system": r.system,
        "system_name": r.system_name,
        "path": r.path,
        "title": r.title,
        "extra": r.extra,
        "study": {
            "contract": r.study_contract,
            "anchor": r.study_anchor,
            "observed": r.study_observed,
        },
        "contract": r.contract,
        "class": r.boundary_class,
        "shell_parses": r.shell_parses,
        "parse_layers": list(r.parse_layers),
        "observed": r.observed,
        "transport": r.transport,
        "preprocess": list(r.preprocess),
        "anchors": list(r.anchors),
        "static": _static(r.static),
        "facts": [_fact(f) for f in r.facts],
        "measures": [_measure(m) for m in r.measures],
        "harness": [_measure(m) for m in r.harness],
        "harness_check": _check(r.harness_check),
        "fix": r.fix,
        "marked": r.marked,
        "notes": list(r.notes),
        "skipped": r.skipped,
    }


def report_json(r: Table8Report) -> dict[str, Any]:
    """The whole report in the v1 shape."""
    return {
        "schema": r.schema,
        "title": r.title,
        "tool": {"name": "boundary-audit", "version": r.tool_version},
        "command": r.command,
        "sandbox": r.sandbox,
        "tasks": {"select": r.task_select, "count": r.task_count, "core": r.core_count},
        "reply_sets": list(r.reply_sets),
        "baseline": r.baseline,
        "probes": list(r.probes),
        "baseline_facts": [_fact(f) for f in r.baseline_facts],
        "notes": list(r.notes),
        "rows": [row_json(x) for x in r.rows],
        "variants": [row_json(x) for x in r.variants],
    }


class Table8Json:
    """`render(report) -> str`."""

    def render(self, report: Table8Report) -> str:
        """Indented JSON with a trailing newline."""
        return json.dumps(report_json(report), indent=2, ensure_ascii=False) + "\n"
