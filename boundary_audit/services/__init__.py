"""Long-lived helper daemons (dockerd here; sshd and tmux servers live beside it).

`DaemonProcess` is the Popen wrapper for programs that must outlive one call of
`boundary_audit._subprocess.run`: it starts the program in its own session with its output
going to a log file, and stops it by SIGTERM to the process, then SIGKILL to the whole group.
Every daemon is registered with the supervisor while it runs, so one that a killed
boundary-audit leaves behind is stopped by its guardian; a daemon shared by several processes
(`supervised=False`) is governed by its leases instead (`supervisor.Shared`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit._subprocess import kill_group, popen
from boundary_audit.errors import EnvironmentUnavailable


class DaemonProcess:
    """A started daemon: its pid, its log file, and a way to stop it for good."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        log: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        supervised: bool = True,
    ) -> None:
        self.argv = [str(a) for a in argv]
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._token: int | None = None
        with open(log, "ab") as sink:

            def start(child_env: dict[str, str] | None) -> subprocess.Popen[bytes]:
                return popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    env=child_env,
                    cwd=cwd,
                    start_new_session=True,
                )

            try:
                if supervised:  # NOTE: a shared daemon is governed by its leases instead
                    self._proc, self._token = supervisor.spawned(
                        start, dict(env) if env is not None else None
                    )
                else:
                    self._proc = start(dict(env) if env is not None else None)
            except FileNotFoundError as exc:
                raise EnvironmentUnavailable(f"program not found: {self.argv[0]}") from exc

    @property
    def pid(self) -> int:
        """The daemon's pid (also its process group and session id)."""
        return self._proc.pid

    def running(self) -> bool:
        """True while the daemon has not exited."""
        return self._proc.poll() is None

    def log_tail(self, lines: int = 1) -> str:
        """The last non-empty lines of the daemon's log, for error messages."""
        try:
            text = self.log.read_text("utf-8", "replace")
        except OSError:
            return ""
        found = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return " | ".join(found[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, wait up to `timeout`, then SIGKILL the group; idempotent."""
        if self.running():
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + timeout
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
        kill_group(self.pid)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            pass
        if self._token is not None:
            supervisor.ledger().release(self._token)
            self._token = None
