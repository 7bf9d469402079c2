"""Harness in the loop: run the task suite through each audited system's own released code.

An adapter (issue 5) is our model of a harness; a driver here pushes the same replies through
the harness's real execution path, installed into its own pinned virtual environment
(`install.py`), as a Transport named `harness:<system>` (`transport.py`, `drivers/`). `suite.py`
runs the task suite through a driver, `compare.py` pairs it with an adapter or a named
transport, and `report.py` renders the result.

Systems with a driver: swe-agent, langchain, autogen, openhands, terminal-bench, codex (all six
audited systems).
"""

from __future__ import annotations

from typing import Any

from boundary_audit.errors import UsageError
from boundary_audit.harness.drivers import DRIVERS
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.harness.transport import DriverOutcome, HarnessTransport

SYSTEMS: dict[str, type[HarnessTransport]] = {cls.spec.name: cls for cls in DRIVERS}
"""System name -> driver transport class, in report order."""


def driver_class(system: str) -> type[HarnessTransport]:
    """The driver of `system` (also accepted: `harness:<system>`)."""
    key = system.removeprefix("harness:")
    if key in SYSTEMS:
        return SYSTEMS[key]
    known = ", ".join([*SYSTEMS, "all"])
    raise UsageError(f"unknown harness system {system!r} (known: {known})")


def select(systems: str) -> list[type[HarnessTransport]]:
    """`all` or one system name -> driver classes."""
    return list(DRIVERS) if systems == "all" else [driver_class(systems)]


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
