"""`fleet --format terminal` (the default): the fleet on one screen.

A header (plan, sandbox, units), one table row per boundary of every target (class,
location, contract, derived path, damage per reply set, fix), the named transports, one
line per crossover configuration and its rank flips, the diff against the previous run, and
what could not be carried out. Rendered through `console.isolated_console`: only `color` and
`width` change the text.
"""

from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from boundary_audit.report.console import isolated_console
from boundary_audit.report.crossover.markdown import p_text, rate
from boundary_audit.report.crossover.markdown import points as cpoints
from boundary_audit.report.fleet.text import change_text, damages, fix_text, points
from boundary_audit.results.fleet import FleetReport


class FleetTerminal:
    """Renders a `FleetReport` for people at a terminal."""

    def __init__(self, *, color: bool = False, width: int = 120) -> None:
        self.color, self.width = color, width

    def render(self, report: FleetReport) -> str:
        """The whole report."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        u = report.units
        out.print(
            Text(f"boundary-audit {report.tool_version}: fleet {report.plan}", style="bold"),
            soft_wrap=True,
        )
        out.print(
            f"replies ran in {report.sandbox or '-'}; {report.tasks} tasks; reply sets "
            f"{', '.join(report.reply_sets)}; {u.done}/{u.total} units done"
            + (f", {u.failed} could not be carried out" if u.failed else ""),
            soft_wrap=True,
        )
        out.print(self._boundaries(report))
        if report.named:
            out.print(self._named(report))
        for scope, x in report.crossovers:
            out.print(Text(f"Crossover ({scope})", style="bold"), soft_wrap=True)
            for c in x.configs:
                cells = " ".join(f"{k} {rate(c.cells[k].rate)}" for k in ("RR", "RN", "NR", "NN"))
                d = c.effects["damage"]
                out.print(
                    f"  {c.model} through {c.transport}: {cells}; damage {cpoints(d.value)} "
                    f"(p {p_text(d.p_holm)}), compensation "
                    f"{cpoints(c.effects['compensation'].value)}",
                    soft_wrap=True,
                )
            for f in x.flips:
                flips = ", ".join(f"{r.first} over {r.second}" for r in f.flips) or "none"
                out.print(
                    f"  rank flips through {f.transport}: {len(f.flips)} of {f.comparable} "
                    f"comparable pairs ({flips})",
                    soft_wrap=True,
                )
        out.print(Text("Since the previous run", style="bold"), soft_wrap=True)
        if not report.diff.previous:
            out.print("  first run of this plan: nothing to compare", soft_wrap=True)
        elif not report.diff.changes:
            out.print("  no boundary appeared, vanished or changed damage", soft_wrap=True)
        for change in report.diff.changes:
            out.print(f"  {change_text(change)}", soft_wrap=True)
        for kind, n, why in report.failures:
            out.print(
                Text(f"could not be carried out: {n} {kind} units; first: {why}", style="red"),
                soft_wrap=True,
            )
        for note in report.notes:
            out.print(f"note: {note}", soft_wrap=True)
        return buf.getvalue()

    def _boundaries(self, report: FleetReport) -> Table:
        sets = list(report.reply_sets)
        table = Table(title="Boundaries", title_justify="left", expand=False)
        for name in ("target", "commit", "class", "location", "contract", "derived path"):
            table.add_column(name, overflow="fold")
        for s in sets:
            table.add_column(f"{s} pp", justify="right", overflow="fold")
        table.add_column("fix", overflow="fold")
        for t in report.targets:
            if t.error:
                table.add_row(
                    t.name, "-", Text(f"error: {t.error}", style="red"), *[""] * (4 + len(sets))
                )
                continue
            if not t.boundaries:
                table.add_row(
                    t.name, t.commit[:12], "no model-controlled boundary", *[""] * (4 + len(sets))
                )
            for b in t.boundaries:
                table.add_row(
                    t.name, t.commit[:12], b.boundary_class, b.location, b.contract, b.path,
                    *damages(b.damage, sets), fix_text(b),
                )  # fmt: skip
        return table

    def _named(self, report: FleetReport) -> Table:
        table = Table(title="Named transports", title_justify="left")
        for name in ("transport", "reply set", "tasks", "raw", "through", "damage pp", "errors"):
            table.add_column(name, overflow="fold")
        for n in report.named:
            for m in n.measures:
                table.add_row(
                    n.transport, m.reply_set, str(m.tasks), str(m.passed_raw),
                    str(m.passed_boundary), points(m.damage_pp) if m.measured else "-",
                    str(m.errors),
                )  # fmt: skip
        return table
