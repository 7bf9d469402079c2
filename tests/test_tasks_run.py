"""run_task: one reply through one transport in a fresh workspace, follow-ups, refusals."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import Verdict, load_tasks, run_task
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport


def one(task_id: str):  # type: ignore[no-untyped-def]
    (task,) = load_tasks(task_id)
    return task


def test_run_task_returns_verdict_and_result() -> None:
    task = one("write-file-t3")
    verdict, result = run_task(task, task.oracle, make_transport("raw"), TempdirSandbox())
    assert verdict == Verdict(True, "ok")
    assert (result.exit_code, result.timed_out) == (0, False)
    verdict, _ = run_task(task, task.naive, make_transport("nested"), TempdirSandbox())
    assert verdict == Verdict(False, 'missing file "out.txt"')


class OneShell(Transport):
    """A stand-in stateful transport: the replies of a sequence share one bash process."""

    name = "one-shell"
    boundary_class = BoundaryClass.SHELL_SESSION

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        res = sandbox.run(ws, ["bash", "-c", "\n".join(replies)])
        return [res, dataclasses.replace(res, stdout=b"")]


def test_followup_runs_fresh_on_stateless_transports_and_in_the_session_otherwise() -> None:
    task = one("session-state-t1")  # naive: cd build && ...; follow-up writes after.txt
    assert task.followup == "printf 'next\\n' > after.txt"
    raw, _ = run_task(task, task.naive, make_transport("raw"), TempdirSandbox())
    assert raw == Verdict(True, "ok")
    shared, _ = run_task(task, task.naive, OneShell(), TempdirSandbox())
    assert shared == Verdict(
        False, 'missing file "after.txt"; unexpected file "build/after.txt" (collateral)'
    )
    oracle, _ = run_task(task, task.oracle, OneShell(), TempdirSandbox())
    assert oracle == Verdict(True, "ok")


@dataclasses.dataclass(frozen=True)
class Refused(ExecResult):
    rejected: str = ""


class Refusing(Transport):
    name = "refusing"
    boundary_class = BoundaryClass.ARGV_DIRECT

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return Refused(None, b"", b"", rejected="unparsable JSON: Expecting ',' delimiter")


def test_a_refused_reply_fails_with_the_boundary_reason() -> None:
    task = one("tty-keys-t1")
    verdict, _ = run_task(task, task.oracle, Refusing(), TempdirSandbox())
    assert verdict == Verdict(
        False,
        "the boundary refused the reply: unparsable JSON: Expecting ',' delimiter; "
        'missing file "cols.txt"',
    )
