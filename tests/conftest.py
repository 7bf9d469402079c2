"""Shared pytest configuration. Fixture plugins live in tests/support/ and are listed here."""

from __future__ import annotations

import os
import signal
import tempfile

# NOTE: a suite started in the background of a non-interactive shell (`./.ci/run &`, nohup)
# inherits SIGINT and SIGHUP ignored, and so would every CLI it starts: the tests of what
# Ctrl-C and a hangup do then see a run that never stops. A user's terminal delivers them.
for _sig, _default in (
    (signal.SIGINT, signal.default_int_handler),
    (signal.SIGHUP, signal.SIG_DFL),
):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, _default)

# NOTE: the supervisor's ledgers and leases go to one directory for the whole test session
# (every xdist worker), not to $HOME, which some tests point at canary trees they delete.
os.environ.setdefault(
    "BOUNDARY_AUDIT_STATE_DIR", os.path.join(tempfile.gettempdir(), f"ba-test-state-{os.getuid()}")
)

pytest_plugins: list[str] = [
    "tests.support.git_daemon",
    "tests.support.dockerd",
    "tests.support.harness",
    "tests.support.sshd",
    "tests.support.llm_mock",
]

collect_ignore = ["fixtures"]
"""Scanned code, never our tests: a scope fixture is named like a test (`tests/test_agent.py`)
on purpose, and pytest would collect it."""
