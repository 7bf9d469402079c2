"""Run records as the metrics stage reads them, and the per-cell outcome vectors built from them.

The runner produces one record per (task, reply, transport) run. Metrics accept any object with
the `RunLike` attributes, or a mapping with the same keys (a record read back from JSON), and
normalise it into the run record (`boundary_audit.record.RunRecord`). Records are grouped
into *cells*: one `Outcomes` per (reply set, transport), holding exactly one pass/fail per
task. Every later metric is computed from `Outcomes`, never from loose records, so a
duplicated or missing task is caught once, here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from boundary_audit.errors import BoundaryAuditError, ExitCode
from boundary_audit.record import RunRecord

CONTRACTS = ("raw", "disclosed", "native")
"""Generation contracts a reply set can have been produced under (None: not a model reply)."""


class MetricsInputError(BoundaryAuditError):
    """Run records that cannot be measured: a missing field, a duplicated or unpaired task."""

    exit_code = ExitCode.INPUT


@runtime_checkable
class RunLike(Protocol):
    """What the runner hands to metrics: the outcome of one reply run through one transport."""

    @property
    def task_id(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def tier(self) -> int: ...
    @property
    def core(self) -> bool: ...
    @property
    def transport(self) -> str: ...
    @property
    def reply_set(self) -> str: ...
    @property
    def reply_id(self) -> str | None: ...
    @property
    def contract(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def passed(self) -> bool: ...


_OPTIONAL: dict[str, type] = {"draw": int}
"""Fields a record may lack (None then): the draw of a reply set without draws."""

_FIELDS: dict[str, tuple[type, bool]] = {
    "task_id": (str, False),
    "family": (str, False),
    "tier": (int, False),
    "core": (bool, False),
    "transport": (str, False),
    "reply_set": (str, False),
    "reply_id": (str, True),
    "contract": (str, True),
    "model": (str, True),
    "passed": (bool, False),
}
"""Field name -> (required type, None allowed)."""


def as_run(record: RunLike | Mapping[str, Any], *, index: int | None = None) -> RunRecord:
    """Validate one record (object or mapping) into a `RunRecord` (a `RunRecord` is validated
    and returned as it is); `index` only labels errors."""
    where = "run record" if index is None else f"run record {index}"
    values: dict[str, Any] = {}
    for name, (kind, optional) in _FIELDS.items():
        if isinstance(record, Mapping):
            if name not in record:
                raise MetricsInputError(f"{where}: missing field {name!r}")
            value = record[name]
        elif hasattr(record, name):
            value = getattr(record, name)
        else:
            raise MetricsInputError(f"{where}: missing field {name!r}")
        values[name] = _checked(where, name, value, kind, optional)
    for name, kind in _OPTIONAL.items():
        value = record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)
        values[name] = _checked(where, name, value, kind, True)
        if values[name] is not None and values[name] < 0:
            raise MetricsInputError(f"{where}: field {name!r} must be >= 0, not {value!r}")
    if values["contract"] is not None and values["contract"] not in CONTRACTS:
        raise MetricsInputError(
            f"{where}: contract must be one of {', '.join(CONTRACTS)} or null, "
            f"not {values['contract']!r}"
        )
    if isinstance(record, RunRecord):
        return record
    return RunRecord(**values)


def _checked(where: str, name: str, value: Any, kind: type, optional: bool) -> Any:
    if value is None and optional:
        return None
    # NOTE(metrics): bool is a subclass of int; a tier of True or a `passed` of 1 is a bug upstream.
    wrong_bool = kind is int and isinstance(value, bool)
    if not isinstance(value, kind) or wrong_bool:
        wanted = kind.__name__ + (" or null" if optional else "")
        raise MetricsInputError(f"{where}: field {name!r} must be {wanted}, not {value!r}")
    if kind is str and not value:
        raise MetricsInputError(f"{where}: field {name!r} must not be empty")
    return value


def as_runs(records: Iterable[RunLike | Mapping[str, Any]]) -> list[RunRecord]:
    """Validate every record; the first bad one raises `MetricsInputError` naming its index."""
    return [as_run(record, index=i) for i, record in enumerate(records)]


@dataclass(frozen=True)
class TaskResult:
    """One task's outcome in one cell."""

    task_id: str
    family: str
    tier: int
    core: bool
    passed: bool
    reply_id: str | None = None


@dataclass(frozen=True)
class Outcomes:
    """One cell: exactly one outcome per task for one (reply set, transport), sorted by task id."""

    reply_set: str
    transport: str
    results: tuple[TaskResult, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for result in self.results:
            if result.task_id in seen:
                raise MetricsInputError(
                    f"task {result.task_id!r} appears twice in cell "
                    f"(reply set {self.reply_set!r}, transport {self.transport!r})"
                )
            seen.add(result.task_id)
        ordered = tuple(sorted(self.results, key=lambda r: r.task_id))
        object.__setattr__(self, "results", ordered)

    def __iter__(self) -> Iterator[TaskResult]:
        """The results in task-id order."""
        return iter(self.results)

    def __len__(self) -> int:
        """The number of tasks."""
        return len(self.results)

    @property
    def by_task(self) -> Mapping[str, TaskResult]:
        """Task id -> result."""
        return MappingProxyType({r.task_id: r for r in self.results})

    def by_family(self) -> dict[str, tuple[TaskResult, ...]]:
        """Family -> its results (families and tasks in sorted order)."""
        groups: dict[str, list[TaskResult]] = {}
        for result in self.results:
            groups.setdefault(result.family, []).append(result)
        return {family: tuple(groups[family]) for family in sorted(groups)}

    def subset(
        self,
        *,
        core: bool | None = None,
        tiers: Collection[int] | None = None,
        families: Collection[str] | None = None,
    ) -> Outcomes:
        """The same cell restricted to core/non-core tasks, some tiers, or some families."""

        def keep(r: TaskResult) -> bool:
            return (
                (core is None or r.core == core)
                and (tiers is None or r.tier in tiers)
                and (families is None or r.family in families)
            )

        return Outcomes(self.reply_set, self.transport, tuple(filter(keep, self.results)))


def cells(records: Iterable[RunLike | Mapping[str, Any]]) -> dict[tuple[str, str], Outcomes]:
    """Group records into cells keyed by (reply set, transport), in sorted key order."""
    groups: dict[tuple[str, str], list[TaskResult]] = {}
    for run in as_runs(records):
        result = TaskResult(run.task_id, run.family, run.tier, run.core, run.passed, run.reply_id)
        groups.setdefault((run.reply_set, run.transport), []).append(result)
    return {key: Outcomes(key[0], key[1], tuple(groups[key])) for key in sorted(groups)}


def cell(
    records: Iterable[RunLike | Mapping[str, Any]], *, reply_set: str, transport: str
) -> Outcomes:
    """The one cell (reply set, transport) of `records`; an absent cell is an input error."""
    grouped = cells(records)
    try:
        return grouped[(reply_set, transport)]
    except KeyError:
        have = ", ".join(f"{r}/{t}" for r, t in grouped) or "none"
        raise MetricsInputError(
            f"no runs for reply set {reply_set!r} through transport {transport!r} (have: {have})"
        ) from None
