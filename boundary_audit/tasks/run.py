"""The single-run primitive: one reply, one task, one transport, one fresh sandbox workspace.

`run_task` is what the parallel runner and the transports' invariant tests call. It owns the
workspace for exactly one run: materialize the fixture, let the transport carry the reply
(and the task's follow-up command, see `carry`), validate the final state, then let the
sandbox tear everything down.
"""

from __future__ import annotations

import dataclasses

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.tasks.fixture import materialize
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.suite import load_tasks
from boundary_audit.tasks.validate import Verdict, validate
from boundary_audit.transports.interface import Transport

__all__ = ["Verdict", "carry", "load_tasks", "materialize", "run_task", "validate"]


def run_task(
    task: Task, reply: str, transport: Transport, sandbox: Sandbox
) -> tuple[Verdict, ExecResult]:
    """Run `reply` for `task` through `transport` in a fresh workspace of `sandbox`.

    Raises what the sandbox or transport raise when their machinery fails (SandboxError,
    TransportError); what the reply itself does is only ever a failing verdict.
    """
    with sandbox.workspace() as ws:
        materialize(task, ws)
        result = carry(task, reply, transport, ws, sandbox)
        return validate(task, ws, result), result


def carry(
    task: Task, reply: str, transport: Transport, ws: Workspace, sandbox: Sandbox
) -> ExecResult:
    """Let `transport` run `reply`, then the task's follow-up command if it has one.

    With a follow-up both go through `execute_sequence`, so a stateful transport (a session,
    tmux) sends them into one live shell, as a harness sends its next command, and the others
    run them as two fresh processes. The reply's result is returned (its stdout is what the
    validator sees), marked timed out if either run timed out.
    """
    if not task.followup:
        return transport.execute(reply, ws, sandbox)
    sequence = getattr(transport, "execute_sequence", None)
    results: list[ExecResult]
    if sequence is not None:
        results = sequence([reply, task.followup], ws, sandbox)
    else:
        results = [transport.execute(r, ws, sandbox) for r in (reply, task.followup)]
    first, after = results
    return dataclasses.replace(
        first,
        timed_out=first.timed_out or after.timed_out,
        duration_s=first.duration_s + after.duration_s,
    )
