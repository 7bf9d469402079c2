"""The probe stage: run (task x reply x transport) cells in a sandbox and collect run records.

- `records.RunRecord`: one run's outcome, the row every report and metric reads;
- `runner.plan_cells` / `runner.run_cells`: the deterministic parallel runner;
- `pipeline.run_probes(options, progress) -> ProbeReport`: what `boundary-audit probe` calls.
"""

from __future__ import annotations

from boundary_audit.probe.records import RunRecord
from boundary_audit.probe.runner import (
    Cell,
    NoProgress,
    Progress,
    SkippedTransport,
    plan_cells,
    preflight,
    run_cells,
)

__all__ = [
    "Cell",
    "NoProgress",
    "Progress",
    "RunRecord",
    "SkippedTransport",
    "plan_cells",
    "preflight",
    "run_cells",
]
