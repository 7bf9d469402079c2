"""Real-harness fixtures: the drivers' pinned environments and a bubblewrap sandbox to run them in.

`harness_env(system)` returns the finished install of a driver. `.ci/run` installs them before
the tests (`boundary-audit harness install swe-agent langchain autogen`); on a developer
machine a missing one is installed here once, through the installer's lock (so concurrent
xdist workers build it once). Where it cannot be installed, CI fails loudly and a developer
machine skips with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from boundary_audit.errors import BoundaryAuditError
from boundary_audit.harness import SYSTEMS
from boundary_audit.harness.install import Installation, install, installed
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox


@pytest.fixture(scope="session")
def harness_env() -> Callable[[str], Installation]:
    """`need(system)`: the system's installed driver environment."""

    def need(system: str) -> Installation:
        spec = SYSTEMS[system].spec
        found = installed(spec)
        if found is not None:
            return found
        try:
            return install(spec)
        except BoundaryAuditError as exc:
            why = f"the {system} harness is not installed and cannot be installed: {exc.message}"
            if os.environ.get("CI"):
                pytest.fail(f"{why} (.ci/run must run `boundary-audit harness install {system}`)")
            pytest.skip(why)

    return need


@pytest.fixture(scope="session")
def harness_box() -> Iterator[Sandbox]:
    """One bubblewrap sandbox for all driver runs of a worker."""
    with make_sandbox("bwrap", Limits(timeout_s=30)) as box:
        yield box
