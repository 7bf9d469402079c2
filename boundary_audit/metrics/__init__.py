"""Metrics stage: pass rates, damage, the study's crossover, and its statistics.

Pure, stdlib-only functions over run records (`RunLike` objects or mappings). Every quantity is
an exact `Fraction` proportion until it is printed with the single rounding rule of
`metrics.numbers` (× 100, one decimal, half away from zero). Definitions: docs/metrics.md.
"""

from __future__ import annotations

from boundary_audit.metrics.agreement import Agreement, Disagreement, agreement
from boundary_audit.metrics.bootstrap import Interval, Scheme, bootstrap_ci, exact_bootstrap_ci
from boundary_audit.metrics.crossover import (
    COMPONENTS,
    Crossover,
    crossover,
    crossover_from_runs,
    crossovers,
)
from boundary_audit.metrics.damage import Damage, damage, damage_from_runs, damages
from boundary_audit.metrics.draws import DrawSpread, draw_spread, pooled, unit_id
from boundary_audit.metrics.families import (
    FamilyValues,
    family_means,
    family_weighted_mean,
    outcome_values,
    paired_differences,
    task_mean,
)
from boundary_audit.metrics.numbers import (
    UNICODE_MINUS,
    format_count,
    format_p_value,
    format_percent,
    format_points,
    percent,
    round_half_away,
    to_points,
)
from boundary_audit.metrics.rates import PassRate, Rate, pass_rate, pass_rates
from boundary_audit.metrics.records import (
    MetricsInputError,
    Outcomes,
    RunLike,
    TaskResult,
    as_run,
    as_runs,
    cell,
    cells,
)
from boundary_audit.metrics.stats import (
    LofoRange,
    SignTest,
    family_sign_flip_test,
    family_sign_test,
    holm,
    lofo_range,
)

__all__ = [
    "COMPONENTS",
    "UNICODE_MINUS",
    "Agreement",
    "Crossover",
    "Damage",
    "Disagreement",
    "DrawSpread",
    "FamilyValues",
    "Interval",
    "LofoRange",
    "MetricsInputError",
    "Outcomes",
    "PassRate",
    "Rate",
    "RunLike",
    "Scheme",
    "SignTest",
    "TaskResult",
    "agreement",
    "as_run",
    "as_runs",
    "bootstrap_ci",
    "cell",
    "cells",
    "crossover",
    "crossover_from_runs",
    "crossovers",
    "damage",
    "damage_from_runs",
    "damages",
    "draw_spread",
    "exact_bootstrap_ci",
    "family_means",
    "family_sign_flip_test",
    "family_sign_test",
    "family_weighted_mean",
    "format_count",
    "format_p_value",
    "format_percent",
    "format_points",
    "holm",
    "lofo_range",
    "outcome_values",
    "paired_differences",
    "pass_rate",
    "pass_rates",
    "percent",
    "pooled",
    "round_half_away",
    "task_mean",
    "to_points",
    "unit_id",
]
