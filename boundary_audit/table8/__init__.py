"""The Table-8 report: every audited system's boundary, anchored in its source and measured.

Public API:

    build_table8(options: Table8Options, *, progress=None, note=None, extra_transports=())
        -> Table8Report
    verify_adapter(adapter, *, repo_dir=None, rev=None, offline=False) -> {path id: StaticCheck}

Renderers live in `boundary_audit.report.table8_*`.
"""

from __future__ import annotations

from boundary_audit.table8.anchors import verify_adapter
from boundary_audit.table8.build import Table8Options, build_table8
from boundary_audit.table8.model import (
    SCHEMA,
    AnchorCheck,
    FamilyDamage,
    Measure,
    Row,
    StaticCheck,
    Table8Report,
)

__all__ = [
    "SCHEMA",
    "AnchorCheck",
    "FamilyDamage",
    "Measure",
    "Row",
    "StaticCheck",
    "Table8Options",
    "Table8Report",
    "build_table8",
    "verify_adapter",
]
