"""The single-run primitive: one reply, one task, one transport, one fresh sandbox workspace.

`run_task` is what the parallel runner and the transports' invariant tests call. It owns the
workspace for exactly one run: materialize the fixture, let the transport carry the reply,
validate the final state, then let the sandbox tear everything down.
"""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Sandbox
from boundary_audit.tasks.fixture import materialize
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.suite import load_tasks
from boundary_audit.tasks.validate import Verdict, validate
from boundary_audit.transports.interface import Transport

__all__ = ["Verdict", "load_tasks", "materialize", "run_task", "validate"]


def run_task(
    task: Task, reply: str, transport: Transport, sandbox: Sandbox
) -> tuple[Verdict, ExecResult]:
    """Run `reply` for `task` through `transport` in a fresh workspace of `sandbox`.

    Raises what the sandbox or transport raise when their machinery fails (SandboxError,
    TransportError); what the reply itself does is only ever a failing verdict.
    """
    with sandbox.workspace() as ws:
        materialize(task, ws)
        result = transport.execute(reply, ws, sandbox)
        return validate(task, ws, result), result
