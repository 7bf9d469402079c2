"""`fleet --format markdown`: the fleet's Table-8-style rows, named transports, crossovers and
the diff, as review-friendly Markdown tables."""

from __future__ import annotations

from boundary_audit.report.crossover.markdown import p_text, rate, with_ci
from boundary_audit.report.fleet.text import change_text, damages, fix_text, points
from boundary_audit.results.fleet import FleetReport


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


class FleetMarkdown:
    """Renders a `FleetReport` as Markdown."""

    def render(self, report: FleetReport) -> str:
        """The whole document, ending with a newline."""
        sets = list(report.reply_sets)
        u = report.units
        lines = [
            f"# Fleet audit: {report.plan}",
            "",
            f"boundary-audit {report.tool_version}; `{report.command}`; replies ran in "
            f"{report.sandbox or '-'}; {report.tasks} tasks; reply sets "
            f"{', '.join(sets)}; {u.done}/{u.total} units done, {u.failed} could not be "
            "carried out.",
            "",
            "## Boundaries",
            "",
            "| Target | Commit | Class | Location | Contract | Derived path | "
            + " | ".join(f"Damage {_cell(s)} (pp)" for s in sets)
            + " | Fix |",
            "|" + "---|" * (7 + len(sets)),
        ]
        for t in report.targets:
            if t.error:
                lines.append(
                    f"| {_cell(t.name)} | - | error: {_cell(t.error)} |" + " |" * (4 + len(sets))
                )
                continue
            if not t.boundaries:
                lines.append(
                    f"| {_cell(t.name)} | `{t.commit[:12]}` | no model-controlled boundary |"
                    + " |" * (4 + len(sets))
                )
            for b in t.boundaries:
                cells = [
                    t.name, f"`{t.commit[:12]}`", b.boundary_class, f"`{b.location}`",
                    b.contract, f"`{b.path}`", *damages(b.damage, sets), fix_text(b),
                ]  # fmt: skip
                lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        if report.named:
            lines += [
                "",
                "## Named transports",
                "",
                "| Transport | Reply set | Tasks | Raw | Through | Damage (pp) | Errors |",
                "|---|---|---|---|---|---|---|",
            ]
            for n in report.named:
                for m in n.measures:
                    dmg = points(m.damage_pp) if m.measured else "-"
                    lines.append(
                        f"| `{_cell(n.transport)}` | {_cell(m.reply_set)} | {m.tasks} | "
                        f"{m.passed_raw} | {m.passed_boundary} | {dmg} | {m.errors} |"
                    )
        for scope, x in report.crossovers:
            lines += [
                "",
                f"## Crossover: {_cell(scope)}",
                "",
                "| Model | Transport | RR | RN | NR | NN | Damage | Compensation | p (Holm) |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for c in x.configs:
                d = c.effects["damage"]
                lines.append(
                    f"| {_cell(c.model)} | `{_cell(c.transport)}` | {rate(c.cells['RR'].rate)} | "
                    f"{rate(c.cells['RN'].rate)} | {rate(c.cells['NR'].rate)} | "
                    f"{rate(c.cells['NN'].rate)} | {with_ci(d)} | "
                    f"{with_ci(c.effects['compensation'])} | {p_text(d.p_holm)} |"
                )
            for f in x.flips:
                lines.append("")
                lines.append(
                    f"Rank flips through `{_cell(f.transport)}`: {len(f.flips)} of "
                    f"{f.comparable} comparable pairs"
                    + "".join(f"; {_cell(r.first)} over {_cell(r.second)}" for r in f.flips)
                )
        lines += ["", "## Since the previous run", ""]
        if not report.diff.previous:
            lines.append("First run of this plan: nothing to compare.")
        elif not report.diff.changes:
            lines.append("No boundary appeared, vanished or changed damage.")
        else:
            lines += [f"- {_cell(change_text(c))}" for c in report.diff.changes]
        if report.failures:
            lines += ["", "## Units that could not be carried out", ""]
            lines += [f"- {k}: {n} units; first: {_cell(why)}" for k, n, why in report.failures]
        if report.notes:
            lines += ["", *[f"- {_cell(n)}" for n in report.notes]]
        return "\n".join(lines) + "\n"
