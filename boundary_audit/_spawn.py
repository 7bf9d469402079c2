"""Starting a child: the one lock every `Popen` and every write of a runnable file holds.

The lowest module of the package (it imports nothing of it), so that the supervisor and the
process helpers above it share one lock.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
