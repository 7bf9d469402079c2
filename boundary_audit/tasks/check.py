"""`tasks check`: every task proves its own data, like a positive and a negative fixture.

Per task: the oracle passes on every transport in `oracle_passes` and fails on every one in
`oracle_fails`; the naive reply breaks where `naive_breaks` says (and, unless that is `raw`,
passes on raw first); and the validator rejects the oracle's final state mutated by one byte
and the same state with one stray file. Transports that are not registered (yet) or cannot run
in the chosen sandbox are reported as unverified, never as passed. Tasks run in parallel on a
thread pool (the work is subprocesses).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from boundary_audit.errors import BoundaryAuditError
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.tasks.diff import quoted
from boundary_audit.tasks.fixture import materialize
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.mutate import flip_one_byte, stray_file
from boundary_audit.tasks.run import carry
from boundary_audit.tasks.validate import Verdict, validate
from boundary_audit.transports import TRANSPORTS, make_transport


@dataclass(frozen=True)
class CheckItem:
    """One claim about a task and whether it held (None: it could not be verified here)."""

    claim: str
    ok: bool | None
    detail: str = ""


@dataclass(frozen=True)
class TaskCheck:
    """All claims checked for one task."""

    task_id: str
    items: tuple[CheckItem, ...]

    @property
    def failed(self) -> tuple[CheckItem, ...]:
        """Claims that were checked and did not hold."""
        return tuple(i for i in self.items if i.ok is False)

    @property
    def unverified(self) -> tuple[CheckItem, ...]:
        """Claims that could not be checked (transport unavailable)."""
        return tuple(i for i in self.items if i.ok is None)


Mutations = Callable[[Task, Workspace, ExecResult], list[CheckItem]]


class Checker:
    """Runs the checks of tasks in one sandbox, limited to `transports` when given."""

    def __init__(self, sandbox: Sandbox, transports: Iterable[str] | None = None) -> None:
        self.sandbox = sandbox
        self.allowed = None if transports is None else frozenset(transports)

    def unavailable(self, name: str) -> str | None:
        """Why transport `name` cannot be used for checks here, or None."""
        if self.allowed is not None and name not in self.allowed:
            return "not selected"
        if name not in TRANSPORTS:
            return "transport not registered"
        return make_transport(name).supports(self.sandbox)

    def run(
        self, task: Task, reply: str, transport: str, after: Mutations | None = None
    ) -> tuple[Verdict, list[CheckItem]]:
        """Run `reply` on `transport`; `after` may inspect and mutate the workspace first."""
        tr = make_transport(transport)
        try:
            with self.sandbox.workspace() as ws:
                materialize(task, ws)
                try:
                    result = carry(task, reply, tr, ws, self.sandbox)
                except (BoundaryAuditError, OSError) as exc:
                    return Verdict(False, f"error: {exc}"), []
                verdict = validate(task, ws, result)
                if not verdict.passed:
                    return Verdict(False, verdict.reason + run_context(result)), []
                return verdict, after(task, ws, result) if after else []
        finally:
            tr.close()

    def check(self, task: Task) -> TaskCheck:
        """Every claim of `task`."""
        items = self._oracle(task) + self._naive(task)
        return TaskCheck(task.id, tuple(items))

    def _oracle(self, task: Task) -> list[CheckItem]:
        items: list[CheckItem] = []
        mutated = False
        for name in task.oracle_passes:
            why = self.unavailable(name)
            if why:
                items.append(CheckItem(f"oracle passes on {name}", None, why))
                continue
            after = None if mutated else mutation_checks
            verdict, extra = self.run(task, task.oracle, name, after)
            mutated = mutated or bool(extra)
            items.append(
                CheckItem(
                    f"oracle passes on {name}",
                    verdict.passed,
                    "" if verdict.passed else verdict.reason,
                )
            )
            items.extend(extra)
        if not mutated:
            items.append(
                CheckItem(
                    "validator rejects mutated states",
                    None,
                    "no transport ran the oracle to a pass",
                )
            )
        for name in task.oracle_fails:
            why = self.unavailable(name)
            if why:
                items.append(CheckItem(f"oracle fails on {name}", None, why))
                continue
            verdict, _ = self.run(task, task.oracle, name)
            detail = "but it passed" if verdict.passed else verdict.reason
            items.append(CheckItem(f"oracle fails on {name}", not verdict.passed, detail))
        return items

    def _naive(self, task: Task) -> list[CheckItem]:
        declared = task.naive_breaks
        claim = f"naive breaks on {declared}"
        path = ["raw"] if declared == "raw" else ["raw", declared]
        for name in path:
            why = self.unavailable(name)
            if why:
                return [CheckItem(claim, None, f"{name}: {why}")]
            verdict, _ = self.run(task, task.naive, name)
            if not verdict.passed:
                if name == declared:
                    return [CheckItem(claim, True, verdict.reason)]
                return [CheckItem(claim, False, f"it breaks on {name} already: {verdict.reason}")]
        return [CheckItem(claim, False, f"it passes on {' and '.join(path)}")]


def run_context(result: ExecResult) -> str:
    """` [exit N, stderr "last line"]`: how the failing run ended, for diagnosing a claim."""
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    tail = f", stderr {quoted(lines[-1], 100)}" if lines else ""
    return f" [exit {result.exit_code}{tail}]"


def mutation_checks(task: Task, ws: Workspace, result: ExecResult) -> list[CheckItem]:
    """After a passing oracle run: one flipped byte and one stray file must each fail validation."""
    items = []
    with flip_one_byte(task, ws, result) as (what, mutated):
        if what is None:
            items.append(
                CheckItem(
                    "validator rejects one flipped byte", False, "the state has nothing to mutate"
                )
            )
            return items
        verdict = validate(task, ws, mutated)
        items.append(
            CheckItem(
                f"validator rejects one flipped byte ({what})",
                not verdict.passed,
                verdict.reason if not verdict.passed else "the mutated state passed",
            )
        )
    with stray_file(ws) as name:
        verdict = validate(task, ws, result)
        items.append(
            CheckItem(
                f"validator rejects a stray file ({name})",
                not verdict.passed,
                verdict.reason if not verdict.passed else "the state with a stray file passed",
            )
        )
    return items


def check_tasks(
    tasks: Sequence[Task],
    sandbox: Sandbox,
    *,
    jobs: int = 2,
    transports: Iterable[str] | None = None,
    progress: Callable[[TaskCheck], None] = lambda _: None,
) -> tuple[TaskCheck, ...]:
    """Check `tasks` on `jobs` threads; results come back in the order of `tasks`."""
    checker = Checker(sandbox, transports)

    def one(task: Task) -> TaskCheck:
        result = checker.check(task)
        progress(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return tuple(pool.map(one, tasks))
