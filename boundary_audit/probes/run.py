"""Run fingerprint probes through a transport and read their canaries.

Each probe gets a fresh workspace; its replies go through `execute_sequence`, so a stateful
transport (a session, a tmux pane) sees them in one live shell and a stateless one runs each
in a fresh process. The canary is searched in the replies' stdout (for tmux: the pane text),
first reply first. A missing canary carries what the boundary said instead (a refusal, the
session ending, a timeout) in `detail`. Probes run in parallel; the result is in probe order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from boundary_audit.errors import BoundaryAuditError
from boundary_audit.probes.model import MISSING, UNEXPECTED, Fingerprint, Probe, ProbeFact
from boundary_audit.sandbox.interface import ExecResult, Sandbox
from boundary_audit.transports.interface import Transport


def read_fact(probe: Probe, results: Sequence[ExecResult]) -> ProbeFact:
    """The fact one probe's results show."""
    pattern = probe.pattern()
    for res in results:
        match = pattern.search(res.stdout.decode("utf-8", "replace"))
        if match:
            value = match.group(1)
            outcome = value if value in probe.outcomes else UNEXPECTED
            return ProbeFact(probe.id, outcome, probe.meaning(outcome), value)
    return ProbeFact(probe.id, MISSING, probe.missing, None, _detail(results))


def _detail(results: Sequence[ExecResult]) -> str:
    for res in results:
        for attr in ("rejected", "note"):
            said = getattr(res, attr, "")
            if said:
                return str(said)
        if res.timed_out:
            return "timed out"
    last = results[-1] if results else None
    if last is not None and last.stderr.strip():
        lines = last.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:200]
    return ""


def run_probe(probe: Probe, transport: Transport, sandbox: Sandbox) -> ProbeFact:
    """One probe in a fresh workspace; a broken transport becomes a fact, not an exception."""
    try:
        with sandbox.workspace() as ws:
            results = transport.execute_sequence(list(probe.replies), ws, sandbox)
    except BoundaryAuditError as exc:
        return ProbeFact(probe.id, MISSING, probe.missing, None, f"error: {exc.message}")
    return read_fact(probe, results)


def fingerprint(
    transport: Transport,
    sandbox: Sandbox,
    probes: Sequence[Probe],
    *,
    jobs: int = 2,
    progress: Callable[[str], None] | None = None,
) -> Fingerprint:
    """Every probe's fact for `transport`, in the order of `probes`."""
    note = progress or (lambda _msg: None)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_probe, p, transport, sandbox) for p in probes]
        facts = []
        for probe, fut in zip(probes, futures, strict=True):
            facts.append(fut.result())
            note(f"probe {probe.id} via {transport.label}")
    return Fingerprint(transport.label, tuple(facts))
