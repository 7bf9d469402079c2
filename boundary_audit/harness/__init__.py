"""Harness in the loop: run the task suite through each audited system's own released code.

An adapter (issue 5) is our model of a harness; a driver here pushes the same replies through
the harness's real execution path, installed into its own pinned virtual environment
(`install.py`), as a Transport named `harness:<system>` (`transport.py`, `drivers/`);
`systems.py` is the registry naming every part of each system. `suite.py` runs the task suite
through a driver; `pipelines.harness` pairs it with an adapter or a named transport and
`results.harness` holds the comparison.

Systems with a driver: swe-agent, langchain, autogen, openhands, terminal-bench, codex (all six
audited systems).
"""

from __future__ import annotations

from typing import Any

from boundary_audit.errors import UsageError
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.harness.systems import REGISTRY
from boundary_audit.harness.transport import DriverOutcome, HarnessTransport

SYSTEMS: dict[str, type[HarnessTransport]] = {s.name: s.driver for s in REGISTRY}
"""System name -> driver transport class, in report order (from `systems.REGISTRY`)."""


def driver_class(system: str) -> type[HarnessTransport]:
    """The driver of `system` (also accepted: `harness:<system>`)."""
    key = system.removeprefix("harness:")
    if key in SYSTEMS:
        return SYSTEMS[key]
    known = ", ".join([*SYSTEMS, "all"])
    raise UsageError(f"unknown harness system {system!r} (known: {known})")


def select(systems: str) -> list[type[HarnessTransport]]:
    """`all` or one system name -> driver classes."""
    return list(SYSTEMS.values()) if systems == "all" else [driver_class(systems)]


def make_harness_transport(system: str, **params: Any) -> HarnessTransport:
    """A configured `harness:<system>` transport."""
    return driver_class(system)(**params)


__all__ = [
    "SYSTEMS",
    "DriverOutcome",
    "HarnessSpec",
    "HarnessTransport",
    "driver_class",
    "make_harness_transport",
    "select",
]
