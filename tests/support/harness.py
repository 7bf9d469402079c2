"""Real-harness fixtures: the drivers' pinned environments and a bubblewrap sandbox to run them in.

`harness_env(system)` returns the finished install of a driver. The README's test command
(`scripts/test`) installs the CI drivers before pytest starts (`CI_DRIVERS` there: every system
but OpenHands, whose install takes ~18 minutes). Nothing is installed at test time: a missing
CI driver fails the test with the command that installs it; a missing optional driver
(`optional=True`, OpenHands) skips with that command as its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from boundary_audit.harness import SYSTEMS
from boundary_audit.harness.install import Installation, installed
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox


@pytest.fixture(scope="session")
def harness_env() -> Callable[..., Installation]:
    """`need(system)`: the system's installed driver environment."""

    def need(system: str, optional: bool = False) -> Installation:
        found = installed(SYSTEMS[system].spec)
        if found is not None:
            return found
        command = f"boundary-audit harness install {system}"
        why = f"the {system} harness is not installed: run `{command}`"
        if optional:
            pytest.skip(why)
        pytest.fail(f"{why} (scripts/test does)")

    return need


@pytest.fixture(scope="session")
def harness_box() -> Iterator[Sandbox]:
    """One bubblewrap sandbox for all driver runs of a worker."""
    with make_sandbox("bwrap", Limits(timeout_s=30)) as box:
        yield box
