"""A pids cgroup per run: a process-count limit that binds root, and a list of every process.

RLIMIT_NPROC does not bind root, and a process that calls setsid() leaves its process group,
but neither can leave a cgroup unless it writes to another cgroup's `cgroup.procs`. So each run
gets `<pids root>/boundary-audit/<name>` with `pids.max` set from the limits; the launcher
joins it before exec, and teardown kills every member until it is empty, then removes it.

Both the v1 `pids` controller (mounted at /sys/fs/cgroup/pids) and a v2 hierarchy with the
pids controller enabled for children of the root are supported. Where neither is writable,
`PidsCgroup.create` returns None and the backends say so in their notices.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from boundary_audit.sandbox import _procfs

V1_ROOT = Path("/sys/fs/cgroup/pids")
V2_ROOT = Path("/sys/fs/cgroup")
PARENT = "boundary-audit"


@functools.cache
def cgroup_parent() -> Path | None:
    """The writable parent directory under which run cgroups are created, or None."""
    for root in (V1_ROOT, V2_ROOT):
        if not _has_pids(root):
            continue
        parent = root / PARENT
        try:
            parent.mkdir(exist_ok=True)
            if root == V2_ROOT:
                _enable_v2_pids(parent)
            probe = parent / f"probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError:
            continue
        return parent
    return None


def _has_pids(root: Path) -> bool:
    if root == V1_ROOT:
        return (root / "pids.max").exists() or (root / "cgroup.procs").exists()
    controllers = root / "cgroup.controllers"
    try:
        return "pids" in controllers.read_text().split()
    except OSError:
        return False


def _enable_v2_pids(parent: Path) -> None:
    for node in (V2_ROOT, parent):
        ctl = node / "cgroup.subtree_control"
        if "pids" not in ctl.read_text().split():
            ctl.write_text("+pids")


class PidsCgroup:
    """One run's cgroup: join it by writing a pid to `procs_file`; kill and remove it at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, name: str, max_procs: int) -> PidsCgroup | None:
        """A fresh cgroup limited to `max_procs` processes, or None where cgroups are unusable."""
        parent = cgroup_parent()
        if parent is None:
            return None
        path = parent / name
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_procs))
        except OSError:
            return None
        return cls(path)

    @property
    def procs_file(self) -> Path:
        """Writing a pid here moves that process (and its future children) into the cgroup."""
        return self.path / "cgroup.procs"

    def members(self) -> list[int]:
        """Pids currently in the cgroup (zombies included until they are reaped)."""
        try:
            text = self.procs_file.read_text()
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def kill_all(self, deadline: float) -> None:
        """SIGKILL members until none is left alive or `deadline` (monotonic) passes."""
        while True:
            alive = [p.pid for p in _procfs.live(self.members())]
            if not alive or time.monotonic() > deadline:
                return
            _procfs.sigkill(alive)
            time.sleep(0.002)

    def remove(self, deadline: float) -> bool:
        """Remove the cgroup once its last member has been reaped; False if it stayed busy."""
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                self.kill_all(deadline)
                time.sleep(0.005)
