"""The supervisor: everything a boundary-audit process starts that could outlive it is owned here.

A run leaves things behind when its owner dies without its `finally` blocks: daemons (sshd,
dockerd), containers on an engine, the workspace store's mount, cgroups, a sandbox uid's
processes, git children of a clone. So each of them is *registered* in the process's ledger,
`<state dir>/owners/<pid>.<start time>.jsonl`, one JSON line per resource and one per release:

- on normal exit (atexit) and on SIGTERM/SIGHUP (turned into `Terminated`, so that every
  `finally` runs first) the process reaps what is still registered and deletes its ledger;
- after `kill -9` a *guardian* does it: a small process started with the first *guarded*
  registration, in its own session (Ctrl-C does not reach it), that blocks on a pipe from its
  owner and reaps the owner's ledger when that pipe closes, i.e. when the owner is gone however
  it died (and any other dead owner's, `reap_stale`). A registration with `guarded=False` is
  a resource that ends by itself once its owner is gone (a local git call: bounded work, no
  network, stdin from us); it is only written down, so that if it did not end (a hostile
  repository's FIFO where git reads a loose object) the next reap finds it. A run that
  registers nothing else, such as a static scan of a local repository, starts no guardian;
- if the guardian died too (`kill -9` of both), the next boundary-audit that registers
  anything reaps every ledger whose owner is no longer running (`reap_stale`).

What a resource is and how it is reaped is data (`kind` + fields), handled by `_REAPERS`:
`process` (a daemon: SIGTERM then SIGKILL of its process group, only if the pid still has the
recorded start time), `mount` (lazy unmount, then the directory), `tree` (a directory),
`cgroup` (its members killed, the directory removed), `uid` (every process of a sandbox uid
killed), `container` (removed through the engine's socket), `lease` (a shared daemon's lease
file removed; the daemon stopped when no live lease is left), `spawn` (a child about to be
started, before its pid exists: every process whose environment carries the record's
`BOUNDARY_AUDIT_SPAWN` marker is killed with its process group; see `spawned`). Reaping never
raises: what cannot be reaped is left for the next reap and said on stderr of the guardian's
log.

A shared daemon (one private Docker engine for every boundary-audit process of a user) is
reference-counted through lease files (`Shared`): each user holds a lease; the one that drops
the last lease of a daemon that boundary-audit started stops it.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

TYPE_CHECKING = False  # NOTE: not typing's: the guardian does not import typing
if TYPE_CHECKING:
    import subprocess
    from typing import Any

# NOTE: json, shutil, ctypes, socket and subprocess are imported where they are used: the
# guardian is a process of its own that starts with every run and mostly finds nothing to
# reap, so it loads only what waiting and checking for stale ledgers need.

ENV_STATE = "BOUNDARY_AUDIT_STATE_DIR"
ENV_SPAWN = "BOUNDARY_AUDIT_SPAWN"
"""Set in the environment of every child started through `spawned`: the marker that finds it
(and what it started, which inherits it) when its owner died before writing down its pid."""
MNT_DETACH = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so every `finally` cleans up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_STATE: Path | None = None


def state_dir() -> Path:
    """The per-user directory of ledgers and leases (created with mode 0700).

    `BOUNDARY_AUDIT_STATE_DIR`, else `<user cache>/boundary-audit/state`; resolved once per
    process, so that a later change of $HOME cannot move a ledger the guardian watches."""
    global _STATE
    if _STATE is None:
        override = os.environ.get(ENV_STATE)
        if override:
            _STATE = Path(override).absolute()
        else:
            import platformdirs

            _STATE = platformdirs.user_cache_path("boundary-audit") / "state"
    _STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _STATE


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    # NOTE: the command name may hold spaces and ')': the fields start after the last ')'
    return raw.rpartition(")")[2].split()


def start_time(pid: int) -> int | None:
    """The kernel's start time of `pid` (clock ticks since boot), or None if it is gone."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def alive(pid: int, started: int | None) -> bool:
    """True if `pid` runs and (when `started` is given) is the same process as recorded; a
    zombie (exited, its parent has not reaped it yet) does not run."""
    fields = _stat_fields(pid)
    if not fields or fields[0] in ("Z", "X"):
        return False
    return started is None or (len(fields) > 19 and fields[19] == str(started))


# -- reaping one resource --------------------------------------------------------------------


def _reap_process(rec: dict[str, Any]) -> None:
    pid, started = int(rec["pid"]), rec.get("start")
    now = start_time(pid)
    if now is None or (started is not None and now != started):
        return  # gone, or its pid reused (a zombie leader's group is still killed below)
    target = -pid if rec.get("group", True) else pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(target, signal.SIGTERM)
    deadline = time.monotonic() + float(rec.get("grace", 5.0))
    while alive(pid, started) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(target, signal.SIGKILL)


def _rmtree(path: Path) -> None:
    if not path.exists() and not path.is_symlink():
        return
    for top, dirs, _files in os.walk(path, followlinks=False):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(top, d), 0o700, follow_symlinks=False)
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def unmount(path: Path) -> bool:
    """Lazily unmount `path` (umount2 MNT_DETACH); True if it is no longer a mount point."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.umount2(os.fsencode(path), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        return err in (errno.EINVAL, errno.ENOENT)
    return True


def _mount_points() -> list[str]:
    """This namespace's mount points (from /proc/self/mountinfo, `\\040`-style escapes undone)."""
    import re

    try:
        lines = Path("/proc/self/mountinfo").read_bytes().splitlines()
    except OSError:
        return []
    octal = re.compile(rb"\\([0-7]{3})")
    fields = (line.split(b" ") for line in lines)
    return [
        os.fsdecode(octal.sub(lambda m: bytes([int(m[1], 8)]), f[4])) for f in fields if len(f) > 4
    ]


def mounts_below(root: str) -> list[str]:
    """This namespace's mount points at or below `root`."""
    top = root.rstrip("/")
    return [p for p in _mount_points() if p == top or p.startswith(top + "/")]


def unmount_under(root: str) -> int:
    """Lazily unmount every mount point at or below `root`, deepest first; how many."""
    count = 0
    for point in sorted(set(mounts_below(root)), key=lambda p: p.count("/"), reverse=True):
        count += unmount(Path(point))
    return count


def _reap_mount(rec: dict[str, Any]) -> None:
    path = Path(rec["path"])
    unmount(path)
    _rmtree(path)


def _reap_tree(rec: dict[str, Any]) -> None:
    _rmtree(Path(rec["path"]))


def _reap_cgroup(rec: dict[str, Any]) -> None:
    path = Path(rec["path"])
    deadline = time.monotonic() + 5.0
    while True:
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


def uid_pids(uid: int) -> list[int]:
    """Pids whose real uid is `uid` (from /proc/PID/status), zombies included."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path("/proc", name, "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    found.append(int(name))
                break
    return found


def kill_uid(uid: int, rounds: int = 50) -> int:
    """SIGKILL every process running as `uid` until none is left; how many were found.
    Never for root or this process's own uid."""
    if uid == 0 or uid == os.geteuid():
        return 0
    seen: set[int] = set()
    for _ in range(rounds):
        running = [p for p in uid_pids(uid) if alive(p, None)]
        if not running:
            break
        seen.update(running)
        for pid in running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    return len(seen)


def _reap_uid(rec: dict[str, Any]) -> None:
    kill_uid(int(rec["uid"]))


def engine_request(sock: str, method: str, path: str, timeout: float = 10.0) -> int:
    """One HTTP/1.0 request to a Docker engine's unix socket; the status code (0 on failure)."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(sock)
            s.sendall(f"{method} {path} HTTP/1.0\r\nHost: docker\r\n\r\n".encode())
            head = s.recv(64).decode("latin-1", "replace")
    except OSError:
        return 0
    parts = head.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def _reap_container(rec: dict[str, Any]) -> None:
    engine_request(rec["socket"], "DELETE", f"/containers/{rec['id']}?force=1&v=1")


def marked_pids(marker: str) -> list[int]:
    """Pids whose environment holds `BOUNDARY_AUDIT_SPAWN=<marker>` (only this user's processes
    can be read; another user's are skipped)."""
    needle = f"{ENV_SPAWN}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path("/proc", name, "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(name))
    return found


def _reap_spawn(rec: dict[str, Any]) -> None:
    marker = str(rec["marker"])
    # NOTE: twice: a child forked just before its owner died shows the owner's environment
    # until its exec, which follows within microseconds.
    for attempt in range(2):
        for pid in marked_pids(marker):
            for target in (-pid, pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(target, signal.SIGKILL)
        if attempt == 0:
            time.sleep(0.1)


def _reap_lease(rec: dict[str, Any]) -> None:
    Shared(Path(rec["dir"])).drop(Path(rec["lease"]))


_REAPERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "process": _reap_process,
    "mount": _reap_mount,
    "tree": _reap_tree,
    "cgroup": _reap_cgroup,
    "uid": _reap_uid,
    "container": _reap_container,
    "lease": _reap_lease,
    "spawn": _reap_spawn,
}
"""How each kind of resource is reaped; the order of REAP_ORDER is the order of teardown."""

REAP_ORDER = ("container", "process", "spawn", "uid", "cgroup", "lease", "mount", "tree")
"""Containers and processes first (they hold mounts and workspaces), directories last."""


def reap_records(records: list[dict[str, Any]]) -> None:
    """Reap `records` (each `{"kind": ..., ...}`) in REAP_ORDER; never raises."""
    rank = {k: i for i, k in enumerate(REAP_ORDER)}
    for rec in sorted(records, key=lambda r: rank.get(str(r.get("kind")), len(rank))):
        reaper = _REAPERS.get(str(rec.get("kind")))
        if reaper is None:
            continue
        try:
            reaper(rec)
        except Exception as exc:  # noqa: BLE001 - a reaper must never stop the others
            sys.stderr.write(f"boundary-audit supervisor: could not reap {rec}: {exc}\n")


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The resources of a ledger file that were registered and not released."""
    import json

    live: dict[int, dict[str, Any]] = {}
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut by the owner's death
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), int):
            continue
        if rec.get("kind") == "released":
            live.pop(rec["id"], None)
        else:
            live[rec["id"]] = rec
    return list(live.values())


def reap_ledger(path: Path) -> None:
    """Reap everything a ledger holds, then delete the ledger."""
    reap_records(read_ledger(path))
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _owner_of(path: Path) -> tuple[int, int | None] | None:
    """(pid, start time) of a ledger `<pid>.<start>.jsonl` or a lease `<pid>.<start>.<n>`."""
    parts = path.name.removesuffix(".jsonl").split(".")
    if not parts[0].isdigit():
        return None
    started = parts[1] if len(parts) > 1 else ""
    return int(parts[0]), int(started) if started.isdigit() else None


def reap_stale() -> int:
    """Reap the ledgers of boundary-audit processes that are gone; how many ledgers."""
    owners = state_dir() / "owners"
    if not owners.is_dir():
        return 0
    count = 0
    for path in sorted(owners.glob("*.jsonl")):
        owner = _owner_of(path)
        if owner is None or owner[0] == os.getpid() or alive(*owner):
            continue
        reap_ledger(path)
        count += 1
    return count


# -- the ledger of this process --------------------------------------------------------------


class Ledger:
    """This process's registrations; the guardian reaps them if the process dies."""

    def __init__(self) -> None:
        me = os.getpid()
        owners = state_dir() / "owners"
        owners.mkdir(mode=0o700, exist_ok=True)
        self.path = owners / f"{me}.{start_time(me)}.jsonl"
        self._lock = threading.Lock()
        self._next = 0
        self._live: dict[int, dict[str, Any]] = {}
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self._guard: subprocess.Popen[bytes] | None = None
        self._guard_pipe = -1
        self._guard_tried = False

    def _start_guardian(self) -> None:
        import subprocess

        from boundary_audit._spawn import popen

        read_end, write_end = os.pipe()
        os.set_inheritable(read_end, True)
        try:
            log = os.open(self.path.with_suffix(".log"), os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                # NOTE: cwd "/" so that `-m` cannot pick up a module from wherever we run.
                self._guard = popen(
                    [sys.executable, "-s", "-m", "boundary_audit.supervisor", str(self.path)],
                    stdin=read_end,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    cwd="/",
                    start_new_session=True,
                    close_fds=True,
                    env={k: v for k, v in os.environ.items() if k in ("PATH", ENV_STATE)},
                )
            finally:
                os.close(log)
        except OSError:
            os.close(write_end)
            self._guard = None
        else:
            fcntl.fcntl(write_end, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            self._guard_pipe = write_end
        finally:
            os.close(read_end)

    def register(self, kind: str, *, guarded: bool = True, **fields: Any) -> int:
        """Record a resource; returns the token that `release` takes. `guarded` (the default)
        starts the guardian if it is not running yet; False only for a resource that ends by
        itself when its owner dies (see the module's docstring)."""
        if kind not in _REAPERS:
            raise ValueError(f"unknown resource kind {kind!r}")
        import json

        with self._lock:
            token = self._next
            self._next += 1
            rec = {"id": token, "kind": kind, **fields}
            self._live[token] = rec
            os.write(self._fd, (json.dumps(rec, sort_keys=True) + "\n").encode())
            if guarded and not self._guard_tried:
                self._guard_tried = True
                self._start_guardian()
        return token

    def release(self, token: int) -> None:
        """Forget a resource its owner has cleaned up itself."""
        import json

        with self._lock:
            if self._live.pop(token, None) is None:
                return
            os.write(self._fd, (json.dumps({"id": token, "kind": "released"}) + "\n").encode())

    def reap_all(self) -> None:
        """Reap what is still registered (normal exit), then stop the guardian."""
        with self._lock:
            records, self._live = list(self._live.values()), {}
        reap_records(records)
        with contextlib.suppress(OSError):
            os.close(self._fd)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.path.with_suffix(".log").unlink()
        if self._guard_pipe >= 0:
            os.close(self._guard_pipe)
            self._guard_pipe = -1
        if self._guard is not None:
            import subprocess

            with contextlib.suppress(subprocess.TimeoutExpired):
                self._guard.wait(timeout=5)

    @property
    def guardian_pid(self) -> int | None:
        """The guardian's pid (for tests), or None before the first guarded registration or
        where it could not be started."""
        return self._guard.pid if self._guard is not None else None


_LEDGER: Ledger | None = None
_LEDGER_LOCK = threading.Lock()


def ledger() -> Ledger:
    """This process's ledger; the first call reaps stale ledgers (the first guarded
    registration starts the guardian)."""
    global _LEDGER
    with _LEDGER_LOCK:
        if _LEDGER is None or _LEDGER.path.name.split(".")[0] != str(os.getpid()):
            reap_stale()
            _LEDGER = Ledger()
            atexit.register(_at_exit)
        return _LEDGER


def _at_exit() -> None:
    global _LEDGER
    with _LEDGER_LOCK:
        mine, _LEDGER = _LEDGER, None
    if mine is not None and mine.path.name.split(".")[0] == str(os.getpid()):
        mine.reap_all()


def spawned(
    start: Callable[[dict[str, str]], subprocess.Popen[bytes]],
    env: dict[str, str] | None,
    *,
    guarded: bool = True,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start a child with `start(environment)` so that no moment leaves it unregistered.

    Writing the pid down after the start leaves a window: an owner SIGKILLed between the two
    leaves a child nobody reaps (a git blocked on a hostile repository's FIFO waits forever).
    So a `spawn` record goes first, with a fresh marker that `start` must put in the child's
    environment (`env`, or ours when None); then the child starts, its `process` record is
    written, and the `spawn` record is released. Returns the child and its `process` token."""
    book = ledger()
    marker = os.urandom(8).hex()
    pending = book.register("spawn", guarded=guarded, marker=marker)
    child_env = dict(os.environ if env is None else env)
    child_env[ENV_SPAWN] = marker
    try:
        proc = start(child_env)
    except BaseException:
        book.release(pending)  # NOTE: no child was started
        raise
    token = book.register("process", guarded=guarded, pid=proc.pid, start=start_time(proc.pid))
    book.release(pending)  # NOTE: kept (and reaped) if the line above raised
    return proc, token


@contextlib.contextmanager
def owned(kind: str, **fields: Any) -> Iterator[int]:
    """Register a resource for the duration of a block (released when the block ends)."""
    book = ledger()
    token = book.register(kind, **fields)
    try:
        yield token
    finally:
        book.release(token)


_SIGNALLED: list[int] = []


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP raise `Terminated`, SIGINT `KeyboardInterrupt`, in the main thread
    (call from the main thread); `signalled()` tells which arrived first."""

    _SIGNALLED.clear()

    def _raise(signum: int, _frame: object) -> None:
        _SIGNALLED.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise)


def signalled() -> int | None:
    """The first signal `install_signal_handlers` turned into an exception, or None."""
    return _SIGNALLED[0] if _SIGNALLED else None


# -- shared daemons: reference counting by lease files ---------------------------------------


class Shared:
    """A daemon used by several processes: a lease per user, stopped with the last lease.

    `dir` holds `leases/<pid>.<start>` (one per user), `owner.json` (the daemon's pid and start
    time, present only when boundary-audit started it) and `lock` (held while leases change).
    """

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        (directory / "leases").mkdir(mode=0o700, parents=True, exist_ok=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the lease lock for a block."""
        with open(self.dir / "lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    _seq = itertools.count()

    def take(self) -> Path:
        """Add a lease of this process, `<pid>.<start>.<n>` (call under `locked`)."""
        me = os.getpid()
        path = self.dir / "leases" / f"{me}.{start_time(me)}.{next(Shared._seq)}"
        path.touch(mode=0o600)
        return path

    def live_leases(self) -> list[Path]:
        """Leases whose holder still runs; the others are deleted."""
        found = []
        for path in sorted((self.dir / "leases").iterdir()):
            owner = _owner_of(path)
            if owner is not None and alive(*owner):
                found.append(path)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return found

    def set_owner(
        self, pid: int, mounts_under: list[str] | None = None, scratch: list[str] | None = None
    ) -> None:
        """Record that boundary-audit started the daemon `pid` (call under `locked`); what it
        mounts under `mounts_under` is unmounted once it is stopped (a daemon killed after
        its grace cannot unmount for itself), and the directories of `scratch` (made for it
        outside `dir`) are removed then."""
        import json

        record = {
            "pid": pid,
            "start": start_time(pid),
            "mounts_under": mounts_under or [],
            "scratch": scratch or [],
        }
        (self.dir / "owner.json").write_text(json.dumps(record))

    def owner(self) -> dict[str, Any] | None:
        """The recorded daemon, or None if boundary-audit did not start the running one."""
        import json

        try:
            data = json.loads((self.dir / "owner.json").read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None

    def drop(self, lease: Path) -> bool:
        """Remove `lease`; stop the daemon if no live lease is left. True if it was stopped."""
        with self.locked():
            with contextlib.suppress(FileNotFoundError):
                lease.unlink()
            if self.live_leases():
                return False
            return self.stop_owner()

    def stop_leftover(self) -> bool:
        """Stop a daemon boundary-audit started that no live lease holds (call under
        `locked`, before starting another): one whose starter was killed before it
        answered. True if there was one."""
        if self.live_leases():
            return False
        return self.stop_owner()

    def stop_owner(self) -> bool:
        """Stop the recorded daemon, unmount what it left under its `mounts_under`, remove
        its `scratch` directories (one that still has a mount point below it is left: its
        removal would reach into the mounted tree) and its record (call under `locked`).
        True if there was one."""
        owner = self.owner()
        if owner is None:
            return False
        _reap_process({"pid": owner["pid"], "start": owner.get("start"), "grace": 15.0})
        for root in owner.get("mounts_under") or []:
            unmount_under(str(root))
        for d in owner.get("scratch") or []:
            if str(d).rstrip("/") and not mounts_below(str(d)):
                _rmtree(Path(d))
        with contextlib.suppress(FileNotFoundError):
            (self.dir / "owner.json").unlink()
        return True


def _guard(ledger_path: Path) -> int:
    """The guardian's body: wait until the owner's end of the pipe closes, then reap."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    if ledger_path.exists():
        reap_ledger(ledger_path)
    reap_stale()
    log = ledger_path.with_suffix(".log")
    with contextlib.suppress(OSError):
        if log.stat().st_size == 0:
            log.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(_guard(Path(sys.argv[1])))
