"""An adapter's boundary path as one Transport: the harness's pre-processors, then its transport.

`AdapterTransport` is what the runner, the probes and `table8` push replies through. For each
reply it runs the path's pre-processors (in the reply's own workspace, so a pre-processor that
runs a program is confined like the reply), then hands the surviving parts to the inner
transport. A refused reply becomes a `rejected` result without running; a reply that ends the
episode (SWE-agent's `exit`) runs nothing and every later reply is reported as not run. When
a reply splits into several parts (AutoGen's code blocks) they run in order, stopping at the
first non-zero exit, as the executor does; the results are merged into one.

NOTE(h9): for a stateful inner transport every reply is pre-processed before the session
starts (the session driver takes all replies at once). Only a pre-processor with side effects
(SWE-ReX's `bash -n` check, which `/bin/sh` runs) could tell the difference.

Pre-processing is host-side work on a hostile reply, so it is bounded and charged to the run:
a reply no boundary can carry (`transports.interface.refusal`: too long, not text) is
refused before any step sees it; each step gets the run's deadline; and the inner transport
runs with what is left of the timeout (`within`). A reply whose pre-processing used up the
timeout is not run and times out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from boundary_audit.adapters.model import Adapter, BoundaryPath
from boundary_audit.adapters.preprocess import (
    Context,
    Preprocessor,
    Staged,
    make_preprocessor,
    run_pipeline,
)
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import (
    Transport,
    TransportResult,
    not_run,
    refusal,
    within,
)


class AdapterTransport(Transport):
    """One boundary path of one audited system, end to end."""

    name = "adapter"

    def __init__(self, adapter: Adapter, path: BoundaryPath) -> None:
        super().__init__()
        self.adapter = adapter
        self.path = path
        self.boundary_class = path.boundary_class  # type: ignore[misc]
        self.inner: Transport = make_transport(path.transport.name, **dict(path.transport.params))
        self.steps: tuple[Preprocessor, ...] = tuple(
            make_preprocessor(s.name, **dict(s.params)) for s in path.preprocess
        )
        self.stateful = self.inner.stateful  # type: ignore[misc]

    @property
    def label(self) -> str:
        """`system:path`, e.g. `swe-agent:default`."""
        return self.adapter.label(self.path)

    def supports(self, sandbox: Sandbox) -> str | None:
        return self.inner.supports(sandbox)

    def close(self) -> None:
        self.inner.close()

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        timeout = float(sandbox.limits.timeout_s)
        staged: list[Staged] = []
        spent: list[float] = []
        for reply in replies:
            started = time.monotonic()
            stage = self._stage(reply, Context(ws, sandbox, deadline=started + timeout))
            spent.append(time.monotonic() - started)
            if not (stage.rejected or stage.ended or stage.timed_out) and spent[-1] >= timeout:
                stage = Staged.late("pre-processing used up the run's timeout; nothing ran")
            staged.append(stage)
            if stage.ended:
                break
        if self.inner.stateful:
            sent = [t for s, t in zip(staged, spent, strict=True) if not _held(s)]
            budget = within(sandbox, timeout - max(sent, default=0.0))
            ran = self._run_session(staged, ws, budget)
        else:
            ran = [
                None if _held(s) else self._run_parts(s.parts, ws, within(sandbox, timeout - t))
                for s, t in zip(staged, spent, strict=True)
            ]
        results = [self._result(s, r) for s, r in zip(staged, ran, strict=True)]
        missing = len(replies) - len(results)
        results += [not_run("not run: the agent ended at an earlier reply")] * missing
        return results

    def _stage(self, reply: str, ctx: Context) -> Staged:
        """The pre-processors' verdict on `reply`, or a refusal no step needs to see."""
        why = refusal(self.label, reply, argv=False)
        return Staged.refuse(why) if why else run_pipeline(self.steps, reply, ctx)

    def _run_session(
        self, staged: list[Staged], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult | None]:
        order = [(i, part) for i, s in enumerate(staged) if not _held(s) for part in s.parts]
        outputs = self.inner.execute_sequence([p for _, p in order], ws, sandbox) if order else []
        grouped: list[list[ExecResult]] = [[] for _ in staged]
        for (i, _), res in zip(order, outputs, strict=True):
            grouped[i].append(res)
        return [_merge(g) if g else None for g in grouped]

    def _run_parts(self, parts: Sequence[str], ws: Workspace, sandbox: Sandbox) -> ExecResult:
        done: list[ExecResult] = []
        for part in parts:
            done.append(self.inner.execute(part, ws, sandbox))
            if done[-1].exit_code != 0:
                break
        return _merge(done) if done else not_run("no code to run")

    def _result(self, stage: Staged, ran: ExecResult | None) -> ExecResult:
        if stage.rejected:
            return _refused(stage.rejected)
        if stage.ended:
            return not_run(stage.ended)
        if stage.timed_out:
            return TransportResult(
                exit_code=None, stdout=b"", stderr=b"", timed_out=True, note=stage.timed_out
            )
        assert ran is not None
        stdout = ran.stdout
        for step in self.steps:
            stdout = step.clean_stdout(stdout)
        return replace(ran, stdout=stdout) if stdout != ran.stdout else ran


def _merge(results: Sequence[ExecResult]) -> ExecResult:
    """Several parts' results as one: outputs joined, the last part's status."""
    if len(results) == 1:
        return results[0]
    last = results[-1]
    return replace(
        last,
        stdout=b"".join(r.stdout for r in results),
        stderr=b"".join(r.stderr for r in results),
        timed_out=any(r.timed_out for r in results),
        duration_s=sum(r.duration_s for r in results),
    )


def _refused(why: str) -> TransportResult:
    return TransportResult(exit_code=None, stdout=b"", stderr=why.encode() + b"\n", rejected=why)


def _held(stage: Staged) -> bool:
    """True when the stage hands nothing to the transport (refused, ended, out of time)."""
    return bool(stage.rejected or stage.ended or stage.timed_out)
