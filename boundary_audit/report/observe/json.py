"""The observe report as JSON (`boundary-audit/observe/v1`).

Keys in a fixed order, two-space indent, one trailing newline: `schema`, `tool`, `command`,
`harness` {name, argv, confinement, exit_code, timed_out, complete}, `source`, `contract`,
`turns` (each model request: request, api, shape, reply, tool, why), `chains` (per canary:
label, reply, token, arrived, complete, outcome, hops [{trace, pid, argv, via, parses, shell,
detail}]), `path` (the derived adapter path: id, contract, class, shell_parses, parse_layers,
observed, transport {name, params}, expect, notes; null when none), `persistent`, `relays`,
`compared`, `differences` [{field, observed, adapter, explanation}], `facts`,
`skipped_probes`, `table8` (the `boundary-audit/table8/v1` document of the harness's row, or
null without a damage run), `notes`.
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.report.table8.json import report_json
from boundary_audit.results.observe import ObserveReport


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if hasattr(v, "value") and isinstance(v.value, str):
        return v.value
    return v


def path_json(p: BoundaryPath | None) -> dict[str, Any] | None:
    """The derived path's compared fields."""
    if p is None:
        return None
    return {
        "id": p.id,
        "contract": p.contract.value,
        "class": p.boundary_class.value,
        "shell_parses": p.shell_parses,
        "parse_layers": list(p.parse_layers),
        "observed": p.observed,
        "transport": {"name": p.transport.name, "params": _plain(dict(p.transport.params))},
        "expect": dict(p.expect),
        "notes": list(p.notes),
    }


def report_dict(r: ObserveReport) -> dict[str, Any]:
    """The whole report as plain data."""
    return {
        "schema": r.schema,
        "tool": {"name": "boundary-audit", "version": r.tool_version},
        "command": r.command,
        "harness": {
            "name": r.name,
            "argv": list(r.harness),
            "confinement": r.confinement,
            "exit_code": r.exit_code,
            "timed_out": r.timed_out,
            "complete": r.complete,
        },
        "source": r.source,
        "contract": r.contract,
        "turns": [
            {
                "request": t.request,
                "api": t.api,
                "shape": t.shape,
                "reply": t.reply,
                "tool": t.tool,
                "why": t.why,
            }
            for t in r.turns
        ],  # fmt: skip
        "chains": [
            {
                "label": c.label,
                "reply": c.reply,
                "token": c.token,
                "arrived": c.arrived,
                "complete": c.complete,
                "outcome": c.outcome,
                "hops": [
                    {
                        "trace": h.trace,
                        "pid": h.pid,
                        "argv": list(h.argv),
                        "via": h.via,
                        "parses": h.parses,
                        "shell": h.shell,
                        "detail": h.detail,
                    }
                    for h in c.hops
                ],  # fmt: skip
            }
            for c in r.chains
        ],
        "path": path_json(r.path),
        "persistent": r.persistent,
        "relays": list(r.relays),
        "compared": r.compared,
        "differences": [
            {
                "field": d.field,
                "observed": _plain(d.observed),
                "adapter": _plain(d.adapter),
                "explanation": d.explanation,
            }
            for d in r.differences
        ],  # fmt: skip
        "facts": [
            {"probe": f.probe, "outcome": f.outcome, "value": f.value, "meaning": f.meaning}
            for f in r.facts
        ],
        "skipped_probes": [{"probe": p, "why": why} for p, why in r.skipped_probes],
        "table8": report_json(r.table8) if r.table8 is not None else None,
        "notes": list(r.notes),
    }


class ObserveJson:
    """`--format json`."""

    def render(self, report: ObserveReport) -> str:
        return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
