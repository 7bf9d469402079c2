"""The Table-8 report: what every renderer needs, and nothing from the runner or the scanner.

One `Row` per boundary path: the system and the study's row, the path's contract, anchors
(with their static verification), the observed boundary as the probes measured it, the parse
layers, the damage measured through that boundary for each reply set, what breaks, and the
fix. Rows of paths marked `row = false` in their adapter are `variants`, listed after the
table. The header (`Table8Report`) records what regenerates the report. Nothing here holds a
timing, so the same inputs give byte-identical renders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from boundary_audit.adapters.anchors import (
    ANCHOR_STATUSES,
    CLASS_DIFFERS,
    MOVED,
    NO_FILE,
    NOT_FOUND,
    NOT_VERIFIED,
    VERIFIED,
    AnchorCheck,
    StaticCheck,
)
from boundary_audit.probes.model import ProbeFact

__all__ = [
    "ANCHOR_STATUSES",
    "CLASS_DIFFERS",
    "MOVED",
    "NOT_FOUND",
    "NOT_VERIFIED",
    "NO_FILE",
    "SCHEMA",
    "VERIFIED",
    "AnchorCheck",
    "FamilyDamage",
    "HarnessCheck",
    "Measure",
    "Row",
    "StaticCheck",
    "Table8Report",
]

SCHEMA = "boundary-audit/table8/v1"


@dataclass(frozen=True)
class FamilyDamage:
    """Damage within one family (percentage points, one decimal)."""

    family: str
    points: float


@dataclass(frozen=True)
class Measure:
    """One reply set pushed through raw and through the boundary path."""

    reply_set: str
    tasks: int
    """Core tasks the damage is measured over."""
    passed_raw: int
    passed_boundary: int
    damage_pp: float
    """Family-weighted pass(boundary) - pass(raw) over the core tasks, in points."""
    families: tuple[FamilyDamage, ...] = ()
    """Core families whose damage is non-zero, most damaged first."""
    broken: tuple[str, ...] = ()
    """Core task ids that pass raw and fail through the boundary."""
    fixed: tuple[str, ...] = ()
    """Core task ids that fail raw and pass through the boundary."""
    boundary_broken: tuple[str, ...] = ()
    """Boundary-family task ids (outside the core) that pass raw and fail here."""
    errors: int = 0
    """Runs where the machinery failed (reason `error: ...`), raw or boundary: their tasks are
    out of the pass counts and the damage on both sides."""
    reasons: Mapping[str, str] = field(default_factory=dict)
    """Broken task id -> the validator's reason through the boundary (first line)."""
    error: str = ""
    """`transport: error: ...` of the first run that could not be carried out ("" if none)."""
    boundary_tasks: int = 0
    """Boundary-family tasks (outside the core) measured on both sides."""

    @property
    def measured(self) -> bool:
        """False when no task could be measured on both sides (no damage figure)."""
        return self.tasks > 0


@dataclass(frozen=True)
class HarnessCheck:
    """A `harness compare` report's verdict on one path: the real harness against the adapter."""

    report: str
    """The report's file name (in the `--harness-reports` folder)."""
    command: str
    """The command that regenerates that report."""
    driver: str
    """The pinned packages and interpreter of the driver."""
    transport: str
    """The driver's label, `harness:<system>` plus parameters."""
    selection: str
    compared: int
    """(task, reply) pairs run through both."""
    agreeing: int
    """Pairs with the same outcome through the real harness and through the path."""
    unexplained: int
    """Differences the report has no written explanation or adapter fix for."""


@dataclass(frozen=True)
class Row:
    """One boundary path of one system."""

    system: str
    system_name: str
    path: str
    title: str
    is_row: bool
    extra: bool
    """Not one of the study's rows (an extra row the code shows)."""
    study_contract: str
    study_anchor: str
    study_observed: str
    contract: str
    boundary_class: str
    shell_parses: int
    parse_layers: tuple[str, ...]
    observed: str
    transport: str
    """`name(params)` of the inner transport."""
    preprocess: tuple[str, ...]
    anchors: tuple[str, ...]
    """Declared anchors, `path:lines@pin`."""
    fix: str
    marked: str
    notes: tuple[str, ...]
    facts: tuple[ProbeFact, ...]
    measures: tuple[Measure, ...]
    static: StaticCheck | None
    skipped: str = ""
    """Why this path could not be measured in the chosen sandbox ("" when it was)."""
    harness: tuple[Measure, ...] = ()
    """The system's own released code driven with the same replies (issue 6), when run."""
    harness_check: HarnessCheck | None = None
    """Where `harness` comes from a `harness compare` report: its agreement with this path."""


@dataclass(frozen=True)
class Table8Report:
    """The whole report."""

    tool_version: str
    command: str
    """The exact command that regenerates the report."""
    sandbox: str
    task_select: str
    task_count: int
    core_count: int
    reply_sets: tuple[str, ...]
    baseline: str
    """The transport damage is measured against (`raw`: `bash -c R`)."""
    probes: tuple[str, ...]
    rows: tuple[Row, ...]
    baseline_facts: tuple[ProbeFact, ...] = ()
    """What the probes show through the baseline itself (what every row is compared with)."""
    variants: tuple[Row, ...] = ()
    notes: tuple[str, ...] = ()
    title: str = "Table 8, measured: command boundaries of the audited agent systems"
    schema: str = SCHEMA

    @property
    def all_rows(self) -> tuple[Row, ...]:
        """Table rows, then variants."""
        return self.rows + self.variants
