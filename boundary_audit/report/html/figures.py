"""The crossover report's figures, drawn with matplotlib into PNG bytes (no pyplot, no state).

* `heat_map`: the study's Figure 2: rows are configurations (ordered by matched-boundary
  score, highest first), columns the operation families grouped by mechanism (Table 7's
  order), each cell the percentage of that family's (task, draw) units passed in the NN cell
  (disclosed contract through the boundary), printed in the cell.
* `crossover_bars`: the study's Figure 1(b): per configuration the four cells RR, RN, NR, NN
  as bars, and the decomposition (damage, compensation, matched gap) as signed bars.

Each figure is drawn on its own `Figure` with the Agg canvas and saved without the `Software`
metadata, so the same report gives the same bytes (for one matplotlib version).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

from boundary_audit import metrics
from boundary_audit.results.crossover import CELLS, ConfigCrossover

DPI = 110
CELL_COLOURS = {"RR": "#4c72b0", "RN": "#dd8452", "NR": "#8172b3", "NN": "#55a868"}
EFFECT_COLOURS = {"damage": "#c44e52", "compensation": "#55a868", "matched_gap": "#4c72b0"}
HEAT = LinearSegmentedColormap.from_list("success", ["#b2182b", "#f7f7f7", "#2166ac"])


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _pct(value: object) -> float:
    return float(metrics.percent(value))  # type: ignore[arg-type]


def heat_map(
    configs: Sequence[ConfigCrossover], families: Sequence[tuple[str, str]], transport: str
) -> bytes:
    """Figure 2: family × configuration, matched-boundary (NN) success in percent."""
    present = {f for c in configs for f, _, _ in c.cells["NN"].families}
    columns = [f for f, _ in families if f in present]
    columns += sorted(present - set(columns))
    group = dict(families)
    rows = sorted(configs, key=lambda c: (-c.cells["NN"].rate, configs.index(c)))
    values = [
        [
            100.0 * p / t if t else float("nan")
            for f in columns
            for fam, p, t in c.cells["NN"].families
            if fam == f
        ]
        for c in rows
    ]
    width = max(6.0, 0.62 * len(columns) + 3.2)
    height = max(2.4, 0.46 * len(rows) + 2.3)
    fig = Figure(figsize=(width, height))
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap=HEAT, vmin=0, vmax=100, aspect="auto")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if v < 20 or v > 80 else "black")  # fmt: skip
    ax.set_xticks(range(len(columns)), labels=columns, rotation=55, ha="right", fontsize=8)
    ax.set_yticks(
        range(len(rows)),
        labels=[f"{c.model} ({_pct(c.cells['NN'].rate):.1f})" for c in rows],
        fontsize=8,
    )
    previous = None
    for j, f in enumerate(columns):
        g = group.get(f, "other")
        if previous is not None and g != previous:
            ax.axvline(j - 0.5, color="black", linewidth=1.5)
        previous = g
    ax.set_title(f"Matched-boundary success (NN, %) by family: disclosed replies through "
                 f"{transport}", fontsize=10)  # fmt: skip
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02, label="% passed")
    fig.tight_layout()
    return _png(fig)


def crossover_bars(configs: Sequence[ConfigCrossover], transport: str) -> bytes:
    """Figure 1(b): the four cells and the decomposition, per configuration."""
    n = len(configs)
    fig = Figure(figsize=(max(7.0, 1.5 * n + 3.0), 6.4))
    cells_ax, effects_ax = fig.subplots(2, 1, height_ratios=(3, 2))
    width = 0.2
    for k, name in enumerate(CELLS):
        xs = [i + (k - 1.5) * width for i in range(n)]
        heights = [_pct(c.cells[name].rate) for c in configs]
        bars = cells_ax.bar(xs, heights, width, label=name, color=CELL_COLOURS[name])
        shown = [metrics.format_percent(c.cells[name].rate) for c in configs]
        cells_ax.bar_label(bars, labels=shown, fontsize=7, padding=1)
    cells_ax.set_ylim(0, 112)
    cells_ax.set_ylabel("pass rate (%)")
    cells_ax.set_xticks(range(n), labels=[c.model for c in configs], fontsize=8)
    cells_ax.legend(ncols=4, fontsize=8, loc="upper right")
    cells_ax.set_title(f"Crossover cells through {transport} (contract, then transport)",
                       fontsize=10)  # fmt: skip
    names = ("damage", "compensation", "matched_gap")
    labels = {"damage": "damage RN−RR", "compensation": "compensation NN−RN",
              "matched_gap": "matched gap NN−RR"}  # fmt: skip
    for k, name in enumerate(names):
        xs = [i + (k - 1) * 0.26 for i in range(n)]
        heights = [_pct(c.effects[name].value) for c in configs]
        bars = effects_ax.bar(xs, heights, 0.26, label=labels[name], color=EFFECT_COLOURS[name])
        shown = [metrics.format_points(c.effects[name].value, minus="−") for c in configs]
        effects_ax.bar_label(bars, labels=shown, fontsize=7, padding=1)
    effects_ax.axhline(0, color="black", linewidth=0.8)
    effects_ax.set_ylim(-112, 112)
    effects_ax.set_ylabel("percentage points")
    effects_ax.set_xticks(range(n), labels=[c.model for c in configs], fontsize=8)
    effects_ax.legend(ncols=3, fontsize=8, loc="lower right")
    fig.tight_layout()
    return _png(fig)
