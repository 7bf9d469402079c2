"""The ssh transport's OpenSSH server for the test session: started once, stopped at the end.

`ssh_service` starts the process-wide sshd of `boundary_audit.services.sshd` (the one the
`ssh` transport uses) and, at the end of the session, stops it and checks that its process
group is gone, so a test run never leaves an sshd behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from boundary_audit.services import sshd


@pytest.fixture(scope="session")
def ssh_service() -> Iterator[sshd.SshService]:
    """The running sshd (root on the host is required; CI runs as root)."""
    why = sshd.unavailable()
    assert why is None, f"the ssh transport cannot run here: {why}"
    service = sshd.shared_service()
    pid = service.sshd_pid
    try:
        yield service
    finally:
        sshd.stop_shared()
        assert pid is not None
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            pass
        else:  # pragma: no cover - a leak is a test failure
            raise AssertionError(f"sshd process group {pid} survived stop_shared()")
