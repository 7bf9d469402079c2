"""The parallel runner: plan order, determinism, per-cell errors, preflight, skips, progress."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from boundary_audit.errors import SandboxError, TransportError
from boundary_audit.pipelines.runner import plan_cells, preflight, run_cells
from boundary_audit.record import RunRecord, SkippedTransport
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.tasks import Reply, ReplySet, Task, Verdict, load_tasks
from boundary_audit.tasks.replies import builtin_reply_set
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport
from boundary_audit.transports.raw import RawTransport


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()

    def start(self, total: int) -> None:
        self.events.append(f"start {total}")

    def advance(self, record: RunRecord) -> None:
        with self.lock:
            self.events.append(f"{record.task_id}/{record.transport}")

    def finish(self) -> None:
        self.events.append("finish")


class Unsupported(RawTransport):
    name = "needs-python"

    def supports(self, sandbox: Sandbox) -> str | None:
        return "no Python inside"


class Broken(Sandbox):
    name = "broken"
    isolated = True

    def __init__(self, how: str) -> None:
        super().__init__(Limits())
        self.how = how

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        yield Workspace("x", Path("/nonexistent"), *[Path("/nonexistent")] * 5, *["/x"] * 5)

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        if self.how == "raise":
            raise SandboxError("bwrap: setting up uid map: Permission denied")
        return ExecResult(1, b"", b"noise\nbwrap: Can't mount proc: Operation not permitted\n")


@pytest.fixture(scope="module")
def tasks() -> tuple[Task, ...]:
    return load_tasks("write-file,json-write")


def _sets(tasks: Sequence[Task]) -> list[ReplySet]:
    return [builtin_reply_set("oracle", tasks), builtin_reply_set("naive", tasks)]


def test_plan_order_is_reply_set_transport_task(tasks: tuple[Task, ...]) -> None:
    transports = [make_transport("raw"), make_transport("nested")]
    with make_sandbox("tempdir") as box:
        cells, skipped = plan_cells(tasks, _sets(tasks), transports, box)
    assert skipped == []
    assert [c.order for c in cells] == list(range(32))
    keys = [(c.reply_set, c.transport.name, c.task.id) for c in cells]
    assert keys[:2] == [("oracle", "raw", "write-file-t0"), ("oracle", "raw", "write-file-t1")]
    assert keys[8] == ("oracle", "nested", "write-file-t0")
    assert keys[16] == ("naive", "raw", "write-file-t0") and keys[-1] == (
        "naive",
        "nested",
        "json-write-t3",
    )


def test_unsupported_transports_are_skipped_with_the_reason(tasks: tuple[Task, ...]) -> None:
    with make_sandbox("tempdir") as box:
        cells, skipped = plan_cells(tasks, _sets(tasks)[:1], [Unsupported(), RawTransport()], box)
    assert skipped == [SkippedTransport("needs-python", "no Python inside")]
    assert {c.transport.name for c in cells} == {"raw"} and len(cells) == 8


def _fake_run(seed: int, fail: str | None = None, crash: str | None = None):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    delays = {}

    def run_one(
        task: Task, reply: str, transport: Transport, sandbox: Sandbox
    ) -> tuple[Verdict, ExecResult]:
        delays.setdefault((task.id, transport.name), rng.random() / 50)
        time.sleep(delays[(task.id, transport.name)])
        if task.id == fail:
            raise TransportError("tmux: server exited before the reply was sent")
        if task.id == crash:
            raise ValueError("boom\nsecond line")
        passed = task.tier % 2 == 0 or transport.name == "raw"
        return Verdict(passed, "ok" if passed else f"{task.id} differs"), ExecResult(0, b"", b"")

    return run_one


def _strip(records: tuple[RunRecord, ...]) -> list[RunRecord]:
    return [replace(r, duration_s=0.0) for r in records]


def test_records_are_identical_whatever_the_completion_order(tasks: tuple[Task, ...]) -> None:
    transports = [make_transport("raw"), make_transport("nested")]
    with make_sandbox("tempdir") as box:
        cells, _ = plan_cells(tasks, _sets(tasks), transports, box)
        first = run_cells(cells, box, jobs=4, run_one=_fake_run(1))
        second = run_cells(list(reversed(cells)), box, jobs=2, run_one=_fake_run(2))
    assert _strip(first) == _strip(second)
    assert [r.task_id for r in first[:3]] == ["write-file-t0", "write-file-t1", "write-file-t2"]
    r = first[9]
    assert (r.task_id, r.transport, r.reply_set, r.passed, r.reason) == (
        "write-file-t1",
        "nested",
        "oracle",
        False,
        "write-file-t1 differs",
    )
    assert (r.family, r.tier, r.core, r.tags, r.reply_id, r.model, r.contract) == (
        "write-file",
        1,
        True,
        (),
        "oracle",
        None,
        None,
    )


def test_a_failing_cell_is_recorded_and_the_runner_keeps_going(tasks: tuple[Task, ...]) -> None:
    with make_sandbox("tempdir") as box:
        cells, _ = plan_cells(tasks, _sets(tasks)[:1], [make_transport("raw")], box)
        records = run_cells(
            cells, box, run_one=_fake_run(3, fail="write-file-t2", crash="json-write-t1")
        )
    assert len(records) == 8
    by_id = {r.task_id: r for r in records}
    assert by_id["write-file-t2"].reason == "error: tmux: server exited before the reply was sent"
    assert by_id["json-write-t1"].reason == "error: internal: ValueError: boom"
    assert [r.task_id for r in records if r.errored] == ["write-file-t2", "json-write-t1"]
    assert all(r.passed for r in records if not r.errored)
    assert by_id["write-file-t2"].exit_code is None and not by_id["write-file-t2"].passed


def test_progress_sees_every_run(tasks: tuple[Task, ...]) -> None:
    progress = Recorder()
    with make_sandbox("tempdir") as box:
        cells, _ = plan_cells(tasks, _sets(tasks)[:1], [make_transport("raw")], box)
        run_cells(cells, box, jobs=2, progress=progress, run_one=_fake_run(4))
    assert progress.events[0] == "start 8" and progress.events[-1] == "finish"
    assert sorted(progress.events[1:-1]) == sorted(f"{t.id}/raw" for t in tasks)


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_preflight_reports_a_sandbox_that_cannot_run(how: str) -> None:
    with pytest.raises(SandboxError) as err:
        preflight(Broken(how))
    expected = {
        "raise": "bwrap: setting up uid map: Permission denied",
        "exit": "bwrap: Can't mount proc: Operation not permitted",
    }[how]
    assert err.value.message == f"sandbox 'broken' cannot run a command: {expected}"


@pytest.mark.bwrap
def test_real_runs_are_deterministic(tasks: tuple[Task, ...]) -> None:
    transports = [make_transport("raw"), make_transport("nested")]
    with make_sandbox("bwrap") as box:
        preflight(box)
        cells, _ = plan_cells(tasks[:4], _sets(tasks[:4]), transports, box)
        first = run_cells(cells, box, jobs=2)
        second = run_cells(cells, box, jobs=2)
    # write-file-t3's naive reply runs `date` when a second parser expands it: leave it out.
    stable = [r for r in _strip(first) if r.task_id != "write-file-t3"]
    assert stable == [r for r in _strip(second) if r.task_id != "write-file-t3"]
    oracle_raw = [r.passed for r in first if (r.reply_set, r.transport) == ("oracle", "raw")]
    assert oracle_raw == [True] * 4


def test_model_replies_keep_model_and_contract(tasks: tuple[Task, ...]) -> None:
    replies = ReplySet("m.jsonl", (Reply("write-file-t0", "echo hi", "r1", "gpt", "disclosed"),))
    with make_sandbox("tempdir") as box:
        cells, _ = plan_cells(tasks, [replies], [make_transport("raw")], box)
        (record,) = run_cells(cells, box, run_one=_fake_run(5))
    assert (record.reply_set, record.reply_id, record.model, record.contract) == (
        "m.jsonl",
        "r1",
        "gpt",
        "disclosed",
    )


def test_a_failed_reply_is_never_run_and_fails_with_its_reason(tasks: tuple[Task, ...]) -> None:
    """`meta.failure` (the model gave no command): no run at all, a failure that is no error."""
    failed = Reply("write-file-t0", "", "raw-d1", "gpt", "raw", draw=1, failure="refusal")
    fine = Reply("write-file-t1", "true", "raw-d1", "gpt", "raw", draw=1)
    ran: list[str] = []

    def run_one(
        task: Task, reply: str, transport: Transport, sandbox: Sandbox
    ) -> tuple[Verdict, ExecResult]:
        ran.append(task.id)
        return Verdict(True, "ok"), ExecResult(0, b"", b"")

    with make_sandbox("tempdir") as box:
        cells, _ = plan_cells(tasks, [ReplySet("m.jsonl", (failed, fine))], [RawTransport()], box)
        first, second = run_cells(cells, box, run_one=run_one)
    assert ran == ["write-file-t1"]
    assert (first.task_id, first.passed, first.reason, first.exit_code, first.errored) == (
        "write-file-t0", False, "failed reply: refusal", None, False,
    )  # fmt: skip
    assert (first.draw, second.draw, second.passed) == (1, 1, True)
