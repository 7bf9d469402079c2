"""The derived path as an adapter file's `[[paths]]` entry (system_adapters/*.toml format).

Paste it under an adapter's `[[paths]]` to make the observation an adapter path; its fields
are those `adapters.load` reads (id, title, row, extra, contract, boundary_class,
shell_parses, parse_layers, observed, fix, transport, notes, and `[paths.expect]` from the
fingerprint). No anchors: a black box has no source lines.
"""

from __future__ import annotations

import json
from typing import Any

from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.results.observe import ObserveReport


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(str(v), ensure_ascii=False)


def path_toml(path: BoundaryPath, fix: str = "") -> str:
    """One `[[paths]]` table (and its `[paths.expect]`), ending with a newline."""
    transport: dict[str, Any] = {"name": path.transport.name}
    if path.transport.params:
        transport["params"] = dict(sorted(path.transport.params.items()))
    lines = [
        "[[paths]]",
        f"id = {_value(path.id)}",
        f"title = {_value(path.title)}",
        f"extra = {_value(path.extra)}",
        f"contract = {_value(path.contract.value)}",
        f"boundary_class = {_value(path.boundary_class.value)}",
        f"shell_parses = {path.shell_parses}",
        f"parse_layers = {_value(list(path.parse_layers))}",
        f"observed = {_value(path.observed)}",
        f"fix = {_value(fix or path.fix)}",
        f"transport = {_value(transport)}",
    ]
    if path.notes:
        lines.append(f"notes = {_value(list(path.notes))}")
    if path.expect:
        lines += ["", "[paths.expect]"]
        lines += [f"{k} = {_value(v)}" for k, v in path.expect.items()]
    return "\n".join(lines) + "\n"


class ObserveToml:
    """`--format toml`: the path alone (empty when none was derived)."""

    def render(self, report: ObserveReport) -> str:
        if report.path is None:
            return ""
        fix = report.table8.rows[0].fix if report.table8 and report.table8.rows else ""
        return path_toml(report.path, fix)
