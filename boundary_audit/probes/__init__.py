"""Boundary-fingerprint probes: load the canary payloads in probes/ and run them.

Public API:

    load_probes(select=None, extra=()) -> tuple[Probe, ...]
    fingerprint(transport, sandbox, probes, *, jobs=2, progress=None) -> Fingerprint
    run_probe(probe, transport, sandbox) -> ProbeFact
"""

from __future__ import annotations

from boundary_audit.probes.load import load_probes, parse_probe
from boundary_audit.probes.model import (
    MISSING,
    UNEXPECTED,
    Fingerprint,
    Probe,
    ProbeFact,
    ProbeId,
)
from boundary_audit.probes.run import fingerprint, read_fact, run_probe

__all__ = [
    "MISSING",
    "UNEXPECTED",
    "Fingerprint",
    "Probe",
    "ProbeFact",
    "ProbeId",
    "fingerprint",
    "load_probes",
    "parse_probe",
    "read_fact",
    "run_probe",
]
