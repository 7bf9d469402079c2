"""`fleet --format html`: one self-contained page (inline CSS, no script, no link): the fleet's
boundary table, the named transports, each scope's crossover (its cells and the matplotlib
heat map and bars of the crossover report) and the diff."""

from __future__ import annotations

from html import escape

from boundary_audit.report.crossover.markdown import p_text, rate, with_ci
from boundary_audit.report.fleet.text import change_text, damages, fix_text, points
from boundary_audit.report.html import STYLE, _img
from boundary_audit.results.fleet import FleetReport


def _row(cells: list[str], head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{escape(c)}</{tag}>" for c in cells) + "</tr>"


class FleetHtml:
    """Renders a `FleetReport` as one self-contained HTML page."""

    def render(self, report: FleetReport) -> str:
        """The whole page, ending with a newline."""
        from boundary_audit.report.html.figures import crossover_bars, heat_map

        sets = list(report.reply_sets)
        u = report.units
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>boundary-audit fleet {escape(report.plan)}</title>",
            f"<style>{STYLE}</style></head><body>",
            f"<h1>Fleet audit: {escape(report.plan)}</h1>",
            f"<p>boundary-audit {escape(report.tool_version)}; <code>{escape(report.command)}"
            f"</code>; replies ran in {escape(report.sandbox or '-')}; {report.tasks} tasks; "
            f"{u.done}/{u.total} units done, {u.failed} could not be carried out.</p>",
            "<h2>Boundaries</h2><table>",
            _row(["Target", "Commit", "Class", "Location", "Contract", "Derived path",
                  *[f"Damage {s} (pp)" for s in sets], "Fix"], head=True),
        ]  # fmt: skip
        for t in report.targets:
            if t.error:
                parts.append(_row([t.name, "-", f"error: {t.error}", *[""] * (4 + len(sets))]))
                continue
            if not t.boundaries:
                parts.append(
                    _row(
                        [
                            t.name,
                            t.commit[:12],
                            "no model-controlled boundary",
                            *[""] * (4 + len(sets)),
                        ]
                    )
                )
            parts.extend(
                _row([
                    t.name, t.commit[:12], b.boundary_class, b.location, b.contract, b.path,
                    *damages(b.damage, sets), fix_text(b),
                ])
                for b in t.boundaries
            )  # fmt: skip
        parts.append("</table>")
        if report.named:
            parts += [
                "<h2>Named transports</h2><table>",
                _row(
                    ["Transport", "Reply set", "Tasks", "Raw", "Through", "Damage (pp)", "Errors"],
                    head=True,
                ),
            ]
            for n in report.named:
                for m in n.measures:
                    parts.append(_row([
                        n.transport, m.reply_set, str(m.tasks), str(m.passed_raw),
                        str(m.passed_boundary), points(m.damage_pp) if m.measured else "-",
                        str(m.errors),
                    ]))  # fmt: skip
            parts.append("</table>")
        for i, (scope, x) in enumerate(report.crossovers):
            parts += [
                f"<h2>Crossover: {escape(scope)}</h2><table>",
                _row(
                    [
                        "Model",
                        "Transport",
                        "RR",
                        "RN",
                        "NR",
                        "NN",
                        "Damage",
                        "Compensation",
                        "p (Holm)",
                    ],
                    head=True,
                ),
            ]
            for c in x.configs:
                d = c.effects["damage"]
                cells = [rate(c.cells[k].rate) for k in ("RR", "RN", "NR", "NN")]
                parts.append(_row([
                    c.model, c.transport, *cells,
                    with_ci(d), with_ci(c.effects["compensation"]), p_text(d.p_holm),
                ]))  # fmt: skip
            parts.append("</table>")
            for j, transport in enumerate(x.transports):
                configs = [c for c in x.configs if c.transport == transport]
                heat = heat_map(configs, x.family_groups, transport)
                bars = crossover_bars(configs, transport)
                parts += [
                    "<figure>",
                    _img(heat, f"Heat map through {transport} ({scope})", f"heat-{i}-{j}"),
                    _img(bars, f"Crossover bars through {transport} ({scope})", f"bars-{i}-{j}"),
                    f"<figcaption>{escape(scope)} through <code>{escape(transport)}</code>"
                    "</figcaption></figure>",
                ]
            for f in x.flips:
                flips = "; ".join(f"{r.first} over {r.second}" for r in f.flips) or "none"
                parts.append(
                    f"<p>Rank flips through <code>{escape(f.transport)}</code>: {len(f.flips)} "
                    f"of {f.comparable} comparable pairs ({escape(flips)}).</p>"
                )
        parts.append("<h2>Since the previous run</h2><ul>")
        if not report.diff.previous:
            parts.append("<li>First run of this plan: nothing to compare.</li>")
        elif not report.diff.changes:
            parts.append("<li>No boundary appeared, vanished or changed damage.</li>")
        parts += [f"<li>{escape(change_text(c))}</li>" for c in report.diff.changes]
        parts.append("</ul>")
        if report.failures:
            parts.append("<h2>Units that could not be carried out</h2><ul>")
            parts += [
                f"<li>{escape(k)}: {n} units; first: {escape(why)}</li>"
                for k, n, why in report.failures
            ]
            parts.append("</ul>")
        parts += [f"<p>note: {escape(n)}</p>" for n in report.notes]
        parts.append("</body></html>")
        return "\n".join(parts) + "\n"
