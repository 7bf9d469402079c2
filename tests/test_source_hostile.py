"""A failed clone leaves nothing behind, and a clone orphaned by a killed scan is killed.

A clone that fails (bad remote, timeout, an exception midway) leaves no lock, temp dir or git
child; a scan killed with kill -9 leaves its git clone running (a session of its own), and the
next scan that takes the lock kills it before it cleans the temp dirs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boundary_audit.source import mirror as mirror_module
from boundary_audit.source import open_checkout
from boundary_audit.source.cache import LOCK_ENV, MirrorSlot
from tests.support.git_daemon import GitDaemon, TcpProxy
from tests.support.gitrepos import git, make_repo

# -- failed and orphaned clones ---------------------------------------------------------------


def _lock_children(slot: MirrorSlot) -> list[int]:
    needle = f"{LOCK_ENV}={slot.lock_path}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_an_exception_midway_leaves_no_lock_temp_or_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    make_repo(src, {"f": b"x"})
    cache = tmp_path / "cache"
    url = src.as_uri()

    def boom(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(mirror_module, "_configure", boom)
    with pytest.raises(KeyboardInterrupt):
        open_checkout(url, cache_dir=cache)
    assert list((cache / "git").iterdir()) == []
    assert _lock_children(MirrorSlot.for_url(url, cache)) == []
    monkeypatch.undo()
    assert open_checkout(url, cache_dir=cache).sha == git(src, "rev-parse", "HEAD")


SCAN = """
import pathlib, sys
from boundary_audit.source import open_checkout
print(open_checkout(sys.argv[1], cache_dir=pathlib.Path(sys.argv[2]), timeout=60).sha)
"""


def test_a_clone_orphaned_by_a_killed_scan_is_killed_by_the_next(
    git_daemon: GitDaemon, git_proxy: TcpProxy, tmp_path: Path
) -> None:
    files = {f"blob{i}.bin": os.urandom(1 << 20) for i in range(3)}
    sha = make_repo(git_daemon.base / "r.git", files, bare=True)
    url, cache = git_proxy.url("r.git"), tmp_path / "cache"
    slot = MirrorSlot.for_url(url, cache)
    git_proxy.rate = 128 * 1024  # ~24 s for the pack: the clone is still running when we look
    scan = subprocess.Popen([sys.executable, "-c", SCAN, url, str(cache)])
    deadline = time.monotonic() + 30
    while git_proxy.bytes_down < 64 * 1024 or not _lock_children(slot):
        assert time.monotonic() < deadline, "the clone never started"
        time.sleep(0.05)
    os.kill(scan.pid, signal.SIGKILL)  # the scan only: its git clone runs in its own session
    scan.wait(timeout=10)
    git_proxy.freeze()  # the orphan stays connected and alive, waiting for more of the pack
    git_proxy.rate = None
    orphans = _lock_children(slot)
    assert orphans  # a clone still writing into the temp dir, holding no lock
    co = open_checkout(url, cache_dir=cache, timeout=60)
    assert co.sha == sha
    assert _lock_children(slot) == []
    for pid in orphans:
        assert not Path(f"/proc/{pid}").exists() or b"Z" in _state(pid)
    assert sorted(p.name for p in slot.root.iterdir()) == [f"{slot.key}.git", f"{slot.key}.lock"]


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
    except OSError:
        return b"Z"
