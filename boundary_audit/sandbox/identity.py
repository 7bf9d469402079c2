"""Who a reply runs as on the host: an unprivileged uid of its own, never root.

Run as root, bubblewrap maps the sandbox's uid 0 to host uid 0: the kernel then treats the
reply as root for everything a namespace does not cover (sysctls, root-only files, a
core_pattern that makes the kernel run a command). So when boundary-audit runs as root, every
workspace gets a uid (and a gid of the same number) from a range no account uses, and every
process of that workspace's runs is started under it (`drop_prefix`): bwrap then runs
unprivileged and maps that uid to 0 *inside* its user namespace only. A reply that is not
root on the host cannot write /proc/sys, read /etc/shadow-, or signal anything but its own
processes; the workspace is given to it (`adopt`).

Each workspace has its own uid, so concurrent runs cannot reach one another's processes and a
leftover process is found by its uid alone. The range is `BASE_UID .. BASE_UID+COUNT`
(`BOUNDARY_AUDIT_SANDBOX_UIDS=START:COUNT` moves it); a uid is leased with a lock file under
/run/lock (`LEASE_DIR`, one for the machine), held by the process that uses it, so two
boundary-audit processes never share one; whatever still runs under a uid whose lease is
free (a killed boundary-audit's runs) is killed before the uid is used again
(`release_stale`).

Not root, the reply runs as the invoking user (the only identity there is), and the backend
says so in its notices.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit.errors import SandboxError, UsageError
from boundary_audit.sandbox import _procfs
from boundary_audit.supervisor import kill_uid

BASE_UID = 1_650_000_000
COUNT = 4096
ENV_RANGE = "BOUNDARY_AUDIT_SANDBOX_UIDS"


@dataclass(frozen=True)
class Identity:
    """The host uid and gid a workspace's processes run as."""

    uid: int
    gid: int

    @property
    def privileged(self) -> bool:
        """True when this is root: the identity that must never run a reply."""
        return self.uid == 0


def uid_range() -> range:
    """The uids workspaces get, from the environment or the default."""
    spec = os.environ.get(ENV_RANGE, "")
    if not spec:
        return range(BASE_UID, BASE_UID + COUNT)
    start, _, count = spec.partition(":")
    try:
        lo, n = int(start), int(count or "1")
    except ValueError:
        raise UsageError(f"{ENV_RANGE}={spec!r}: expected START:COUNT") from None
    if lo <= 0 or n <= 0 or lo + n > 2**32 - 2:
        raise UsageError(f"{ENV_RANGE}={spec!r}: the range must be positive and below 2^32-2")
    return range(lo, lo + n)


LEASE_DIR = Path("/run/lock/boundary-audit/uids")
"""Where uid leases live: one place for the whole machine (the uids are the machine's), not
the per-user state directory, which two processes may see differently (tests set
BOUNDARY_AUDIT_STATE_DIR): two leases of one uid would let one run's teardown kill the
other's processes."""


def lease_dir() -> Path:
    """The machine-wide lease directory (root only, mode 0700), created on first use."""
    for d in (LEASE_DIR.parent, LEASE_DIR):
        d.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o077:
            raise SandboxError(f"{d} must be root's directory, mode 0700 (it holds uid leases)")
    return LEASE_DIR


class _Pool:
    """Leases of uids: one lock file per uid, held open for the lease's lifetime."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, int] = {}
        self._tokens: dict[int, int] = {}
        self._swept = False
        self._next = 0

    def acquire(self) -> Identity:
        if not self._swept:  # once per process: what a killed boundary-audit left running
            self._swept = True
            release_stale()
        uids = uid_range()
        leases = lease_dir()
        with self._lock:
            for step in range(len(uids)):
                uid = uids[(self._next + step) % len(uids)]
                if uid in self._held:
                    continue
                fd = os.open(leases / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self._held[uid] = fd
                self._next = (self._next + step + 1) % len(uids)
                self._tokens[uid] = supervisor.ledger().register("uid", uid=uid)
                break
            else:
                raise SandboxError(
                    f"no free sandbox uid in {uids.start}..{uids.stop - 1} "
                    f"({len(self._held)} held here): raise the range with {ENV_RANGE}"
                )
        # NOTE: no sweep here: a free lease means no live owner, what a dead one left under
        # the uid is killed by its guardian or by `release_stale` at our first acquire, and
        # could not reach this workspace anyway (its own namespaces); `release` kills by uid.
        return Identity(uid, uid)

    def release(self, ident: Identity) -> None:
        kill_uid(ident.uid)
        with self._lock:
            fd = self._held.pop(ident.uid, None)
            token = self._tokens.pop(ident.uid, None)
        if fd is not None:
            os.close(fd)
        if token is not None:
            supervisor.ledger().release(token)

    def held(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._held)


_POOL = _Pool()


def acquire(*, own: bool = True) -> Identity:
    """An identity for a new workspace: a leased uid when root (and `own`), else the invoking
    user (the plain-directory backend passes `own=False`: it isolates nothing, not even that)."""
    if os.geteuid() != 0 or not own:
        return Identity(os.geteuid(), os.getegid())
    return _POOL.acquire()


def release(ident: Identity) -> None:
    """Give a workspace's identity back; whatever still runs under it is killed first."""
    if os.geteuid() == 0 and not ident.privileged and ident.uid in _POOL.held():
        _POOL.release(ident)


def access_gid() -> int:
    """The group that grants a sandbox uid one host resource (`Sandbox.grant`): the uid just
    below the range, so that it belongs to no account either."""
    return uid_range().start - 1


def drop_prefix(ident: Identity, groups: tuple[int, ...] = ()) -> list[str]:
    """The argv prefix that runs the rest as `ident`, with no supplementary group but `groups`.

    Empty when this process already is `ident` (not root). util-linux `setpriv` also clears
    the inheritable and ambient capabilities, so nothing of root's survives the exec.
    """
    if ident.uid < 0 or ident.uid == os.geteuid():
        return []
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    extra = f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"
    return [
        setpriv,
        f"--reuid={ident.uid}",
        f"--regid={ident.gid}",
        extra,
        "--inh-caps=-all",
        "--",
    ]


def release_stale() -> int:
    """Kill what runs under any uid of the range whose lease is free; how many processes.

    Run once per process before the first workspace (the supervisor does): the processes of a
    boundary-audit killed with SIGKILL keep their uid, and nobody holds its lease any more.
    """
    if os.geteuid() != 0:
        return 0
    uids = uid_range()
    leases = lease_dir()
    by_uid: dict[int, list[int]] = {}
    for pid in _procfs.all_pids():
        try:
            status = (_procfs.PROC / str(pid) / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                uid = int(line.split()[1])
                if uid in uids:
                    by_uid.setdefault(uid, []).append(pid)
                break
    killed = 0
    for uid in sorted(by_uid):
        if uid in _POOL.held():
            continue
        path = leases / str(uid)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # leased by a live boundary-audit
            killed += kill_uid(uid)
        finally:
            os.close(fd)
    return killed


def adopt(root: Path, ident: Identity) -> None:
    """Give every entry under `root` (and `root`) to `ident`, never following a link.

    Called on a fresh workspace once its fixture is written, before the first reply runs: the
    tree then holds only what the host wrote.
    """
    if ident.uid < 0 or ident.uid == os.geteuid():
        return
    try:
        os.lchown(root, ident.uid, ident.gid)
        for top, dirs, files in os.walk(root, followlinks=False):
            for name in dirs + files:
                os.lchown(os.path.join(top, name), ident.uid, ident.gid)
    except OSError as exc:
        raise SandboxError(f"sandbox: cannot give the workspace to uid {ident.uid}: {exc}") from exc


def give(path: Path, ident: Identity) -> None:
    """Give one host-written entry (a file a transport adds between runs) to `ident`."""
    if ident.uid < 0 or ident.uid == os.geteuid():
        return
    os.lchown(path, ident.uid, ident.gid)
