"""Observe a harness: send canaries through it, trace it, derive its boundary and fingerprint.

`observe(recorder, harness, source)` runs the harness once, traced, with `count` arrival
canaries as its replies (from `source`), in a fresh workspace with their markers installed,
and with the test sshd reachable when `ssh=True`; it returns the traces, each canary's chain,
what each marker recorded and the derived boundary (`Observation`). `fingerprint` runs every
probe a marker can carry through the harness the same way, one run per probe, and reads each
probe's fact from the markers' records. Runs that could not be carried out raise (the
recorder's SandboxError, UsageError for a harness that cannot be executed); what the harness
does (fails, times out, never runs a canary) is in the result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.observe.canary import (
    Canary,
    arrival_canaries,
    arrival_outcome,
    install,
    probe_canaries,
    probe_fact,
    records,
    unsupported,
)
from boundary_audit.observe.chain import Chain, trace_chain
from boundary_audit.observe.classify import Derived, classify, to_path
from boundary_audit.observe.endpoint import PORT
from boundary_audit.observe.record import Recorder, TracedRun
from boundary_audit.observe.remote import SshEndpoint
from boundary_audit.observe.replies import ReplySource
from boundary_audit.observe.tree import ProcessTree
from boundary_audit.probes.model import Fingerprint, Probe
from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.taxonomy import Contract


@dataclass(frozen=True)
class Observation:
    """One traced run of a harness with arrival canaries, and what it shows."""

    harness: tuple[str, ...]
    source: str
    contract: Contract
    canaries: tuple[Canary, ...]
    result: ExecResult
    trees: tuple[ProcessTree, ...]
    """The harness's trace first, then one per remote command (`remote-1`, ...)."""
    chains: tuple[Chain, ...]
    """One per canary, in reply order."""
    outcomes: Mapping[str, str] = field(default_factory=dict)
    """canary label -> its arrival outcome (canary.INTACT, UNPARSED, ALTERED, MISSING)."""
    derived: Derived | None = None

    @property
    def complete(self) -> bool:
        """The harness's own trace is whole (it ended inside the run)."""
        return self.trees[0].complete

    def path(self, expect: Mapping[str, str] | None = None) -> BoundaryPath:
        """The derived boundary as an adapter path (`expect`: a fingerprint's outcomes)."""
        assert self.derived is not None
        return to_path(self.derived, self.contract, expect=expect)


@dataclass(frozen=True)
class ProbeRun:
    """What running one probe through the harness left."""

    probe: str
    result: ExecResult
    chains: tuple[Chain, ...]


@contextmanager
def _run(
    recorder: Recorder,
    harness: Sequence[str],
    source: ReplySource,
    canaries: Sequence[Canary],
    *,
    env: Mapping[str, str] | None,
    ssh: bool,
    timeout: float | None,
) -> Iterator[tuple[Workspace, TracedRun, tuple[ProcessTree, ...], str | None]]:
    limit = timeout or recorder.limits.timeout_s
    with recorder.workspace() as ws:
        install(ws, canaries)
        replies = [c.reply for c in canaries]
        endpoint = SshEndpoint(recorder, ws, limit) if ssh else None
        with source.deliver(replies, ws) as delivery, ExitStack() as stack:
            extra = stack.enter_context(endpoint).env if endpoint is not None else {}
            run = recorder.run(
                ws,
                harness,
                stdin=delivery.stdin,
                env={**delivery.env, **(env or {}), **extra},
                timeout=limit,
                relay=delivery.relay,
                port=PORT,
            )
        remote = tuple(r.tree for r in endpoint.runs) if endpoint is not None else ()
        model = f"127.0.0.1:{PORT}" if delivery.relay is not None else None
        yield ws, run, (run.tree, *remote), model


def observe(
    recorder: Recorder,
    harness: Sequence[str],
    source: ReplySource,
    *,
    count: int = 2,
    env: Mapping[str, str] | None = None,
    ssh: bool = False,
    timeout: float | None = None,
) -> Observation:
    """Run `harness` once with `count` arrival canaries and derive its boundary."""
    canaries = arrival_canaries(count)
    with _run(recorder, harness, source, canaries, env=env, ssh=ssh, timeout=timeout) as (
        ws,
        run,
        trees,
        model,
    ):
        outcomes = {c.label: arrival_outcome(c, records(ws, c.token)) for c in canaries}
    chains = tuple(trace_chain(trees, c, model) for c in canaries)
    return Observation(
        tuple(harness),
        source.name,
        source.contract,
        canaries,
        run.result,
        trees,
        chains,
        outcomes,
        classify(chains, source.contract),
    )


def fingerprint(
    recorder: Recorder,
    harness: Sequence[str],
    source: ReplySource,
    probes: Sequence[Probe],
    *,
    label: str = "observed",
    env: Mapping[str, str] | None = None,
    ssh: bool = False,
    timeout: float | None = None,
) -> tuple[Fingerprint, dict[str, str], tuple[ProbeRun, ...]]:
    """Each probe a marker can carry, run through `harness` (one traced run per probe).

    Returns the fingerprint (in `probes` order), the probes left out with why, and the runs."""
    facts = []
    skipped: dict[str, str] = {}
    runs = []
    for probe in probes:
        why = unsupported(probe)
        if why is not None:
            skipped[probe.id] = why
            continue
        canaries = probe_canaries(probe)
        with _run(recorder, harness, source, canaries, env=env, ssh=ssh, timeout=timeout) as (
            ws,
            run,
            trees,
            model,
        ):
            facts.append(probe_fact(probe, canaries, ws))
        chains = tuple(trace_chain(trees, c, model) for c in canaries if c.marks)
        runs.append(ProbeRun(probe.id, run.result, chains))
    return Fingerprint(label, tuple(facts)), skipped, tuple(runs)
