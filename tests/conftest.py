"""Shared pytest configuration. Fixture plugins live in tests/support/ and are listed here."""

from __future__ import annotations

import os
import tempfile

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
