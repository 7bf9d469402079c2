"""System adapters: each audited system's boundary paths as data, and their transports.

Data lives in the top-level system_adapters/ folder (one TOML file per system; format in
docs/adapters.md). Public API:

    load_adapters(select=None, extra=()) -> tuple[Adapter, ...]
    parse_adapter(data, where, stem) -> Adapter
    AdapterTransport(adapter, path)          a Transport: pre-processors, then the transport
    path_transports(adapters) -> list[AdapterTransport]
    PREPROCESSORS / make_preprocessor(name, **params)
"""

from __future__ import annotations

from collections.abc import Iterable

from boundary_audit.adapters.load import load_adapters, parse_adapter
from boundary_audit.adapters.model import (
    Adapter,
    Anchor,
    BoundaryPath,
    StepSpec,
    StudyRow,
    TransportSpec,
)
from boundary_audit.adapters.preprocess import PREPROCESSORS, make_preprocessor
from boundary_audit.adapters.transport import AdapterTransport


def path_transports(adapters: Iterable[Adapter]) -> list[AdapterTransport]:
    """One transport per boundary path, in adapter then path order."""
    return [AdapterTransport(a, p) for a in adapters for p in a.paths]


__all__ = [
    "PREPROCESSORS",
    "Adapter",
    "AdapterTransport",
    "Anchor",
    "BoundaryPath",
    "StepSpec",
    "StudyRow",
    "TransportSpec",
    "load_adapters",
    "make_preprocessor",
    "parse_adapter",
    "path_transports",
]
