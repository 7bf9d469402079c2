"""A cgroup per run: process count, memory (tmpfs included) and CPU bound the run as a whole.

Per-process rlimits do not bound a run: three 900 MB processes take 2.7 GB under a 1 GB
RLIMIT_AS, RLIMIT_NPROC does not bind root, and a process that calls setsid() leaves its
process group. A cgroup holds every process the run starts (none can leave it: the cgroup file
system is read-only inside the sandbox), and its controllers bind the sum:

- `pids`: at most `max_procs` processes (a fork bomb fails with EAGAIN);
- `memory`: at most `memory_bytes` of memory, swap off, *including the run's tmpfs pages* (the
  workspace store and bwrap's /dev are tmpfs, and a page of tmpfs is charged to the cgroup of
  the process that wrote it), so the limit is also the run's disk quota; going over it OOM-kills
  inside the run, which `oom_kills()` reports as the reply's failure;
- `cpu`: at most one CPU's worth of time per period (a quota, not a share).

Both hierarchies are supported, found in /proc/self/mountinfo: cgroup v2 (one directory, the
controllers enabled for children through `cgroup.subtree_control`) and v1 (one directory per
controller mount, as on hybrid systems). Run cgroups are `<mount>/boundary-audit/<pid>.<n>`,
named after the process that owns them, and registered with the supervisor, whose guardian
removes those a killed boundary-audit left behind; `reap_stale` finds them by name too (once
per process, before the first run). Where a controller is missing or not writable the run goes on
without it and `missing()` names it for the backend's notices.
"""

from __future__ import annotations

import functools
import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit.errors import SandboxError
from boundary_audit.sandbox import _procfs
from boundary_audit.sandbox.interface import Limits, Workspace

PARENT = "boundary-audit"
CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class Hierarchy:
    """Where each controller's run cgroups are created: one parent dir per mount."""

    version: int
    parents: dict[str, Path]
    """controller -> the `boundary-audit` directory under its mount (v2: the same for all)."""

    @property
    def dirs(self) -> tuple[Path, ...]:
        """The distinct parent directories (one for v2, one per controller mount for v1)."""
        return tuple(sorted(set(self.parents.values())))


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount of this process."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((fields[4], rest[0], set(rest[2].split(","))))
    return found


def _v2_parent(mount: Path) -> Path | None:
    try:
        available = set((mount / "cgroup.controllers").read_text().split())
    except OSError:
        return None
    if not available & set(CONTROLLERS):
        return None
    parent = mount / PARENT
    try:
        parent.mkdir(exist_ok=True)
        for node in (mount, parent):
            enabled = set((node / "cgroup.subtree_control").read_text().split())
            wanted = [c for c in CONTROLLERS if c in available and c not in enabled]
            for c in wanted:
                (node / "cgroup.subtree_control").write_text(f"+{c}")
    except OSError:
        return None
    return parent


@functools.cache
def hierarchy() -> Hierarchy | None:
    """The writable hierarchy run cgroups go in (v2 preferred), or None (no cgroup at all)."""
    mounts = _mounts()
    for point, fstype, _ in mounts:
        if fstype == "cgroup2":
            parent = _v2_parent(Path(point))
            if parent is not None:
                enabled = set((parent / "cgroup.subtree_control").read_text().split())
                return Hierarchy(2, {c: parent for c in CONTROLLERS if c in enabled})
    parents: dict[str, Path] = {}
    for point, fstype, options in mounts:
        if fstype != "cgroup":
            continue
        for controller in CONTROLLERS:
            if controller in options and controller not in parents:
                parent = Path(point) / PARENT
                try:
                    parent.mkdir(exist_ok=True)
                    probe = parent / f"probe-{os.getpid()}"
                    probe.mkdir(exist_ok=True)
                    probe.rmdir()
                except OSError:
                    continue
                parents[controller] = parent
    return Hierarchy(1, parents) if parents else None


def missing() -> tuple[str, ...]:
    """The controllers a run goes without here (all of them when there is no hierarchy)."""
    h = hierarchy()
    return tuple(c for c in CONTROLLERS if h is None or c not in h.parents)


class RunCgroup:
    """One run's cgroup(s): join by writing a pid to each of `procs_files`; kill, then remove."""

    _seq = itertools.count()

    def __init__(self, hier: Hierarchy, dirs: dict[str, Path]) -> None:
        self._tokens: list[int] = []
        """Supervisor registrations: a killed boundary-audit's guardian removes the cgroup."""
        self.hierarchy = hier
        self.dirs = dirs
        """controller -> this run's directory (v2: one directory for all)."""

    @classmethod
    def create(
        cls,
        max_procs: int,
        memory_bytes: int,
        cpus: float = 1.0,
        *,
        parent: RunCgroup | None = None,
    ) -> RunCgroup | None:
        """A fresh cgroup with the limits set, or None where no hierarchy is usable (the
        controllers `missing` names: their limits apply per process). SandboxError if the
        hierarchy is there but the group cannot be made or limited.

        With `parent` (a workspace's group, which holds the limits), a child of it without
        limits of its own: the parent's bind every run of the workspace together, so that
        runs a reply starts on its own behalf (the ssh transport's remote commands) cannot
        multiply its memory, disk or process budget.
        """
        hier = hierarchy() if parent is None else parent.hierarchy
        if hier is None:
            return None
        seq = next(cls._seq)
        if seq == 0:
            reap_stale()
        name = f"{os.getpid()}.{seq}"
        bases = hier.parents if parent is None else parent.dirs
        made: dict[str, Path] = {}
        try:
            for controller, base in bases.items():
                path = base / name
                if path not in made.values():
                    path.mkdir()
                made[controller] = path
            group = cls(hier, made)
            if parent is None:
                group._limit(max_procs, memory_bytes, cpus)
        except OSError as exc:
            # NOTE: never None here: the run would then join no group at all and go without
            # the memory (and so disk), process and CPU limits the hierarchy is there for
            for path in set(made.values()):
                _rmdir(path)
            where = exc.filename or name
            raise SandboxError(
                f"cannot create the run's cgroup {where}: {exc.strerror or exc}"
            ) from exc
        book = supervisor.ledger()
        group._tokens = [book.register("cgroup", path=str(p)) for p in sorted(set(made.values()))]
        return group

    def _limit(self, max_procs: int, memory_bytes: int, cpus: float) -> None:
        d = self.dirs
        quota = max(1000, int(CPU_PERIOD_US * cpus))
        if "pids" in d:
            (d["pids"] / "pids.max").write_text(str(max_procs))
        if self.hierarchy.version == 2:
            if "memory" in d:
                (d["memory"] / "memory.max").write_text(str(memory_bytes))
                _write_if_present(d["memory"] / "memory.swap.max", "0")
            if "cpu" in d:
                (d["cpu"] / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            return
        if "memory" in d:
            (d["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
            _write_if_present(d["memory"] / "memory.memsw.limit_in_bytes", str(memory_bytes))
        if "cpu" in d:
            (d["cpu"] / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (d["cpu"] / "cpu.cfs_quota_us").write_text(str(quota))

    @property
    def procs_files(self) -> tuple[Path, ...]:
        """Writing a pid to each of these moves that process (and its children) in."""
        return tuple(p / "cgroup.procs" for p in sorted(set(self.dirs.values())))

    @property
    def controllers(self) -> tuple[str, ...]:
        """The controllers that bind this run."""
        return tuple(c for c in CONTROLLERS if c in self.dirs)

    def members(self) -> list[int]:
        """Pids currently in the run or in a child of it (zombies included until reaped)."""
        found: set[int] = set()
        for top in sorted(set(self.dirs.values())):
            for here, _dirs, _files in os.walk(top):
                try:
                    found.update(int(x) for x in Path(here, "cgroup.procs").read_text().split())
                except OSError:
                    continue
        return sorted(found)

    def oom_kills(self) -> int:
        """A count that grows whenever the memory limit kills a process in this group or a
        child of it (v1 counts a kill in the victim's own cgroup: the children are summed)."""
        d = self.dirs.get("memory")
        if d is None:
            return 0
        name = "memory.events" if self.hierarchy.version == 2 else "memory.oom_control"
        total = 0
        for here, _dirs, _files in os.walk(d):
            try:
                for line in Path(here, name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        total += int(value)
            except (OSError, ValueError):
                continue
        return total

    def kill_all(self, deadline: float) -> None:
        """SIGKILL members until none is left alive or `deadline` (monotonic) passes."""
        kill_file = self.dirs.get("pids", next(iter(self.dirs.values()))) / "cgroup.kill"
        if self.hierarchy.version == 2:
            _write_if_present(kill_file, "1")
        while True:
            alive = [p.pid for p in _procfs.live(self.members())]
            if not alive or time.monotonic() > deadline:
                return
            _procfs.sigkill(alive)
            time.sleep(0.002)

    def remove(self, deadline: float) -> bool:
        """Remove the cgroup(s) once the last member is reaped; False if one stayed busy."""
        done = True
        nested = [
            Path(here)
            for top in sorted(set(self.dirs.values()))
            for here, _dirs, _files in os.walk(top, topdown=False)
        ]
        for path in nested:
            while not _rmdir(path):
                if time.monotonic() > deadline:
                    done = False
                    break
                self.kill_all(deadline)
                time.sleep(0.005)
        if done:
            for token in self._tokens:
                supervisor.ledger().release(token)
            self._tokens = []
        return done


def workspace_group(ws: Workspace, limits: Limits) -> RunCgroup | None:
    """The workspace's limits group, made by its first run (None where cgroups are unusable);
    every run of the workspace is a child of it, and `release_workspace` removes it."""
    group = ws.cgroup
    if group is None:
        group = RunCgroup.create(limits.max_procs, limits.memory_bytes, limits.cpus)
        ws.cgroup = group
    assert group is None or isinstance(group, RunCgroup)
    return group


def run_group(ws: Workspace, limits: Limits) -> tuple[RunCgroup | None, RunCgroup | None]:
    """(the workspace's group, a fresh child of it for one run), or (None, None)."""
    group = workspace_group(ws, limits)
    if group is None:
        return None, None
    return group, RunCgroup.create(0, 0, parent=group)


def release_workspace(ws: Workspace, grace_s: float) -> None:
    """Kill what is left in the workspace's group and remove it."""
    group, ws.cgroup = ws.cgroup, None
    if isinstance(group, RunCgroup):
        deadline = time.monotonic() + grace_s
        group.kill_all(deadline)
        group.remove(deadline)


def _write_if_present(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except FileNotFoundError:
        pass


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def reap_stale(alive: frozenset[int] = frozenset()) -> int:
    """Kill and remove run cgroups whose owner process is gone (a killed boundary-audit).

    A run cgroup is named `<owner pid>.<n>`; one whose owner is not running (and is not in
    `alive`, the owners known to be live) is stale. Returns how many were removed.
    """
    hier = hierarchy()
    if hier is None:
        return 0
    removed = 0
    for parent in hier.dirs:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            owner, dot, _ = name.partition(".")
            path = parent / name
            if not (dot and owner.isdigit() and path.is_dir()):
                continue
            pid = int(owner)
            if pid in alive or pid == os.getpid() or _procfs.read_proc(pid) is not None:
                continue
            stale = RunCgroup(hier, {c: path for c in CONTROLLERS if hier.parents.get(c) == parent})
            stale.kill_all(time.monotonic() + 2.0)
            removed += stale.remove(time.monotonic() + 2.0)
    return removed
