"""The real-harness column of Table 8: read from the reports of `boundary-audit harness compare`.

Driving a system's own released code costs from a second (SWE-agent) to ~47 s (OpenHands) per
reply, so `table8` does not rerun the drivers: `--harness-reports DIR` reads the JSON reports
(`boundary-audit/harness/v1`) that `harness compare` wrote there and, for every adapter path a
report compared the real harness against, adds to that row

- the damage through the real harness, measured exactly as the table's own damage (core tasks
  of the report's selection, families weighted, against the `raw` runs of the same report);
- the agreement of the real harness with that path, task by task and reply by reply, with the
  number of differences the report leaves unexplained.

A report names its command, so every number in the column can be regenerated. Reports of
another schema, or whose runs cannot be read, are a usage error naming the file; a system with
no report simply has no harness column.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit.errors import UsageError
from boundary_audit.pipelines.matrix import measure
from boundary_audit.record import RunRecord
from boundary_audit.results.table8 import HarnessCheck, Measure

SCHEMA = "boundary-audit/harness/v1"


@dataclass(frozen=True)
class HarnessColumn:
    """What one harness report says about one adapter path."""

    check: HarnessCheck
    measures: tuple[Measure, ...]


def load_harness_column(
    folder: Path, reply_sets: Iterable[str]
) -> dict[tuple[str, str], HarnessColumn]:
    """(system, path id) -> the real-harness column for every comparison in `folder/*.json`."""
    if not folder.is_dir():
        raise UsageError(f"--harness-reports {folder}: not a directory")
    wanted = tuple(reply_sets)
    out: dict[tuple[str, str], HarnessColumn] = {}
    for report in sorted(folder.glob("*.json")):
        data = _read(report)
        if data.get("schema") != SCHEMA:
            continue
        out.update(_columns(report, data, wanted))
    return out


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--harness-reports: cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--harness-reports: {path} is not a JSON object")
    return data


def _columns(
    path: Path, data: Mapping[str, Any], reply_sets: tuple[str, ...]
) -> dict[tuple[str, str], HarnessColumn]:
    try:
        system = data["system"]
        label = next(m["transport"] for m in data["measurements"] if m["role"] == "harness")
        records = tuple(_record(r) for r in data["runs"])
        comparisons = list(data["comparisons"])
        driver = f"{', '.join(system['packages'])} (Python {system['python']})"
    except (KeyError, TypeError, StopIteration, ValueError) as exc:
        raise UsageError(f"--harness-reports: {path} is not a harness report: {exc!r}") from None
    sets = [rs for rs in reply_sets if any(r.reply_set == rs for r in records)]
    measures = tuple(measure(records, label, rs) for rs in sets)
    out: dict[tuple[str, str], HarnessColumn] = {}
    for comp in comparisons:
        against = str(comp.get("against", ""))
        owner, _, path_id = against.partition(":")
        if owner != system["name"] or not path_id:
            continue  # a plain transport, not an adapter path
        check = HarnessCheck(
            report=path.name,
            command=str(data.get("command", "")),
            driver=driver,
            transport=label,
            selection=str(data.get("selection", "")),
            compared=int(comp["compared"]),
            agreeing=int(comp["agreeing"]),
            unexplained=int(comp["unexplained"]),
        )
        out[(owner, path_id)] = HarnessColumn(check, measures)
    return out


def _record(run: Mapping[str, Any]) -> RunRecord:
    transport = str(run["transport"])
    if not transport:
        raise ValueError("a run without a transport")
    return RunRecord(
        task_id=str(run["task_id"]),
        family=str(run["family"]),
        tier=int(run["tier"]),
        core=bool(run["core"]),
        tags=(),
        transport=transport,
        reply_set=str(run["reply_set"]),
        reply_id=str(run["reply_id"]),
        model=None,
        contract=None,
        passed=bool(run["passed"]),
        reason=str(run["reason"]),
        exit_code=run.get("exit_code"),
        timed_out=bool(run.get("timed_out", False)),
        duration_s=0.0,
    )


__all__ = ["SCHEMA", "HarnessColumn", "load_harness_column"]
