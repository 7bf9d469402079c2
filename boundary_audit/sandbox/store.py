"""The workspace store: where every workspace of this process lives on the host.

One directory per boundary-audit process, `<temp dir>/ba-store-<pid>-XXXX`. As root it is a
tmpfs of its own, mounted `nosuid,nodev` with mode 0711: the pages a reply writes into its
workspace are memory pages charged to the memory cgroup of the run that wrote them, so the
run's memory limit is also its disk quota (a reply that writes gigabytes is OOM-killed in its
own cgroup instead of filling the host's disk), and a setuid file or device node a reply
leaves is inert. The store as a whole is capped at half the RAM (tmpfs' default, made
explicit), so many concurrent runs cannot exhaust memory through it either.

Every workspace root inside is a directory owned by the workspace's identity with mode 0700,
so runs cannot enter one another's workspace even without a mount namespace; the Docker
transport's warm-container slots live here too, because it moves workspaces into them by
rename, which needs one file system.

A sandbox uid cannot reach host paths under a directory only root may enter (/root is
0700): bwrap, which runs as that uid, could not bind the Python installation or a harness's
venv from there. `host_view` gives such a path a read-only bind mount under the store's
`.host/`, which the uid can reach, and bwrap binds that view back at the original path.

The store is registered with the supervisor: unmounted and removed at exit, or by the
guardian after the process was killed. Not root (or where the mount fails), it is a plain
directory and the backends' notices say that there is no disk quota.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit._spawn import SPAWN_LOCK

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
OPTIONS = b"mode=0711,size=50%"


@dataclass(frozen=True)
class Store:
    """The store of this process: its path, and whether it is a tmpfs of its own."""

    path: Path
    tmpfs: bool
    pid: int


_STORE: Store | None = None
_LOCK = threading.Lock()


def _mount_tmpfs(path: Path) -> bool:
    if os.geteuid() != 0:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    flags = MS_NOSUID | MS_NODEV
    return bool(libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, OPTIONS) == 0)


def store() -> Store:
    """This process's store, created (and mounted, as root) on first use."""
    global _STORE
    with _LOCK:
        if _STORE is not None and _STORE.pid == os.getpid():
            return _STORE
        path = Path(tempfile.mkdtemp(prefix=f"ba-store-{os.getpid()}-"))
        os.chmod(path, 0o711)
        tmpfs = _mount_tmpfs(path)
        supervisor.ledger().register("mount" if tmpfs else "tree", path=str(path))
        _STORE = Store(path, tmpfs, os.getpid())
        return _STORE


_VIEWS: dict[str, str] = {}


def world_reachable(path: str) -> bool:
    """True if any uid can walk to `path`: every directory above it is searchable by others."""
    parts = os.path.realpath(path).split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i]) or "/"
        try:
            if not os.stat(d).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def host_view(path: str) -> str:
    """A path under which a sandbox uid can read `path`: `path` itself when it can walk
    there, else a read-only bind of it under the store's `.host/` (made once per process).
    Not root, the invoking user is the sandbox's uid and `path` is returned as it is."""
    real = os.path.realpath(path)
    if os.geteuid() != 0 or world_reachable(real):
        return real
    with _LOCK:
        view = _VIEWS.get(real)
        if view is not None:
            return view
    st = store()
    host = st.path / ".host"
    host.mkdir(mode=0o711, exist_ok=True)
    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:16] + "-" + os.path.basename(real)
    target = host / name
    if os.path.isdir(real):
        target.mkdir(exist_ok=True)
    else:
        target.touch(exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    src, dst = os.fsencode(real), os.fsencode(target)
    if (
        libc.mount(src, dst, None, MS_BIND, None) != 0
        or libc.mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) != 0
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"cannot bind {real} for the sandbox: {os.strerror(err)}")
    if not st.tmpfs:
        supervisor.ledger().register("mount", path=str(target))
    with _LOCK:
        _VIEWS[real] = str(target)
    return str(target)


def reaper_program() -> str:
    """An execute-only copy of bash (root's, mode 0111) for the sandbox's pid-1 reaper: a
    process whose program its uid cannot read is non-dumpable (see `_launch`)."""
    with _LOCK:
        made = _VIEWS.get("<reaper>")
        if made is not None:
            return made
    st = store()
    host = st.path / ".host"
    host.mkdir(mode=0o711, exist_ok=True)
    target = host / "ba-reaper"
    source = os.path.realpath(shutil.which("bash") or "/bin/bash")
    with SPAWN_LOCK, open(source, "rb") as src:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o700)
        try:
            shutil.copyfileobj(src, os.fdopen(os.dup(fd), "wb"))
            os.fchmod(fd, 0o111)
        finally:
            os.close(fd)
    with _LOCK:
        _VIEWS["<reaper>"] = str(target)
    return str(target)
