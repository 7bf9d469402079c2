"""The `boundary-audit observe` report: what every renderer needs, frozen, without timings.

One `ObserveReport` per observed harness: the harness's argv and where it ran, the reply
source and the contract the harness received, what its model was asked and answered
(`exchange`), every canary's chain from the harness to the marker (`ChainView`, hop by hop),
the derived boundary in the adapters' model (`path`: an `adapters.model.BoundaryPath`), its
field differences from an adapter path when one was named (`compared`, `differences`), the
probes' fingerprint, and the Table-8 row of the harness with its measured damage
(`table8`, a one-row `Table8Report`, rendered by the Table-8 renderers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.probes.model import ProbeFact
from boundary_audit.results.table8 import Table8Report

SCHEMA = "boundary-audit/observe/v1"


@dataclass(frozen=True)
class HopView:
    """One hop of a chain: the image, how the canary's bytes reached it, whether it parsed."""

    trace: str
    pid: int
    argv: tuple[str, ...]
    via: str
    parses: bool
    shell: str
    """`bash -lc`, `sh` (stdin), ... for a shell; "" otherwise."""
    detail: str


@dataclass(frozen=True)
class ChainView:
    """One canary's way."""

    label: str
    reply: str
    token: str
    arrived: bool
    complete: bool
    outcome: str
    """The marker's record: intact, unparsed, altered or missing."""
    hops: tuple[HopView, ...]


@dataclass(frozen=True)
class Turn:
    """One model request and what it got."""

    request: int
    api: str
    shape: str
    """`tool`, `fenced`, `final` or `refused`."""
    reply: int | None
    tool: str
    why: str


@dataclass(frozen=True)
class Difference:
    """One field where the observed path and the named adapter path disagree."""

    field: str
    observed: Any
    adapter: Any
    explanation: str = ""


@dataclass(frozen=True)
class ObserveReport:
    """The whole report."""

    tool_version: str
    command: str
    harness: tuple[str, ...]
    name: str
    confinement: str
    source: str
    contract: str
    exit_code: int | None
    timed_out: bool
    complete: bool
    """The harness's own trace is whole (it ended inside the run)."""
    turns: tuple[Turn, ...]
    chains: tuple[ChainView, ...]
    path: BoundaryPath | None
    """None when no boundary could be derived (no canary arrived)."""
    persistent: bool | None
    relays: tuple[str, ...]
    compared: str = ""
    """`system:path` of the adapter path compared with, "" when none was named."""
    differences: tuple[Difference, ...] = ()
    facts: tuple[ProbeFact, ...] = ()
    skipped_probes: tuple[tuple[str, str], ...] = ()
    """(probe, why it cannot be carried by a marker)."""
    table8: Table8Report | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    schema: str = SCHEMA
