"""`crossover --format html`: one self-contained HTML page a person opens in a browser.

Everything is inline (a `<style>` element, figures as `data:image/png;base64` images drawn by
`report.html.figures`), no script, no link, no font or image fetched: the page works offline
and from a mail attachment. Per boundary transport: the Figure-2 heat map (family ×
configuration, matched-boundary success), the Figure-1(b) crossover bars, the Table-4 and
Table-15 tables; then the Table-8 rows when the report carries them (`--table8 FILE`). Text
from the inputs (model names, reasons, anchors) is HTML-escaped. Pure: the same report gives
the same bytes (for one matplotlib version).
"""

from __future__ import annotations

import base64
from html import escape

from boundary_audit.report.crossover.markdown import (
    p_text,
    points,
    rate,
    units_text,
    with_ci,
)
from boundary_audit.results.crossover import CELLS, ConfigCrossover, CrossoverReport

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 76rem; padding: 0 1rem; color: #1b1f24; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
p.meta, ul.meta { color: #57606a; font-size: .9rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .85rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .5rem; vertical-align: top; }
th { background: #f6f8fa; text-align: left; } td.n { text-align: right;
     font-variant-numeric: tabular-nums; white-space: nowrap; }
td.neg { color: #b42318; } td.pos { color: #1a7f37; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { font-size: .85rem; color: #57606a; margin-top: .3rem; }
code { font-size: .85em; background: #f6f8fa; padding: 0 .2em; }
table.t8 { width: 100%; table-layout: fixed; } table.t8 td { overflow-wrap: anywhere; }
"""


def _img(png: bytes, alt: str, ident: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img id="{ident}" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _signed(text: str) -> str:
    kind = "neg" if text.startswith("−") else "pos" if text.startswith("+") else ""
    return f'<td class="n {kind}">{escape(text)}</td>'


class CrossoverHtml:
    """Renders a `CrossoverReport` as one self-contained HTML page."""

    def render(self, report: CrossoverReport) -> str:
        """The whole page, ending with a newline."""
        from boundary_audit.report.html.figures import crossover_bars, heat_map

        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>boundary-audit crossover report</title>",
            f"<style>{STYLE}</style></head><body>",
            "<h1>boundary-audit crossover report</h1>",
            self._meta(report),
        ]
        for i, transport in enumerate(report.transports):
            configs = [c for c in report.configs if c.transport == transport]
            heat = heat_map(configs, report.family_groups, transport)
            bars = crossover_bars(configs, transport)
            parts += [
                f"<h2>Through <code>{escape(transport)}</code></h2>",
                "<figure>",
                _img(
                    heat,
                    f"Heat map of matched-boundary success by family through {transport}",
                    f"heatmap-{i}",
                ),  # fmt: skip
                "<figcaption>Matched-boundary success (NN) varies by operation family (the "
                "study's Figure 2). Each cell is the percentage of a family's (task, draw) units "
                "passed by the disclosed-contract replies through the boundary; rows are ordered "
                "by NN score, columns follow the mechanism groups.</figcaption></figure>",
                "<figure>",
                _img(bars, f"Crossover bars through {transport}", f"bars-{i}"),
                "<figcaption>The crossover (the study's Figure 1(b)): the four cells, contract "
                "first and transport second, and the decomposition: damage RN−RR, compensation "
                "NN−RN, matched gap NN−RR.</figcaption></figure>",
                self._cells(configs),
                self._table15(configs),
            ]
        if report.table8:
            parts.append(self._table8(report))
        parts.append("</body></html>")
        return "\n".join(parts) + "\n"

    def _meta(self, report: CrossoverReport) -> str:
        items = [
            f"Regenerate: <code>{escape(report.command)}</code>" if report.command else "",
            f"boundary-audit {escape(report.tool_version)}; sandbox: {escape(report.sandbox)}",
            f"{len(report.tasks)} tasks; {len(report.records)} runs; {report.errors} errors; "
            f"baseline <code>{escape(report.baseline)}</code>",
            "Cells are named contract first (R raw, N disclosed), transport second (R raw "
            "execution, N the boundary). Effects in percentage points; families weigh equally; "
            "draws are paired by (task, draw).",
            *(f"Note: {escape(n)}" for n in report.notes),
        ]
        if report.errors:
            items.append(
                f"<strong>{report.errors} runs could not be carried out</strong>: the cells "
                "count them as failures and are not a measurement."
            )
        return '<ul class="meta">' + "".join(f"<li>{i}</li>" for i in items if i) + "</ul>"

    def _cells(self, configs: list[ConfigCrossover]) -> str:
        head = "".join(f"<th>{n} (%)</th>" for n in CELLS)
        rows = [
            "<table><caption>All four crossover cells (the study's Table 4 layout)</caption>",
            f"<tr><th>Model</th><th>Units</th>{head}<th>Damage</th><th>Comp.</th>"
            "<th>Interaction</th><th>Matched gap</th></tr>",
        ]
        for c in configs:
            cells = "".join(f'<td class="n">{rate(c.cells[n].rate)}</td>' for n in CELLS)
            effects = "".join(
                _signed(points(c.effects[e].value))
                for e in ("damage", "compensation", "interaction", "matched_gap")
            )
            rows.append(
                f"<tr><td>{escape(c.model)}</td><td>{units_text(c)}</td>{cells}{effects}</tr>"
            )
        return "\n".join([*rows, "</table>"])

    def _table15(self, configs: list[ConfigCrossover]) -> str:
        rows = [
            "<table><caption>Enumerated and Holm-adjusted two-sided family-sign p values (the "
            "study's Table 15 layout)</caption>",
            '<tr><th></th><th colspan="3">Fixed-reply transport</th>'
            '<th colspan="3">Contract-conditioned compensation</th></tr>',
            "<tr><th>Model</th><th>Effect [95% CI]</th><th>Enum. p</th><th>Holm p</th>"
            "<th>Effect [95% CI]</th><th>Enum. p</th><th>Holm p</th></tr>",
        ]
        for c in configs:
            d, k = c.effects["damage"], c.effects["compensation"]
            rows.append(
                f"<tr><td>{escape(c.model)}</td>{_signed(with_ci(d))}"
                f'<td class="n">{p_text(d.sign_test.p)}</td><td class="n">{p_text(d.p_holm)}</td>'
                f"{_signed(with_ci(k))}"
                f'<td class="n">{p_text(k.sign_test.p)}</td><td class="n">{p_text(k.p_holm)}</td>'
                "</tr>"
            )
        return "\n".join([*rows, "</table>"])

    def _table8(self, report: CrossoverReport) -> str:
        rows = [
            "<h2>Table 8: command boundaries of the audited systems</h2>",
            '<table class="t8"><colgroup><col style="width:8%"><col style="width:6%">'
            '<col style="width:19%"><col style="width:19%"><col style="width:22%">'
            '<col style="width:13%"><col style="width:13%"></colgroup>'
            "<tr><th>System</th><th>Contract</th><th>Source anchor</th>"
            "<th>Observed boundary</th><th>Parse layers</th><th>Damage measured through that "
            "boundary</th><th>Fix</th></tr>",
        ]
        for r in report.table8:
            damage = "; ".join(
                f"{rs} {points_pp(pp)} pp ({raw}/{n} → {through}/{n})"
                for rs, n, raw, through, pp in r.damage
            )
            rows.append(
                f"<tr><td>{escape(r.system)}</td><td>{escape(r.contract)}</td>"
                f"<td>{'<br>'.join(escape(a) for a in r.anchors)}</td>"
                f"<td>{escape(r.observed)}</td><td>{escape(' → '.join(r.parse_layers))}</td>"
                f"<td>{escape(damage)}</td><td>{escape(r.fix)}</td></tr>"
            )
        return "\n".join([*rows, "</table>"])


def points_pp(value: float) -> str:
    """A Table-8 damage number (already rounded): `−73.2`, `+1.8`, `0.0`."""
    if value > 0:
        return f"+{value:.1f}"
    if value < 0:
        return f"−{-value:.1f}"
    return "0.0"
