"""The study's 2×2 crossover of generation contract with execution transport (its Figure 1).

Cells are named contract first, transport second: R = raw contract / raw transport, N =
disclosed-boundary contract / the boundary transport (the study's `nested`). So RR and NN are
matched, RN replays raw-contract replies through the boundary, NR replays disclosed replies raw.

    damage       = RN − RR              (fixed reply, transport changed)
    compensation = NN − RN              (fixed transport, contract changed)
    matched gap  = NN − RR              (= damage + compensation)
    interaction  = (NN − NR) − (RN − RR)

Every effect is an exact family-weighted proportion (× 100 = percentage points). Each is also
available task by task (`components`), paired on task id, as the input to `metrics.stats`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from boundary_audit.metrics.families import check_same_tasks, family_weighted_mean
from boundary_audit.metrics.rates import PassRate, pass_rate
from boundary_audit.metrics.records import (
    MetricsInputError,
    Outcomes,
    RunLike,
    as_runs,
    cell,
)
from boundary_audit.taxonomy import BASELINE

COMPONENTS = ("damage", "compensation", "matched_gap", "interaction")
"""The effects a crossover defines, in the study's column order."""


@dataclass(frozen=True)
class Crossover:
    """The four cells of one model's crossover and the effects they define."""

    rr: PassRate
    rn: PassRate
    nr: PassRate
    nn: PassRate
    components: Mapping[str, Mapping[str, tuple[int, ...]]]
    """Effect name (`COMPONENTS`) -> family -> that effect per task."""

    @property
    def damage(self) -> Fraction:
        """RN − RR."""
        return family_weighted_mean(self.components["damage"])

    @property
    def compensation(self) -> Fraction:
        """NN − RN."""
        return family_weighted_mean(self.components["compensation"])

    @property
    def matched_gap(self) -> Fraction:
        """NN − RR."""
        return family_weighted_mean(self.components["matched_gap"])

    @property
    def interaction(self) -> Fraction:
        """(NN − NR) − (RN − RR)."""
        return family_weighted_mean(self.components["interaction"])


def crossover(rr: Outcomes, rn: Outcomes, nr: Outcomes, nn: Outcomes) -> Crossover:
    """The crossover of four cells over the same tasks (raw/disclosed × baseline/boundary)."""
    _check_layout(rr, rn, nr, nn)
    check_same_tasks(rr, rn, nr, nn)
    _check_same_replies(rr, rn)
    _check_same_replies(nr, nn)
    per_task: dict[str, dict[str, list[int]]] = {name: {} for name in COMPONENTS}
    lookups = [outcomes.by_task for outcomes in (rr, rn, nr, nn)]
    for result in rr:
        a, b, c, d = (int(lookup[result.task_id].passed) for lookup in lookups)
        effects = {
            "damage": b - a,
            "compensation": d - b,
            "matched_gap": d - a,
            "interaction": (d - c) - (b - a),
        }
        for name, value in effects.items():
            per_task[name].setdefault(result.family, []).append(value)
    components = {
        name: {family: tuple(v) for family, v in sorted(groups.items())}
        for name, groups in per_task.items()
    }
    return Crossover(pass_rate(rr), pass_rate(rn), pass_rate(nr), pass_rate(nn), components)


def _check_layout(rr: Outcomes, rn: Outcomes, nr: Outcomes, nn: Outcomes) -> None:
    raw_set, disclosed_set = rr.reply_set, nr.reply_set
    baseline, boundary = rr.transport, rn.transport
    expected = [
        (raw_set, baseline),
        (raw_set, boundary),
        (disclosed_set, baseline),
        (disclosed_set, boundary),
    ]
    got = [(c.reply_set, c.transport) for c in (rr, rn, nr, nn)]
    if got != expected or raw_set == disclosed_set or baseline == boundary:
        shown = ", ".join(f"{r}/{t}" for r, t in got)
        raise MetricsInputError(
            "a crossover needs two reply sets × two transports in the order RR, RN, NR, NN "
            f"(got {shown})"
        )


def _check_same_replies(first: Outcomes, second: Outcomes) -> None:
    other = second.by_task
    for result in first:
        a, b = result.reply_id, other[result.task_id].reply_id
        if a is not None and b is not None and a != b:
            raise MetricsInputError(
                f"task {result.task_id!r}: {first.transport} and {second.transport} ran "
                f"different replies ({a!r} vs {b!r}) of reply set {first.reply_set!r}; "
                "a transport comparison needs the same reply replayed"
            )


def crossover_from_runs(
    records: Iterable[RunLike | Mapping[str, Any]],
    *,
    raw_replies: str,
    disclosed_replies: str,
    transport: str,
    baseline_transport: str = BASELINE,
) -> Crossover:
    """The crossover of two named reply sets through `baseline_transport` and `transport`."""
    runs = as_runs(records)
    picked = [
        cell(runs, reply_set=replies, transport=t)
        for replies in (raw_replies, disclosed_replies)
        for t in (baseline_transport, transport)
    ]
    return crossover(*picked)


def crossovers(
    records: Iterable[RunLike | Mapping[str, Any]],
    *,
    transport: str,
    baseline_transport: str = BASELINE,
) -> dict[str, Crossover]:
    """Model -> its crossover, for every model with a raw and a disclosed reply set.

    Reply sets are paired through the records' `model` and `contract` fields. A model with two
    reply sets under one contract is ambiguous (use `crossover_from_runs`); models with only one
    contract are left out; finding no model with both is an input error.
    """
    runs = as_runs(records)
    sets: dict[str, dict[str, set[str]]] = {}
    for run in runs:
        if run.model is not None and run.contract is not None:
            sets.setdefault(run.model, {}).setdefault(run.contract, set()).add(run.reply_set)
    found: dict[str, Crossover] = {}
    for model in sorted(sets):
        by_contract = sets[model]
        if set(by_contract) != {"raw", "disclosed"}:
            continue
        for contract, names in sorted(by_contract.items()):
            if len(names) > 1:
                raise MetricsInputError(
                    f"model {model!r} has {len(names)} {contract} reply sets "
                    f"({', '.join(sorted(names))}); name the pair with crossover_from_runs"
                )
        (raw_set,), (disclosed_set,) = by_contract["raw"], by_contract["disclosed"]
        found[model] = crossover_from_runs(
            runs,
            raw_replies=raw_set,
            disclosed_replies=disclosed_set,
            transport=transport,
            baseline_transport=baseline_transport,
        )
    if not found:
        raise MetricsInputError("no model has both a raw and a disclosed reply set")
    return found
