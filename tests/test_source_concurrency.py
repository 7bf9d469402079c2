"""Two scans cloning the same URL at once, and a scan SIGKILLed in the middle of a clone.

Each scan is a separate Python process calling `open_checkout`; the git daemon is reached
through a TcpProxy that can hold or slow the server's stream, so "at once" and "mid-way" are
arranged, not hoped for.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary_audit.errors import SourceError
from boundary_audit.source import open_checkout
from boundary_audit.source.cache import MirrorSlot
from tests.support.git_daemon import GitDaemon, TcpProxy
from tests.support.gitrepos import make_repo

SCAN = """
import pathlib, sys
from boundary_audit.source import open_checkout
pathlib.Path(sys.argv[3]).write_text("started")
print(open_checkout(sys.argv[1], cache_dir=pathlib.Path(sys.argv[2]), timeout=60).sha)
"""


def _noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)  # incompressible, so the pack is as large as the data


def _scan(url: str, cache: Path, marker: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SCAN, url, str(cache), str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_two_concurrent_scans_clone_once(
    git_daemon: GitDaemon, git_proxy: TcpProxy, tmp_path: Path
) -> None:
    sha = make_repo(
        git_daemon.base / "r.git", {"big.bin": _noise(1 << 20, 1), "a.py": b"x\n"}, bare=True
    )
    url, cache = git_proxy.url("r.git"), tmp_path / "cache"
    slot = MirrorSlot.for_url(url, cache)
    git_proxy.gate.clear()  # the first clone connects, then hangs until we open the gate
    scans = [_scan(url, cache, tmp_path / f"started{i}") for i in (1, 2)]
    _until(lambda: all((tmp_path / f"started{i}").exists() for i in (1, 2)), "both scans to start")
    _until(
        lambda: git_proxy.connections == 1 and any(slot.root.glob(f"{slot.key}.tmp-*")), "a clone"
    )
    time.sleep(0.3)  # the second scan has every chance to connect now; it must be waiting instead
    assert git_proxy.connections == 1
    git_proxy.gate.set()
    outs = [p.communicate(timeout=60) for p in scans]
    assert [
        (p.returncode, out.strip(), err) for p, (out, err) in zip(scans, outs, strict=True)
    ] == [(0, sha, ""), (0, sha, "")]
    assert git_proxy.connections == 1  # the second scan reused the first one's mirror
    assert sorted(p.name for p in slot.root.iterdir()) == [f"{slot.key}.git", f"{slot.key}.lock"]


def test_scan_killed_mid_clone_leaves_nothing_usable_and_next_scan_succeeds(
    git_daemon: GitDaemon, git_proxy: TcpProxy, tmp_path: Path
) -> None:
    files = {f"blob{i}.bin": _noise(1 << 20, i) for i in range(3)} | {"a.py": b"import os\n"}
    sha = make_repo(git_daemon.base / "r.git", files, bare=True)
    url, cache = git_proxy.url("r.git"), tmp_path / "cache"
    slot = MirrorSlot.for_url(url, cache)
    git_proxy.rate = 256 * 1024  # ~12 s for the whole pack: plenty of time to kill it mid-way
    scan = _scan(url, cache, tmp_path / "started")
    _until(lambda: git_proxy.bytes_down > 128 * 1024, "the pack to start flowing")
    victims = [scan.pid, *_descendants(scan.pid)]
    assert len(victims) >= 2  # the scan and its git clone
    for pid in victims:
        with contextlib.suppress(ProcessLookupError):  # a short-lived child may be gone already
            os.kill(pid, signal.SIGKILL)
    scan.communicate(timeout=10)
    git_proxy.drop_all()
    assert scan.returncode == -signal.SIGKILL
    assert not slot.path.exists()
    leftovers = list(slot.root.glob(f"{slot.key}.tmp-*"))
    assert len(leftovers) == 1 and any(leftovers[0].rglob("*"))  # a half-written clone
    with pytest.raises(SourceError, match="offline mode forbids cloning"):
        open_checkout(url, cache_dir=cache, offline=True)  # the half clone is never used
    git_proxy.rate = None
    co = open_checkout(url, cache_dir=cache, timeout=60)
    assert co.sha == sha
    assert [(f.path, f.skipped) for f in co.files()] == [
        ("a.py", None),
        ("blob0.bin", "binary"),
        ("blob1.bin", "binary"),
        ("blob2.bin", "binary"),
    ]
    assert {path: co.read(path) for path in files} == files
    assert not leftovers[0].exists()
    assert sorted(p.name for p in slot.root.iterdir()) == [f"{slot.key}.git", f"{slot.key}.lock"]
