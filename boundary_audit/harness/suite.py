"""Run the task suite's replies through one transport and keep what a comparison needs.

`run_suite` runs every (reply set, task) cell in a fresh sandbox workspace, on `jobs` threads
(the work is subprocesses): materialize the fixture, carry the reply, validate the exact final
state, and record a `RunRecord` with the validator's verdict, the harness's own status (for a
`harness:*` transport), and a short picture of the final work dir. A cell whose transport or
sandbox fails is recorded as failed with reason `error: ...` and the run goes on; a harness
that cannot run at all is caught once, up front, by `preflight`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from boundary_audit.errors import BoundaryAuditError, HarnessError
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.progress import Progress
from boundary_audit.record import RunRecord
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.tasks import Reply, ReplySet, Task, Verdict, materialize, validate, wsfs
from boundary_audit.tasks.diff import quoted
from boundary_audit.transports.interface import Transport, TransportResult

PREFLIGHT_WORD = "boundary-audit-preflight"
"""What `HarnessTransport.preflight_reply` prints; the preflight expects it as the observation."""
STATE_ENTRIES = 12
"""How many work-dir entries a final-state picture lists."""


def final_state(work: Path, limit: int = STATE_ENTRIES, work_fd: int = -1) -> tuple[str, ...]:
    """A deterministic picture of `work`: sorted entries, lstat only, links never followed,
    `.git` directories left out. Read through `work_fd` (the workspace's descriptor, taken
    before the reply ran) when given, so a work dir swapped for a link shows what it was."""
    entries: list[str] = []
    with wsfs.root(work_fd, work) as top:
        for root, dirs, files, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = sorted(d for d in dirs if d != ".git")  # repositories are checked by git
            for name in sorted([*dirs, *files]):
                rel = os.path.normpath(os.path.join(root, name))
                entries.append(_describe(dir_fd, name, rel))
    if len(entries) > limit:
        entries = [*entries[:limit], f"... {len(entries) - limit} more"]
    return tuple(entries)


def _describe(dir_fd: int, entry: str, rel: str) -> str:
    st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
    name = quoted(os.fsencode(rel), limit=80)
    if stat.S_ISLNK(st.st_mode):
        return f"{name} -> {quoted(os.fsencode(os.readlink(entry, dir_fd=dir_fd)), limit=60)}"
    if stat.S_ISDIR(st.st_mode):
        return f"{name}/"
    if not stat.S_ISREG(st.st_mode):
        return f"{name} (special)"
    fd = os.open(entry, wsfs.FILE_FLAGS, dir_fd=dir_fd)
    try:
        head = os.read(fd, 48)
    finally:
        os.close(fd)
    return f"{name} {st.st_size}B {quoted(head, limit=48)}"


def _carry(
    transport: Transport, reply: str, ws: Workspace, sandbox: Sandbox
) -> tuple[ExecResult, str, str]:
    """(result, status, detail) of one reply through `transport`."""
    if isinstance(transport, HarnessTransport):
        outcome = transport.drive(reply, ws, sandbox)
        return outcome.to_exec_result(), outcome.status, outcome.detail
    result = transport.execute(reply, ws, sandbox)
    status = "timeout" if result.timed_out else "ran"
    if isinstance(result, TransportResult):
        return result, "refused" if result.rejected else status, result.rejected or result.note
    return result, status, ""


def run_cell(
    task: Task, reply_set: str, reply: Reply, transport: Transport, sandbox: Sandbox
) -> RunRecord:
    """Materialize, carry, validate one reply in a fresh workspace; errors become a failed run."""
    try:
        with sandbox.workspace() as ws:
            materialize(task, ws)
            result, status, detail = _carry(transport, reply.reply, ws, sandbox)
            verdict = validate(task, ws, result)
            if status == "driver-error":
                verdict = Verdict(False, f"error: harness driver failed: {detail}")
            state = final_state(ws.work, work_fd=ws.work_fd)
    except BoundaryAuditError as exc:
        result, status, detail, state = ExecResult(None, b"", b""), "error", exc.message, ()
        verdict = Verdict(False, f"error: {exc.message}")
    return RunRecord(
        task_id=task.id,
        family=task.family,
        tier=task.tier,
        core=task.core,
        tags=tuple(task.tags),
        transport=transport.label,
        reply_set=reply_set,
        reply_id=reply.reply_id,
        passed=verdict.passed,
        reason=verdict.reason,
        status=status,
        detail=detail,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        duration_s=round(result.duration_s, 3),
        final_state=state,
        model=reply.model,
        contract=reply.contract,
    )


def preflight(transport: Transport, sandbox: Sandbox) -> None:
    """Raise HarnessError once if a harness transport cannot run a trivial reply in `sandbox`."""
    if not isinstance(transport, HarnessTransport):
        return
    why = transport.supports(sandbox)
    if why is not None:
        raise HarnessError(f"{transport.name} cannot run in sandbox {sandbox.name}: {why}")
    with sandbox.workspace() as ws:
        outcome = transport.drive(transport.preflight_reply(), ws, sandbox)
    seen = outcome.observation.strip()
    if outcome.status != "executed" or seen != PREFLIGHT_WORD:
        detail = "; ".join(outcome.notes) or f"observation {seen[:80]!r}"
        raise HarnessError(
            f"{transport.name} does not work in sandbox {sandbox.name}: "
            f"status {outcome.status}: {detail}"
        )


def suite_size(tasks: Sequence[Task], reply_sets: Sequence[ReplySet]) -> int:
    """How many runs `run_suite` makes for `tasks` and `reply_sets` (for a progress total)."""
    return sum(len(rs.for_task(t.id)) for rs in reply_sets for t in tasks)


def run_suite(
    transport: Transport,
    tasks: Sequence[Task],
    reply_sets: Sequence[ReplySet],
    sandbox: Sandbox,
    *,
    jobs: int = 2,
    progress: Progress | None = None,
) -> list[RunRecord]:
    """Every reply of every set through `transport`; records sorted by (set, task order, id)."""
    preflight(transport, sandbox)
    order: dict[str, int] = {t.id: i for i, t in enumerate(tasks)}
    cells = [
        (task, rs.name, reply)
        for rs in reply_sets
        for task in tasks
        for reply in rs.for_task(task.id)
    ]

    def one(cell: tuple[Task, str, Reply]) -> RunRecord:
        run = run_cell(*cell, transport, sandbox)
        if progress is not None:
            progress.advance(run)
        return run

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = list(pool.map(one, cells))
    return sorted(runs, key=lambda r: (r.reply_set, order[r.task_id], r.reply_id or ""))
