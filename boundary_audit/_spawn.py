"""Starting a child (the one lock every `Popen` and every write of a runnable file holds)
and waiting for it (`wait`, which sees its exit when it happens).

The lowest module of the package (it imports nothing of it), so that the supervisor and the
process helpers above it share one lock.
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_MAX_MS = 2**31 - 1

SPAWN_LOCK = threading.Lock()
"""Held while a child is started (until it has exec'd) and while a file it may run is written.

A child forked while another thread holds a file open for writing inherits that descriptor
until its own exec closes it (O_CLOEXEC); running that file in the meantime fails with ETXTBSY
("Text file busy"). The parallel runner writes each run's helper programs while other runs
start their sandboxes, so the two must not overlap. `Popen` returns only after the child's
exec, so holding the lock around it closes the window.
"""


def popen(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` under SPAWN_LOCK: every child boundary-audit starts goes through here."""
    with SPAWN_LOCK:
        return subprocess.Popen(list(argv), **kwargs)


def write_executable(path: Path, data: bytes, mode: int = 0o755) -> None:
    """Write a file that some child may execute (see SPAWN_LOCK)."""
    with SPAWN_LOCK:
        path.write_bytes(data)
        os.chmod(path, mode)


def wait(proc: subprocess.Popen[bytes], timeout: float | None) -> int:
    """`proc.wait(timeout)` that returns when the child exits, not at its next poll.

    `Popen.wait` with a timeout polls with sleeps that double up to 50 ms, so a child that
    ran 60 ms is seen after about 64 ms, one of 100 ms after 114 ms: that lateness is part of
    every run's wall time and of its `duration_s`. A pidfd (Linux 5.3) becomes readable
    exactly when the child exits; where there is none, this is `proc.wait(timeout)`. Raises
    `subprocess.TimeoutExpired` as `Popen.wait` does.
    """
    if timeout is None or proc.returncode is not None:
        return proc.wait(timeout=timeout)
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd here, or already reaped by another wait
        return proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not poller.poll(min(max(0, math.ceil((deadline - time.monotonic()) * 1e3)), _MAX_MS)):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()
