"""The task suite as a whole: loading every file, cross-file checks, and selection.

`load_tasks(select)` is what the rest of boundary-audit calls. It reads tasks/ only through
`boundary_audit._data`, parses every file (a bad file raises TaskError naming it), checks the
suite (unique ids, each core family has exactly tiers 0-3, all 14 core families present) and
returns the selected tasks in a fixed order: core families in the study's Table 7 order, then
the boundary families alphabetically, each by tier.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable

from boundary_audit import _data
from boundary_audit.errors import TaskError, UsageError
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.parse import parse_task
from boundary_audit.tasks.vocabulary import CORE_FAMILIES, CORE_TIERS

_FAMILY_ORDER = {name: i for i, name in enumerate(CORE_FAMILIES)}


def sort_key(task: Task) -> tuple[int, int, str, int]:
    """Core first (Table 7 family order), then boundary families by name; then tier."""
    if task.core:
        return (0, _FAMILY_ORDER.get(task.family, len(_FAMILY_ORDER)), task.family, task.tier)
    return (1, 0, task.family, task.tier)


def load_suite(files: Iterable[tuple[str, bytes]], *, complete: bool = True) -> tuple[Task, ...]:
    """Parse `(relative path, bytes)` pairs into a checked, ordered suite.

    With `complete`, all 14 core families must be present; without, only the families present
    are checked (for tests and for users' extra task folders).
    """
    tasks = [parse_task(rel, raw) for rel, raw in files]
    seen: dict[str, str] = {}
    for task in tasks:
        if task.id in seen:
            raise TaskError(
                f"{task.source_file}: id: duplicate id {task.id!r} (also in {seen[task.id]})"
            )
        seen[task.id] = task.source_file
    _check_core_families(tasks, complete=complete)
    return tuple(sorted(tasks, key=sort_key))


def _check_core_families(tasks: list[Task], *, complete: bool) -> None:
    by_family: dict[str, list[Task]] = {}
    for task in tasks:
        if task.core:
            by_family.setdefault(task.family, []).append(task)
    for family, members in sorted(by_family.items()):
        tiers = sorted(t.tier for t in members)
        if tiers != list(CORE_TIERS):
            files = ", ".join(sorted(t.source_file for t in members))
            raise TaskError(
                f"tasks/{family}/: core family {family!r} has {len(members)} task(s) with tiers "
                f"{tiers}; it needs exactly one task per tier 0-3 ({files})"
            )
    missing = [f for f in CORE_FAMILIES if f not in by_family]
    if complete and missing:
        raise TaskError(f"tasks/: core families missing: {', '.join(missing)}")


@functools.lru_cache(maxsize=1)
def _packaged_suite() -> tuple[Task, ...]:
    files = [(rel, f.read_bytes()) for rel, f in _data.iter_files("tasks", ".toml")]
    if not files:
        raise TaskError("tasks/: no task files found in the installed package")
    return load_suite(files)


def load_tasks(select: str | None = None) -> tuple[Task, ...]:
    """The packaged suite, or the part of it that `select` names (see `select_tasks`)."""
    return select_tasks(_packaged_suite(), select)


def select_tasks(tasks: tuple[Task, ...], select: str | None) -> tuple[Task, ...]:
    """Filter by a comma-separated list of terms, each of which may be:

    `all`; `core` (the 56); `boundary` (everything outside the core); `boundary=KIND` or any
    other tag; a family name; a task id; or a glob over ids (`*-t3`, `ssh-*`). The union of the
    terms is returned in suite order. A term that matches nothing is a usage error.
    """
    if select is None or not select.strip():
        return tasks
    chosen: set[str] = set()
    for term in (t.strip() for t in select.split(",")):
        if not term:
            continue
        matched = {t.id for t in tasks if _matches(t, term)}
        if not matched:
            raise UsageError(
                f"--select {term!r} matches no task",
                hint="use a task id, a family, core, boundary, boundary=KIND or a glob like '*-t3'",
            )
        chosen |= matched
    return tuple(t for t in tasks if t.id in chosen)


def _matches(task: Task, term: str) -> bool:
    if term == "all":
        return True
    if term == "core":
        return task.core
    if term == "boundary":
        return not task.core
    if "=" in term:
        return term in task.tags
    if any(c in term for c in "*?["):
        return fnmatch.fnmatchcase(task.id, term)
    return term in (task.id, task.family)
