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

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "load_adapters": "load",
    "parse_adapter": "load",
    "Adapter": "model",
    "Anchor": "model",
    "BoundaryPath": "model",
    "StepSpec": "model",
    "StudyRow": "model",
    "TransportSpec": "model",
    "PREPROCESSORS": "preprocess",
    "make_preprocessor": "preprocess",
    "AdapterTransport": "transport",
}
"""Each public name's module, imported on first use: the data model (read by a static scan's
report) must not pull in the loader, the probes and every transport behind it."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'boundary_audit.adapters' has no attribute {name!r}")
    return getattr(importlib.import_module(f"boundary_audit.adapters.{module}"), name)


def path_transports(adapters: Iterable[Adapter]) -> list[AdapterTransport]:
    """One transport per boundary path, in adapter then path order."""
    from boundary_audit.adapters.transport import AdapterTransport

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
