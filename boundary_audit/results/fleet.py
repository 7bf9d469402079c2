"""The fleet report: one Table-8-style row per boundary of every target, the named transports,
the crossover per model and contract, the rank flips, and the diff against the previous run.

Built by the fleet's client from the store alone (`boundary_audit.fleet`), in plan order, so it
is the same whatever the number of workers and the order units finished in; renderers
(`report/fleet/`) only read it. A target's rows come from its `boundary-audit/v1` scan report
(the same document `scan --format json` writes for it), read by `rows_of`; a row's damage is
its derived path's, per reply set (the range over its routes when the code leaves a fact
open), and its fix is *verified* when every measurement of the fixed path is 0 pp (no correct
command broke). Runs that could not be carried out are counted per target and never damage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from boundary_audit.results.crossover import CrossoverReport
from boundary_audit.results.table8 import Measure

SCHEMA = "boundary-audit/fleet/v1"


@dataclass(frozen=True)
class Damage:
    """The measured damage of one path (or its fix) for one reply set."""

    reply_set: str
    low: float | None
    """The lowest damage over the routes, in points (None: not measured)."""
    high: float | None
    tasks: int
    errors: int


@dataclass(frozen=True)
class BoundaryRow:
    """One model-controlled boundary of a target."""

    fingerprint: str
    boundary_class: str
    location: str
    """`path:line`."""
    contract: str
    path: str
    """The derived path's first route (its label), `+N` when the code leaves more open."""
    routes: int
    damage: tuple[Damage, ...]
    fix: str
    fix_damage: tuple[Damage, ...]
    confidence: str
    adapter: str
    """The audited system's path it was compared with ("" when none)."""

    @property
    def verified_fix(self) -> bool:
        """True when the fix was measured and broke no correct command on any reply set."""
        measured = [d for d in self.fix_damage if d.low is not None]
        return bool(measured) and all(d.low == 0 and d.high == 0 for d in measured)


@dataclass(frozen=True)
class TargetRow:
    """One target: where it is, what it resolved to, its boundaries or why it has none."""

    name: str
    repo: str
    commit: str
    findings: int
    model_controlled: int
    boundaries: tuple[BoundaryRow, ...]
    error_runs: int
    error: str = ""
    """Why the target has no report (its scan failed, the run was stopped)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class NamedRow:
    """A transport the plan names, measured once for the fleet, per reply set."""

    transport: str
    measures: tuple[Measure, ...]


@dataclass(frozen=True)
class Change:
    """A boundary that appeared, vanished or changed damage since the previous run."""

    kind: str
    """`appeared`, `vanished` or `changed`."""
    target: str
    fingerprint: str
    boundary_class: str
    location: str
    before: tuple[tuple[str, float | None], ...]
    """(reply set, damage) before ("" sets when it did not exist)."""
    after: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True)
class Diff:
    """What changed since the previous run of the same plan."""

    previous: bool
    """False for a plan's first run (there is nothing to compare)."""
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class UnitCounts:
    """How the plan's units went."""

    total: int
    done: int
    failed: int


@dataclass(frozen=True)
class FleetReport:
    """Everything a fleet renderer prints."""

    tool_version: str
    plan: str
    command: str
    sandbox: str
    tasks: int
    reply_sets: tuple[str, ...]
    transports: tuple[str, ...]
    targets: tuple[TargetRow, ...]
    named: tuple[NamedRow, ...]
    crossovers: tuple[tuple[str, CrossoverReport], ...]
    """(scope, crossover): scope is a target's name, or `named` for the named transports."""
    diff: Diff
    units: UnitCounts
    failures: tuple[tuple[str, int, str], ...]
    """(what, units, first reason) of the units that could not be carried out, by kind."""
    notes: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """True when every unit was carried out."""
        return self.units.failed == 0 and self.units.done == self.units.total


# -- reading a target's scan report ---------------------------------------------------------


def _damage(
    evidence: Sequence[Mapping[str, Any]], role: str, sets: Sequence[str]
) -> tuple[Damage, ...]:
    out = []
    for name in sets:
        mine = [e for e in evidence if e.get("role") == role and e.get("reply_set") == name]
        if not mine:
            continue
        values = [float(e["damage_pp"]) for e in mine if e.get("damage_pp") is not None]
        out.append(
            Damage(
                reply_set=name,
                low=min(values) if values else None,
                high=max(values) if values else None,
                tasks=max(int(e.get("tasks", 0)) for e in mine),
                errors=sum(int(e.get("errors", 0)) for e in mine),
            )
        )
    return tuple(out)


def _label(evidence: Sequence[Mapping[str, Any]], role: str) -> tuple[str, int]:
    labels = list(dict.fromkeys(str(e["transport"]) for e in evidence if e.get("role") == role))
    if not labels:
        return "", 0
    return labels[0] + (f" +{len(labels) - 1}" if len(labels) > 1 else ""), len(labels)


def rows_of(doc: Mapping[str, Any], reply_sets: Sequence[str]) -> tuple[BoundaryRow, ...]:
    """The boundary rows of one `boundary-audit/v1` scan report (active, model-controlled)."""
    rows = []
    for f in doc.get("findings", ()):
        if not f.get("model_controlled") or f.get("suppressed") is not None:
            continue
        ev = f.get("evidence") or []
        path, routes = _label(ev, "path")
        fix, _ = _label(ev, "fix")
        bp = f.get("boundary_path") or {}
        adapter = bp.get("adapter") or {}
        rows.append(
            BoundaryRow(
                fingerprint=str(f["fingerprint"]),
                boundary_class=str(f["class"]),
                location=f"{f['path']}:{f['line']}",
                contract=str(f.get("contract", "")),
                path=path or "(not measured)",
                routes=routes,
                damage=_damage(ev, "path", reply_sets),
                fix=fix or str(bp.get("fix", "")),
                fix_damage=_damage(ev, "fix", reply_sets),
                confidence=str(f.get("confidence", "")),
                adapter=f"{adapter['system']}:{adapter['path']}" if adapter else "",
            )
        )
    return tuple(rows)


def target_row(name: str, repo: str, doc_text: str, reply_sets: Sequence[str]) -> TargetRow:
    """A target's row from its scan report's JSON text."""
    doc = json.loads(doc_text)
    summary = doc.get("summary", {})
    probe = doc.get("probe") or {}
    return TargetRow(
        name=name,
        repo=repo,
        commit=str(doc.get("commit") or ""),
        findings=int(summary.get("findings", 0)),
        model_controlled=int(summary.get("active_model_controlled", 0)),
        boundaries=rows_of(doc, reply_sets),
        error_runs=int(probe.get("error_runs", 0)),
        notes=tuple(
            f"not measured through {n['transport']}: {n['reason']}"
            for n in probe.get("not_measured", ())
        ),
    )


# -- the diff -------------------------------------------------------------------------------

Snapshot = dict[tuple[str, str], tuple[str, str, tuple[tuple[str, float | None], ...]]]
"""(target, fingerprint) -> (class, location, ((reply set, worst damage over routes), ...))."""


def snapshot(targets: Sequence[TargetRow]) -> Snapshot:
    """What the diff compares, from this run's rows."""
    return {
        (t.name, b.fingerprint): (
            b.boundary_class,
            b.location,
            tuple((d.reply_set, d.low) for d in b.damage),
        )
        for t in targets
        if not t.error
        for b in t.boundaries
    }


def snapshot_of_document(doc: Mapping[str, Any]) -> Snapshot:
    """What the diff compares, from a previous run's fleet JSON (targets that had an error are
    left out: what could not be measured then did not vanish)."""
    out: Snapshot = {}
    for t in doc.get("targets", ()):
        if t.get("error"):
            continue
        for b in t.get("boundaries", ()):
            damage = tuple(
                (str(d["reply_set"]), None if d.get("low") is None else float(d["low"]))
                for d in b.get("damage", ())
            )
            out[(str(t["name"]), str(b["fingerprint"]))] = (
                str(b["class"]),
                str(b["location"]),
                damage,
            )
    return out


def diff(previous: Snapshot | None, current: Snapshot, measured: set[str]) -> Diff:
    """The changes from `previous` to `current`; `measured` are the targets this run has a
    report for (a boundary of a target without one has not vanished)."""
    if previous is None:
        return Diff(False)
    changes = []
    for key in sorted(set(previous) | set(current)):
        target, fp = key
        before, after = previous.get(key), current.get(key)
        if before is None and after is not None:
            changes.append(Change("appeared", target, fp, after[0], after[1], (), after[2]))
        elif after is None and before is not None:
            if target in measured:
                changes.append(Change("vanished", target, fp, before[0], before[1], before[2], ()))
        elif before is not None and after is not None and before[2] != after[2]:
            changes.append(Change("changed", target, fp, after[0], after[1], before[2], after[2]))
    return Diff(True, tuple(changes))
