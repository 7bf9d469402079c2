"""Reading the host's /proc: who a process is, which session it belongs to, what it carries.

The sandboxes use this to find the processes a run left behind: members of the run's pids
cgroup, or (as a second net for the plain-directory backend) any process whose environment
still carries the run's `BA_RUN_ID` marker. Everything here tolerates processes vanishing
between two reads.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcInfo:
    """The fields of /proc/PID/stat that teardown needs."""

    pid: int
    comm: str
    state: str
    """One letter: R, S, D, Z (zombie), T, ..."""
    ppid: int
    pgrp: int
    session: int

    @property
    def alive(self) -> bool:
        """False for a zombie or a dead process: it holds no resources and needs no kill."""
        return self.state not in ("Z", "X")


def read_proc(pid: int) -> ProcInfo | None:
    """The stat fields of `pid`, or None if it is gone."""
    try:
        raw = (PROC / str(pid) / "stat").read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    # NOTE(sandbox): comm may contain spaces and parentheses; the fields after it start after
    # the *last* ')'.
    head, _, tail = raw.rpartition(")")
    fields = tail.split()
    if len(fields) < 4:
        return None
    comm = head.partition("(")[2]
    return ProcInfo(pid, comm, fields[0], int(fields[1]), int(fields[2]), int(fields[3]))


def live(pids: list[int]) -> list[ProcInfo]:
    """Those of `pids` that still exist and are not zombies, in pid order."""
    found = (read_proc(p) for p in sorted(set(pids)))
    return [info for info in found if info is not None and info.alive]


def all_pids() -> list[int]:
    """Every pid currently listed in /proc."""
    return [int(name) for name in os.listdir(PROC) if name.isdigit()]


def pids_with_marker(marker: bytes) -> list[int]:
    """Pids whose environment contains the exact entry `marker` (e.g. b"BA_RUN_ID=<id>")."""
    me = os.getpid()
    found = []
    for pid in all_pids():
        if pid == me:
            continue
        try:
            environ = (PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(pid)
    return found


def sigkill(pids: list[int]) -> None:
    """SIGKILL each pid, ignoring those already gone."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
