"""The words of a Table-8 row, shared by the terminal and Markdown renderers.

Each function turns one part of a `Row` into plain text (no markup): the contract with the
study's value when it differs, the anchors with their static status, the observed boundary
(the adapter's sentence plus every probe fact that differs from `bash -c R`), the parse
layers, the damage per reply set, what breaks, and the marks. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from boundary_audit.metrics import UNICODE_MINUS
from boundary_audit.probes.model import MISSING, UNEXPECTED, ProbeFact
from boundary_audit.results.table8 import Measure, Row, Table8Report

MARK = "⚑"
"""Marks a row where the study's Table 8 and the code disagree."""
MAX_TASKS_LISTED = 6


def points(value: float) -> str:
    """`-28.6` as `−28.6`, `0.0` as `0.0`, `+3.6` as `+3.6`."""
    if value == 0:
        return "0.0"
    return f"+{value:.1f}" if value > 0 else f"{UNICODE_MINUS}{-value:.1f}"


def system_cell(row: Row) -> str:
    """`SWE-agent` for a study row, `OpenHands (model path, extra row) ⚑` for an extra one."""
    extra = f" ({row.path} path, extra row)" if row.extra else ""
    return f"{row.system_name}{extra}" + (f" {MARK}" if row.marked else "")


def contract_cell(row: Row) -> str:
    """`native` or `native (study: raw)`."""
    if row.study_contract and row.study_contract != row.contract and not row.extra:
        return f"{row.contract} (study: {row.study_contract})"
    return row.contract


def anchor_cell(row: Row) -> str:
    """Every declared anchor with its status, or the reason none was checked."""
    if not row.anchors:
        return "no anchor in this repository"
    if row.static is None:
        return "; ".join(row.anchors) + " (static check skipped)"
    parts = []
    for label, check in zip(row.anchors, row.static.anchors, strict=False):
        parts.append(f"{label} [{check.status}]")
    if row.static.anchors and row.static.anchors[0].status == "not verified":
        return "; ".join(row.anchors) + f" ({row.static.note})"
    return "; ".join(parts)


def fact_phrase(fact: ProbeFact) -> str:
    """`login=yes`, `quoting=missing`, and an undeclared value quoted: `cwd=''`."""
    if fact.outcome == UNEXPECTED:
        return f"{fact.probe}={fact.value!r}"
    return f"{fact.probe}={fact.outcome}"


def differing_facts(row: Row, baseline: Sequence[ProbeFact]) -> list[ProbeFact]:
    """The row's probe facts that differ from the baseline's, in probe order."""
    base = {f.probe: f.outcome for f in baseline}
    return [f for f in row.facts if base.get(f.probe) != f.outcome]


def observed_cell(row: Row, report: Table8Report) -> str:
    """The adapter's sentence, then the measured facts that differ from `bash -c R`."""
    if not row.facts:
        return row.observed
    diff = differing_facts(row, report.baseline_facts)
    shown = [fact_phrase(f) for f in diff if f.outcome != MISSING]
    silent = [f.probe for f in diff if f.outcome == MISSING]
    if silent:
        shown.append(f"no canary from {', '.join(silent)}")
    said = row.observed.rstrip(". ")
    return f"{said}. Probes vs bash -c: {', '.join(shown) or 'same as bash -c'}"


def layers_cell(row: Row) -> str:
    """`1 shell parse: a → b → c`."""
    n = row.shell_parses
    return f"{n} shell parse{'' if n == 1 else 's'}: " + " → ".join(row.parse_layers)


def damage_phrase(m: Measure) -> str:
    """`oracle −28.6 pp (56/56 → 40/56)`; runs that could not be carried out are out of the
    counts and named (`..., 3 error runs left out`); none measured: no damage figure."""
    if not m.measured:
        return f"{m.reply_set} not measured: {m.errors} error run{'' if m.errors == 1 else 's'}"
    left = f", {m.errors} error run{'' if m.errors == 1 else 's'} left out" if m.errors else ""
    return (
        f"{m.reply_set} {points(m.damage_pp)} pp ({m.passed_raw}/{m.tasks} → "
        f"{m.passed_boundary}/{m.tasks}{left})"
    )


def damage_cell(row: Row) -> str:
    """Every reply set's damage, or why the path was not measured."""
    if row.skipped:
        return f"not measured: {row.skipped}"
    return "; ".join(damage_phrase(m) for m in row.measures)


HARNESS_COLUMN = "Damage through the real harness (agreement with this path)"


def has_harness(rows: Sequence[Row]) -> bool:
    """True when some row was driven through its system's real harness (show the column)."""
    return any(r.harness or r.harness_check for r in rows)


def agreement_phrase(row: Row) -> str:
    """`agrees on 148/148 runs (0 unexplained)`, or "" without a compare report."""
    c = row.harness_check
    if c is None:
        return ""
    return f"agrees on {c.agreeing}/{c.compared} runs ({c.unexplained} unexplained)"


def harness_cell(row: Row) -> str:
    """The real harness's damage per reply set, then its agreement with this path."""
    parts = [damage_phrase(m) for m in row.harness]
    if agreement := agreement_phrase(row):
        parts.append(agreement)
    return "; ".join(parts) if parts else "not driven"


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:MAX_TASKS_LISTED])
    more = len(ids) - MAX_TASKS_LISTED
    return shown + (f" (+{more} more)" if more > 0 else "")


def breaks_cell(row: Row) -> str:
    """Families that lose tasks (first reply set), then boundary tasks that break."""
    if not row.measures:
        return "-"
    first = row.measures[0]
    parts = []
    if first.families:
        fam = ", ".join(f"{f.family} {points(f.points)}" for f in first.families)
        parts.append(f"{first.reply_set}: {fam}")
    extra = sorted({t for m in row.measures for t in m.boundary_broken})
    if extra:
        parts.append(f"boundary tasks: {_listed(extra)}")
    return "; ".join(parts) if parts else "nothing breaks"


def errors_note(row: Row) -> str:
    """`2 runs could not be carried out (left out of the damage): raw: error: ...`, or ""."""
    n = sum(m.errors for m in row.measures)
    if not n:
        return ""
    first = next((m.error for m in row.measures if m.error), "")
    named = f": {first}" if first else ""
    return (
        f"{n} run{'' if n == 1 else 's'} could not be carried out (left out of the pass "
        f"rates and the damage){named}"
    )
