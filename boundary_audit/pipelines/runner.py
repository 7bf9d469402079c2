"""The parallel runner: (task x reply x transport) cells through one sandbox, on every core.

The work is subprocesses, so a thread pool is enough. Results are deterministic: each cell gets
its position in the plan (reply set, then transport, then task in suite order, then reply in
file order) and records come back sorted by it, whatever order the threads finish in.

A failed reply (the model gave no usable command: `Reply.failure`) is never run: its record fails
with reason `failed reply: <why>`. A cell whose transport or sandbox machinery fails becomes a
failed record with reason `error: ...` and the runner keeps going; a sandbox that cannot run
anything at all is found once, before the first cell, by `preflight`, which raises SandboxError.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from boundary_audit.errors import BoundaryAuditError, EnvironmentUnavailable, SandboxError
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.record import RunRecord, SkippedTransport
from boundary_audit.sandbox.interface import ExecResult, Sandbox
from boundary_audit.tasks import Reply, ReplySet, Task, Verdict, run_task
from boundary_audit.transports.interface import Transport

BUILTIN_SETS = ("oracle", "naive")

FAILED_REPLY = "failed reply: "
"""The reason prefix of a reply the model failed to give (never run, never an error)."""

RunOne = Callable[[Task, str, Transport, Sandbox], tuple[Verdict, ExecResult]]


@dataclass(frozen=True)
class Cell:
    """One run to do; `order` is its position in the plan and its sort key."""

    order: int
    task: Task
    reply_set: str
    reply: Reply
    transport: Transport


def plan_cells(
    tasks: Sequence[Task],
    reply_sets: Sequence[ReplySet],
    transports: Sequence[Transport],
    sandbox: Sandbox,
) -> tuple[list[Cell], list[SkippedTransport]]:
    """Every (reply set, transport, task, reply) cell in a fixed order; skipped transports."""
    usable, skipped = [], []
    for transport in transports:
        why = transport.supports(sandbox)
        if why is None:
            usable.append(transport)
        else:
            skipped.append(SkippedTransport(transport.label, why))
    cells: list[Cell] = []
    for reply_set in reply_sets:
        for transport in usable:
            for task in tasks:
                for reply in reply_set.for_task(task.id):
                    cells.append(Cell(len(cells), task, reply_set.name, reply, transport))
    return cells, skipped


def preflight(sandbox: Sandbox) -> None:
    """Raise SandboxError (once) if `sandbox` cannot run a trivial command at all."""
    try:
        with sandbox.workspace() as ws:
            result = sandbox.run(ws, ["/bin/sh", "-c", "echo ok"])
    except EnvironmentUnavailable:
        raise
    except BoundaryAuditError as exc:
        raise SandboxError(f"sandbox {sandbox.name!r} cannot run a command: {exc.message}") from exc
    if result.exit_code != 0 or result.stdout != b"ok\n":
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = detail[-1] if detail else f"exit {result.exit_code}"
        raise SandboxError(f"sandbox {sandbox.name!r} cannot run a command: {why}")


def run_cells(
    cells: Sequence[Cell],
    sandbox: Sandbox,
    *,
    jobs: int = 2,
    progress: Progress | None = None,
    run_one: RunOne = run_task,
) -> tuple[RunRecord, ...]:
    """Run every cell on `jobs` threads; records sorted by plan order."""
    progress = progress or NoProgress()
    progress.start(len(cells))
    done: dict[int, RunRecord] = {}
    pending = list(reversed(cells))
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ba-run") as pool:
        running: set[Future[tuple[int, RunRecord]]] = set()
        try:
            while pending or running:
                while pending and len(running) < max(1, jobs):
                    cell = pending.pop()
                    running.add(pool.submit(_run_cell, cell, sandbox, run_one))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    order, record = future.result()
                    done[order] = record
                    progress.advance(record)
        except BaseException:
            pending.clear()
            raise
    progress.finish()
    return tuple(done[c.order] for c in sorted(cells, key=lambda c: c.order))


def _run_cell(cell: Cell, sandbox: Sandbox, run_one: RunOne) -> tuple[int, RunRecord]:
    start = time.monotonic()
    if cell.reply.failure is not None:
        reason = f"{FAILED_REPLY}{cell.reply.failure}"
        return cell.order, _record(cell, False, reason, None, False, start)
    try:
        verdict, result = run_one(cell.task, cell.reply.reply, cell.transport, sandbox)
        passed, reason = verdict.passed, verdict.reason
        exit_code, timed_out = result.exit_code, result.timed_out
    except BoundaryAuditError as exc:
        passed, reason, exit_code, timed_out = False, f"error: {exc.message}", None, False
    except Exception as exc:  # noqa: BLE001 - one broken cell must not stop the matrix
        passed, reason, exit_code, timed_out = False, _internal(exc), None, False
    return cell.order, _record(cell, passed, reason, exit_code, timed_out, start)


def _internal(exc: Exception) -> str:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"error: internal: {type(exc).__name__}: {first}"


def _record(
    cell: Cell, passed: bool, reason: str, exit_code: int | None, timed_out: bool, start: float
) -> RunRecord:
    builtin = cell.reply_set in BUILTIN_SETS
    return RunRecord(
        task_id=cell.task.id,
        family=cell.task.family,
        tier=cell.task.tier,
        core=cell.task.core,
        tags=tuple(cell.task.tags),
        transport=cell.transport.label,
        reply_set=cell.reply_set,
        reply_id=cell.reply.reply_id,
        draw=None if builtin else cell.reply.draw,
        model=None if builtin else cell.reply.model,
        contract=None if builtin else cell.reply.contract,
        passed=passed,
        reason=reason,
        exit_code=exit_code,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
    )
