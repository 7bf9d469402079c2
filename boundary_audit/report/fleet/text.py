"""The words and numbers every fleet renderer prints the same way."""

from __future__ import annotations

from collections.abc import Sequence

from boundary_audit.results.fleet import BoundaryRow, Change, Damage, FleetReport


def points(value: float | None) -> str:
    """`-12.5`, `0.0`, `+3.1`, or `-` when not measured."""
    if value is None:
        return "-"
    return f"{value:+.1f}" if value else "0.0"


def damage_text(d: Damage) -> str:
    """One reply set's damage: a value or a range over routes, with its errors."""
    text = points(d.low) if d.low == d.high else f"{points(d.low)}..{points(d.high)}"
    return text + (f" ({d.errors} err)" if d.errors else "")


def damages(ds: Sequence[Damage], sets: Sequence[str]) -> list[str]:
    """One cell per reply set, `-` where the set has no measurement."""
    by = {d.reply_set: d for d in ds}
    return [damage_text(by[s]) if s in by else "-" for s in sets]


def fix_text(b: BoundaryRow) -> str:
    """The fix and whether it was verified (0 pp on every reply set)."""
    if not b.fix:
        return "-"
    if not b.fix_damage:
        return f"{b.fix} (not measured)"
    return f"{b.fix} ({'verified' if b.verified_fix else 'NOT verified'})"


def change_text(c: Change) -> str:
    """One line of the diff."""
    before = ", ".join(f"{k} {points(v)}" for k, v in c.before) or "-"
    after = ", ".join(f"{k} {points(v)}" for k, v in c.after) or "-"
    where = f"{c.target} {c.location} {c.boundary_class}"
    if c.kind == "appeared":
        return f"appeared  {where}: {after}"
    if c.kind == "vanished":
        return f"vanished  {where} (was {before})"
    return f"changed   {where}: {before} -> {after}"


def summary_line(report: FleetReport, ran: int | None = None) -> str:
    """The one line on stderr after a fleet run."""
    u = report.units
    boundaries = sum(len(t.boundaries) for t in report.targets)
    done = f"{u.done}/{u.total} units done"
    if ran is not None:
        done += f" ({ran} run now, {u.done - ran} from the store)"
    failed = f", {u.failed} could not be carried out" if u.failed else ""
    return (
        f"boundary-audit: fleet {report.plan}: {len(report.targets)} targets, "
        f"{boundaries} boundaries; {done}{failed}"
    )
