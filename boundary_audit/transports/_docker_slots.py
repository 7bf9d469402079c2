"""Warm containers for the `docker` transport: started once, each run's workspace moved in.

Creating and starting a container is most of a docker run's cost (about a second on a loaded
machine). A slot is a started container whose /tmp is a bind mount of a host directory (and
its bin/ bound read-only at /usr/local/sbin and /tmp/bin). A run moves its workspace into that
directory by rename (same file system: atomic, nothing copied), execs, kills every process the
reply left in the container (`kill -9 -1` from inside; pid 1 survives), empties /dev/shm, and
moves the workspace back. Each run thus sees only its own fresh workspace at the same inner
paths, and nothing it started outlives `execute`; what persists between runs of a slot is the
image's read-only root and the container's private /dev.

Only for workspaces with fixed inner paths under a root of their own (the bwrap and docker
backends); elsewhere (tempdir, whose inner paths are the host paths) the transport makes a
container per run.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit.errors import TransportError
from boundary_audit.sandbox.interface import Limits, Workspace

RESET = "kill -9 -1 2>/dev/null; rm -rf /dev/shm/* /dev/shm/.[!.]* 2>/dev/null; exit 0"
"""Run inside a slot after each reply: every process but pid 1 and this shell dies."""


@dataclass
class Slot:
    """A started container and the host directory mounted at its /tmp."""

    container: Any
    dir: Path


def poolable(ws: Workspace) -> bool:
    """True when `ws` can be moved into a slot: fixed inner paths, one root, one file system."""
    inner = ws.inner_tmp.rstrip("/")
    layout = all(
        getattr(ws, f"inner_{n}") == f"{inner}/{n}" and getattr(ws, n) == ws.root / n
        for n in ("work", "home", "obs", "bin")
    )
    return layout and ws.tmp == ws.root and inner != str(ws.root).rstrip("/")


class SlotPool:
    """Idle slots per (inner paths, limits); slots are made on demand and reused."""

    def __init__(self, create: Any) -> None:
        self._create = create
        """`create(ws, slot_dir, limits) -> container`: a started container for a new slot."""
        self._idle: dict[tuple[str, str, Limits], queue.LifoQueue[Slot]] = {}
        self._all: list[Slot] = []
        self._lock = threading.Lock()

    def acquire(self, ws: Workspace, limits: Limits) -> Slot:
        """An idle slot for this layout and these limits, or a new one."""
        key = _key(ws, limits)
        with self._lock:
            idle = self._idle.setdefault(key, queue.LifoQueue())
        try:
            return idle.get_nowait()
        except queue.Empty:
            pass
        slot_dir = Path(tempfile.mkdtemp(prefix="ba-docker-slot-", dir=ws.root.parent))
        (slot_dir / "bin").mkdir()
        try:
            slot = Slot(self._create(ws, slot_dir, limits), slot_dir)
        except BaseException:
            shutil.rmtree(slot_dir, ignore_errors=True)
            raise
        with self._lock:
            self._all.append(slot)
        return slot

    def release(self, ws: Workspace, limits: Limits, slot: Slot) -> None:
        """Return a slot whose container was reset."""
        self._idle[_key(ws, limits)].put(slot)

    def discard(self, slot: Slot) -> None:
        """Forget a slot whose container is broken (the caller removes the container)."""
        with self._lock:
            if slot in self._all:
                self._all.remove(slot)
        shutil.rmtree(slot.dir, ignore_errors=True)

    def drain(self) -> list[Slot]:
        """Every slot made so far (for removal at close); the pool is empty afterwards."""
        with self._lock:
            slots, self._all, self._idle = self._all, [], {}
        for slot in slots:
            shutil.rmtree(slot.dir, ignore_errors=True)
        return slots


def move_in(ws: Workspace, slot: Slot) -> None:
    """Move the workspace's entries into the slot directory (bin's entries into its bin/)."""
    if os.stat(ws.root).st_dev != os.stat(slot.dir).st_dev:
        raise TransportError("docker: workspace and container slot are on different file systems")
    _move_all(ws.root, slot.dir, skip="bin")
    _move_all(ws.bin, slot.dir / "bin")


def move_out(ws: Workspace, slot: Slot) -> None:
    """Move everything back, including what the reply created at the top of /tmp."""
    _move_all(slot.dir, ws.root, skip="bin")
    _move_all(slot.dir / "bin", ws.bin)


def _move_all(src: Path, dst: Path, skip: str = "") -> None:
    for name in sorted(os.listdir(src)):
        if name != skip:
            os.rename(src / name, dst / name)


def _key(ws: Workspace, limits: Limits) -> tuple[str, str, Limits]:
    """What makes two slots interchangeable: the inner paths and the limits a container holds.

    The timeout is not a property of the container (each exec has its own), and it varies per
    run once host-side work is charged to it (`transports.interface.within`): left in the key,
    every run would start a container of its own and leave it idle until `close`.
    """
    return ws.inner_tmp, ws.inner_bin, dataclasses.replace(limits, timeout_s=0.0, grace_s=0.0)
