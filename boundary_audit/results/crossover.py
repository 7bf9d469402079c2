"""The crossover report: the study's 2×2 of generation contract × execution transport, per model.

Built once from run records (`build_crossover`) by `boundary_audit.metrics`; renderers
(`report/crossover/`, `report/html/`) only read it. For every *configuration* (a model: the
records' `model`, else the reply file's name) that has replies under both the raw and the
disclosed contract, and for every boundary transport T, the four cells are

    RR  raw-contract replies through the baseline (`raw`)      RN  the same replies through T
    NR  disclosed-contract replies through the baseline        NN  the same replies through T

with damage RN − RR, compensation NN − RN, matched gap NN − RR and interaction
(NN − NR) − (RN − RR) (docs/metrics.md). Draws pair by (task, draw): draw d of the raw contract
is compared with draw d of the disclosed contract, and with itself replayed through T; the
pooled cells have one unit per (task, draw) (`metrics.pooled`), so the statistics see every
draw's reply as its own paired unit within its task's family. Each draw's own crossover is kept
too (`per_draw`), with the spread of every cell and effect across draws.

Statistics per effect, as in the study's Table 15: the enumerated family-sign test over the
families (`metrics.family_sign_flip_test`), Holm's adjustment across the configurations (per
transport and effect), a percentile bootstrap interval over families (exact by default,
seeded with `resamples`), and the leave-one-family-out range. Rank flips: for every pair of
configurations, whether their order by the matched raw score (RR) is reversed by the matched
boundary score (NN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from boundary_audit import metrics
from boundary_audit.metrics.bootstrap import DEFAULT_LEVEL, DEFAULT_SEED
from boundary_audit.metrics.records import MetricsInputError, Outcomes, TaskResult
from boundary_audit.record import RunRecord
from boundary_audit.taxonomy import BASELINE

SCHEMA = "boundary-audit/crossover/v1"
CELLS = ("RR", "RN", "NR", "NN")
"""Contract first, transport second (R = raw, N = disclosed contract / boundary transport)."""
EFFECTS = ("damage", "compensation", "matched_gap", "interaction")
"""The effects, as `metrics.COMPONENTS`."""
CONTRACTS = ("raw", "disclosed")
"""The two contracts a crossover crosses (R and N on the generation axis)."""


@dataclass(frozen=True)
class Bootstrap:
    """How the confidence intervals were computed."""

    resamples: int = 0
    """0: the exact bootstrap distribution; else this many seeded resamples."""
    seed: int = DEFAULT_SEED
    level: Fraction = DEFAULT_LEVEL

    @property
    def method(self) -> str:
        """`exact` or `seeded`."""
        return "exact" if self.resamples == 0 else "seeded"


@dataclass(frozen=True)
class CellRate:
    """One of the four cells: its pass counts over the (task, draw) units."""

    passed: int
    total: int
    rate: Fraction
    """Family-weighted pass rate."""
    families: tuple[tuple[str, int, int], ...]
    """(family, passed, total), in family order."""


@dataclass(frozen=True)
class Effect:
    """One effect of one configuration, with the study's statistics."""

    value: Fraction
    """Family-weighted (× 100 = percentage points)."""
    interval: metrics.Interval
    sign_test: metrics.SignTest
    """The enumerated family-sign test (Table 15's "Enum. p")."""
    p_holm: Fraction
    """`sign_test.p` adjusted by Holm across the configurations of this transport."""
    lofo: metrics.LofoRange
    families: tuple[tuple[str, Fraction], ...]
    """Family -> the effect within it."""


@dataclass(frozen=True)
class DrawCrossover:
    """The crossover of one draw alone."""

    draw: int | None
    cells: Mapping[str, CellRate]
    effects: Mapping[str, Fraction]


@dataclass(frozen=True)
class Spread:
    """The lowest and highest value of one cell or effect across draws."""

    low: Fraction
    high: Fraction


@dataclass(frozen=True)
class ConfigCrossover:
    """The crossover of one configuration through one boundary transport."""

    model: str
    transport: str
    baseline: str
    reply_sets: Mapping[str, tuple[str, ...]]
    """Contract -> the reply sets (one per draw) it was read from."""
    draws: tuple[int | None, ...]
    tasks: int
    cells: Mapping[str, CellRate]
    """`CELLS` -> the pooled cell over every (task, draw)."""
    effects: Mapping[str, Effect]
    """`EFFECTS` -> the pooled effect and its statistics."""
    per_draw: tuple[DrawCrossover, ...]
    spread: Mapping[str, Spread]
    """Cell or effect name -> its range across draws (only with two draws or more)."""


@dataclass(frozen=True)
class RankFlip:
    """Two configurations whose order by RR is reversed by NN."""

    first: str
    second: str
    raw_margin: Fraction
    """RR(first) − RR(second): > 0."""
    boundary_margin: Fraction
    """NN(first) − NN(second): < 0."""
    raw_tasks: Fraction
    """The RR margin in tasks (margin × tasks per draw; a whole number without draws)."""
    boundary_tasks: Fraction
    """The NN margin in tasks (negative)."""

    @property
    def single_task(self) -> bool:
        """True when either margin is at most one task: a reversal that one reply decides."""
        return self.raw_tasks <= 1 or self.boundary_tasks >= -1


@dataclass(frozen=True)
class RankFlips:
    """The rank flips among the configurations through one transport."""

    transport: str
    pairs: int
    comparable: int
    """Pairs strictly ordered by RR and by NN."""
    flips: tuple[RankFlip, ...]


@dataclass(frozen=True)
class CrossoverReport:
    """Everything a crossover renderer prints."""

    tool_version: str
    command: str
    sandbox: str
    tasks: tuple[str, ...]
    reply_sets: tuple[str, ...]
    baseline: str
    transports: tuple[str, ...]
    bootstrap: Bootstrap
    notes: tuple[str, ...]
    configs: tuple[ConfigCrossover, ...]
    """In configuration order (first appearance), then transport order."""
    flips: tuple[RankFlips, ...]
    records: tuple[RunRecord, ...]
    errors: int
    """Runs that could not be carried out (`error: ...`): the report is then incomplete."""
    table8: tuple[Table8Row, ...] = ()
    """Table-8 rows to show beside the crossover (the HTML report), from a table8 JSON."""
    family_groups: tuple[tuple[str, str], ...] = ()
    """(family, mechanism group) in the suite's order (the study's Table 7), for figures."""


@dataclass(frozen=True)
class Table8Row:
    """One row of a `boundary-audit/table8/v1` report, as the HTML report shows it."""

    system: str
    contract: str
    anchors: tuple[str, ...]
    observed: str
    boundary_class: str
    parse_layers: tuple[str, ...]
    damage: tuple[tuple[str, int, int, int, float], ...]
    """(reply set, tasks, passed raw, passed through the boundary, damage pp)."""
    fix: str


def configuration(record: RunRecord) -> str:
    """The configuration a record belongs to: its model, else its reply file's name."""
    if record.model is not None:
        return record.model
    name = record.reply_set
    if record.contract is not None:
        suffix = f"#{record.contract}" + ("" if record.draw is None else f"-d{record.draw}")
        name = name.removesuffix(suffix)
    return name


Key = tuple[str, str, int | None, str]
"""(configuration, contract, draw, transport)."""


def _group(records: Sequence[RunRecord]) -> dict[Key, list[RunRecord]]:
    groups: dict[Key, list[RunRecord]] = {}
    for r in records:
        if r.contract in CONTRACTS:
            groups.setdefault((configuration(r), r.contract, r.draw, r.transport), []).append(r)
    return groups


def _outcomes(label: str, transport: str, runs: Sequence[RunRecord]) -> Outcomes:
    results = tuple(
        TaskResult(r.task_id, r.family, r.tier, r.core, r.passed, r.reply_id) for r in runs
    )
    return Outcomes(label, transport, results)


def _cell(rate: metrics.PassRate) -> CellRate:
    return CellRate(
        passed=rate.tasks.passed,
        total=rate.tasks.total,
        rate=rate.headline,
        families=tuple((f, r.passed, r.total) for f, r in rate.by_family.items()),
    )


def _cells(x: metrics.Crossover) -> dict[str, CellRate]:
    return {"RR": _cell(x.rr), "RN": _cell(x.rn), "NR": _cell(x.nr), "NN": _cell(x.nn)}


def _effects(x: metrics.Crossover) -> dict[str, Fraction]:
    return {name: metrics.family_weighted_mean(x.components[name]) for name in EFFECTS}


def _draw_key(draw: int | None) -> int:
    return -1 if draw is None else draw


def configurations(records: Sequence[RunRecord]) -> tuple[list[str], list[str]]:
    """The configurations with both contracts (first-appearance order), and notes on the rest."""
    seen: dict[str, set[str]] = {}
    for r in records:
        if r.contract is not None:
            seen.setdefault(configuration(r), set()).add(r.contract)
    both = [c for c, found in seen.items() if set(CONTRACTS) <= found]
    notes = [
        f"{c}: only {', '.join(sorted(found))} replies; a crossover needs raw and disclosed"
        for c, found in seen.items()
        if not set(CONTRACTS) <= found
    ]
    return both, notes


def build_crossover(
    records: Sequence[RunRecord],
    *,
    transports: Sequence[str],
    baseline: str = BASELINE,
    bootstrap: Bootstrap = Bootstrap(),
    tool_version: str = "",
    command: str = "",
    sandbox: str = "",
    notes: Sequence[str] = (),
    table8: Sequence[Table8Row] = (),
    family_groups: Sequence[tuple[str, str]] = (),
) -> CrossoverReport:
    """The crossover of every configuration with both contracts, through every transport."""
    chosen, skipped = configurations(records)
    if not chosen:
        raise MetricsInputError(
            "no configuration has both raw and disclosed replies (a crossover needs both "
            "contracts of one model)"
        )
    groups = _group(records)
    configs: list[ConfigCrossover] = []
    for transport in transports:
        found = [_config(c, transport, baseline, groups, bootstrap) for c in chosen]
        configs.extend(_holm(found))
    ordered = sorted(configs, key=lambda x: (chosen.index(x.model), transports.index(x.transport)))
    task_ids = tuple(dict.fromkeys(r.task_id for r in records))
    return CrossoverReport(
        tool_version=tool_version,
        command=command,
        sandbox=sandbox,
        tasks=task_ids,
        reply_sets=tuple(dict.fromkeys(r.reply_set for r in records)),
        baseline=baseline,
        transports=tuple(transports),
        bootstrap=bootstrap,
        notes=(*notes, *skipped),
        configs=tuple(ordered),
        flips=tuple(_flips(t, [x for x in ordered if x.transport == t]) for t in transports),
        records=tuple(records),
        errors=sum(r.errored for r in records),
        table8=tuple(table8),
        family_groups=tuple(family_groups),
    )


def _config(
    name: str,
    transport: str,
    baseline: str,
    groups: Mapping[Key, list[RunRecord]],
    bootstrap: Bootstrap,
) -> ConfigCrossover:
    draws = {
        contract: sorted(
            {d for (c, k, d, t) in groups if c == name and k == contract and t == baseline},
            key=_draw_key,
        )
        for contract in CONTRACTS
    }
    if draws["raw"] != draws["disclosed"]:
        shown = {k: ", ".join("-" if d is None else str(d) for d in v) for k, v in draws.items()}
        raise MetricsInputError(
            f"{name}: the raw replies have draws [{shown['raw']}] and the disclosed ones "
            f"[{shown['disclosed']}]; the crossover pairs replies by (task, draw)"
        )
    if not draws["raw"]:
        raise MetricsInputError(f"{name}: no runs through the baseline transport {baseline!r}")
    cells: dict[tuple[str, str], dict[int | None, Outcomes]] = {}
    sets: dict[str, list[str]] = {c: [] for c in CONTRACTS}
    for contract in CONTRACTS:
        label = f"{name}/{contract}"
        for t in (baseline, transport):
            for d in draws[contract]:
                runs = groups.get((name, contract, d, t))
                if not runs:
                    raise MetricsInputError(
                        f"{name}: no runs of the {contract} replies"
                        + ("" if d is None else f" of draw {d}")
                        + f" through {t!r}"
                    )
                cells.setdefault((contract, t), {})[d] = _outcomes(label, t, runs)
                if t == baseline:
                    sets[contract].extend(dict.fromkeys(r.reply_set for r in runs))
    order = [
        ("raw", baseline),
        ("raw", transport),
        ("disclosed", baseline),
        ("disclosed", transport),
    ]
    pooled = [
        metrics.pooled(cells[key], reply_set=f"{name}/{key[0]}", transport=key[1]) for key in order
    ]
    whole = metrics.crossover(*pooled)
    per_draw = tuple(
        _one_draw(d, metrics.crossover(*(cells[key][d] for key in order))) for d in draws["raw"]
    )
    return ConfigCrossover(
        model=name,
        transport=transport,
        baseline=baseline,
        reply_sets={c: tuple(dict.fromkeys(v)) for c, v in sets.items()},
        draws=tuple(draws["raw"]),
        tasks=len(cells[("raw", baseline)][draws["raw"][0]]),
        cells=_cells(whole),
        effects={e: _effect(whole.components[e], bootstrap) for e in EFFECTS},
        per_draw=per_draw,
        spread=_spread(per_draw) if len(per_draw) > 1 else {},
    )


def _one_draw(draw: int | None, x: metrics.Crossover) -> DrawCrossover:
    return DrawCrossover(draw, _cells(x), _effects(x))


def _spread(per_draw: Sequence[DrawCrossover]) -> dict[str, Spread]:
    out: dict[str, Spread] = {}
    for cell in CELLS:
        values = [d.cells[cell].rate for d in per_draw]
        out[cell] = Spread(min(values), max(values))
    for effect in EFFECTS:
        values = [d.effects[effect] for d in per_draw]
        out[effect] = Spread(min(values), max(values))
    return out


def _effect(values: metrics.FamilyValues, bootstrap: Bootstrap) -> Effect:
    if bootstrap.resamples:
        interval = metrics.bootstrap_ci(
            values, resamples=bootstrap.resamples, seed=bootstrap.seed, level=bootstrap.level
        )
    else:
        interval = metrics.exact_bootstrap_ci(values, level=bootstrap.level)
    test = metrics.family_sign_flip_test(values)
    lofo = (
        metrics.lofo_range(values)
        if len(values) > 1
        else metrics.LofoRange(
            metrics.family_weighted_mean(values), metrics.family_weighted_mean(values), {}
        )
    )
    return Effect(
        value=metrics.family_weighted_mean(values),
        interval=interval,
        sign_test=test,
        p_holm=test.p,
        lofo=lofo,
        families=tuple(metrics.family_means(values).items()),
    )


def _holm(found: Sequence[ConfigCrossover]) -> list[ConfigCrossover]:
    """The same configurations with each effect's p adjusted by Holm across them."""
    adjusted = {e: metrics.holm([c.effects[e].sign_test.p for c in found]) for e in EFFECTS}
    out = []
    for i, c in enumerate(found):
        effects = {
            e: Effect(v.value, v.interval, v.sign_test, adjusted[e][i], v.lofo, v.families)
            for e, v in c.effects.items()
        }
        out.append(
            ConfigCrossover(
                c.model, c.transport, c.baseline, c.reply_sets, c.draws, c.tasks,
                c.cells, effects, c.per_draw, c.spread,
            )
        )  # fmt: skip
    return out


def _flips(transport: str, configs: Sequence[ConfigCrossover]) -> RankFlips:
    flips = []
    comparable = 0
    for a, b in combinations(configs, 2):
        raw = a.cells["RR"].rate - b.cells["RR"].rate
        boundary = a.cells["NN"].rate - b.cells["NN"].rate
        if raw == 0 or boundary == 0:
            continue
        comparable += 1
        if (raw > 0) == (boundary > 0):
            continue
        first, second = (a, b) if raw > 0 else (b, a)
        flips.append(
            RankFlip(
                first=first.model,
                second=second.model,
                raw_margin=abs(raw),
                boundary_margin=-abs(boundary),
                raw_tasks=abs(raw) * min(a.tasks, b.tasks),
                boundary_tasks=-abs(boundary) * min(a.tasks, b.tasks),
            )
        )
    pairs = len(configs) * (len(configs) - 1) // 2
    return RankFlips(transport, pairs, comparable, tuple(flips))
