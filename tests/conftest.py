"""Shared pytest configuration. Fixture plugins live in tests/support/ and are listed here."""

from __future__ import annotations

pytest_plugins: list[str] = [
    "tests.support.git_daemon",
    "tests.support.dockerd",
    "tests.support.harness",
    "tests.support.sshd",
]
