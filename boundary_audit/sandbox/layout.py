"""Where a workspace lives on the host and where the sandboxed process sees it.

Host side, every backend creates one fresh directory per workspace::

    <root>/            ba-run-XXXX under the host temp dir, mode 0700
      work/            the reply's cwd; the validator inspects it
      home/            $HOME
      obs/             recorders write here ($BA_OBS), outside work/ so never collateral
      bin/             helper programs, first on PATH; read-only inside isolating backends

Inside the isolating backends (bwrap, docker) the root is bound at **/tmp**, so the inner
paths are fixed and outputs are identical across runs and machines::

    /tmp = TMPDIR, /tmp/work (cwd), /tmp/home (HOME), /tmp/obs (BA_OBS)
    /usr/local/sbin = bin/ (read-only, first on PATH; also read-only at /tmp/bin)

The helpers live at /usr/local/sbin because that directory is on every PATH a shell rebuilds
for itself: Debian's /etc/profile for root (`bash -l`, tmux's login shells) and bash's
built-in default when PATH is unset (LangChain's empty environment). Bound under /tmp only,
they vanished behind those shells' PATH and a boundary looked damaging for a reason that has
nothing to do with quoting.

`/tmp` is therefore private to the run, and what a reply leaves there (mktemp files) stays
inspectable on the host until the workspace is removed. The plain-directory backend cannot
move paths, so its inner paths are the host paths.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from boundary_audit._spawn import SPAWN_LOCK
from boundary_audit.errors import SandboxError
from boundary_audit.sandbox import _cgroup, identity, store
from boundary_audit.sandbox.interface import Workspace

SUBDIRS = ("work", "home", "obs", "bin")
INNER_ROOT = "/tmp"
INNER_BIN = "/usr/local/sbin"


def new_workspace(
    *, fixed_inner: bool, parent: Path | None = None, own_identity: bool = True
) -> Workspace:
    """Create the host directories of a fresh workspace; inner paths fixed under /tmp or not.

    The root is a fresh directory in this process's workspace store (`store`, or `parent`),
    and the workspace gets an identity of its own (`identity.acquire`), given back by
    `remove_workspace`. Its files are given to that identity before the first run
    (`adopt_workspace`), once the fixture is written.
    """
    ident = identity.acquire(own=own_identity)
    try:
        root = Path(tempfile.mkdtemp(prefix="ba-run-", dir=parent or store.store().path))
        for name in SUBDIRS:
            (root / name).mkdir()
    except BaseException:
        identity.release(ident)
        raise
    inner = Path(INNER_ROOT) if fixed_inner else root
    return Workspace(
        run_id=uuid.uuid4().hex,
        root=root,
        work=root / "work",
        home=root / "home",
        obs=root / "obs",
        bin=root / "bin",
        tmp=root,
        inner_work=str(inner / "work"),
        inner_home=str(inner / "home"),
        inner_obs=str(inner / "obs"),
        inner_bin=INNER_BIN if fixed_inner else str(root / "bin"),
        inner_tmp=str(inner),
        work_fd=open_dir(root / "work"),
        obs_fd=open_dir(root / "obs"),
        uid=ident.uid,
        gid=ident.gid,
    )


def adopt_workspace(ws: Workspace) -> None:
    """Give the workspace (all but `bin/`, which stays the host's) to its identity, once.

    The backends call this at the start of every run; only the first call walks the tree,
    which then holds only what the host wrote (the fixture). Files a transport adds later go
    through `give`.
    """
    if ws.adopted:
        return
    ident = identity.Identity(ws.uid, ws.gid)
    identity.give(ws.root, ident)
    for name in SUBDIRS:
        if name != "bin":
            identity.adopt(ws.root / name, ident)
    ws.adopted = True


def work_cwd(ws: Workspace) -> Path:
    """The work dir as a child's cwd, through the descriptor taken before any reply ran: a
    reply that replaced `work` by a link cannot move a later run elsewhere on the host."""
    return Path(f"/proc/self/fd/{ws.work_fd}") if ws.work_fd >= 0 else ws.work


CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
WRITE_ATTEMPTS = 5


def write_new(ws: Workspace, rel: str, data: bytes, mode: int = 0o644) -> Path:
    """Write a file the host adds to a workspace after replies ran, and give it to the
    workspace's uid; `rel` is relative to the workspace root (the inner /tmp).

    The workspace is the reply's: anything already at `rel` (a link to /etc/shadow, a FIFO)
    is removed, never followed or opened, and the file is created fresh with O_EXCL |
    O_NOFOLLOW through descriptors of its directories, each opened without following a link.
    A reply that keeps planting something there makes this a SandboxError, not a host write.
    """
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise ValueError(f"not a workspace-relative file name: {rel!r}")
    dir_fd = os.open(ws.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=dir_fd)  # fmt: skip
            os.close(dir_fd)
            dir_fd = nxt
        name = parts[-1]
        for _ in range(WRITE_ATTEMPTS):
            try:
                fd = os.open(name, CREATE, mode, dir_fd=dir_fd)
            except FileExistsError:
                try:
                    os.unlink(name, dir_fd=dir_fd)
                except IsADirectoryError:
                    _rmtree(Path(f"/proc/self/fd/{dir_fd}") / name)
                except FileNotFoundError:
                    pass
                continue
            try:
                with SPAWN_LOCK:  # a file a child may run (see _spawn)
                    os.write(fd, data)
                os.fchmod(fd, mode)
                if ws.uid >= 0 and ws.uid != os.geteuid():
                    os.fchown(fd, ws.uid, ws.gid)
            finally:
                os.close(fd)
            return ws.root.joinpath(*parts)
    finally:
        os.close(dir_fd)
    raise SandboxError(f"sandbox: cannot write {rel} into the workspace: something keeps taking it")


def give(ws: Workspace, path: Path) -> None:
    """Give one host-written entry of workspace `ws` to the workspace's identity."""
    identity.give(path, identity.Identity(ws.uid, ws.gid))


def open_dir(path: Path) -> int:
    """A descriptor of directory `path` that never follows a link (O_NOFOLLOW, O_DIRECTORY)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def bin_targets(ws: Workspace) -> tuple[str, ...]:
    """Inner paths where an isolating backend binds `ws.bin` read-only.

    With fixed inner paths, bin/ also appears under the writable /tmp bind; it is bound
    read-only there too, or a reply could rewrite the helpers it runs through /usr/local/sbin.
    """
    if ws.inner_bin == INNER_BIN:
        return (INNER_BIN, f"{INNER_ROOT}/bin")
    return (ws.inner_bin,)


def remove_workspace(ws: Workspace) -> None:
    """Close the workspace's descriptors and delete its host directories, whatever a reply did
    to their modes."""
    for fd in (ws.work_fd, ws.obs_fd):
        if fd >= 0:
            os.close(fd)
    ws.work_fd = ws.obs_fd = -1
    try:
        _cgroup.release_workspace(ws, grace_s=2.0)
        identity.release(identity.Identity(ws.uid, ws.gid))
    finally:
        _rmtree(ws.root)


def _rmtree(root: Path) -> None:
    try:
        shutil.rmtree(root)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts)):
        try:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o700)
        except OSError:
            pass
    shutil.rmtree(root, ignore_errors=True)
