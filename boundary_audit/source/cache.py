"""Where cached mirrors live, and the lock and temp-dir discipline that keeps them whole.

Layout under the cache root (`cache_dir` argument, else `$BOUNDARY_AUDIT_CACHE_DIR`, else
`platformdirs.user_cache_dir("boundary-audit")`):

    git/<key>.git        a complete bare mirror (published by one atomic rename)
    git/<key>.lock       flock(2) target; held while cloning, fetching or resolving
    git/<key>.tmp-XXXX   a clone in progress, or the remains of a killed one

`<key>` is a readable slug of the canonical URL plus 16 hex digits of its sha256. A mirror
is only ever created by cloning into a temp dir and renaming it into place while holding
the lock, so a `<key>.git` directory is always a finished clone; a killed clone leaves a
temp dir that the next lock holder deletes. The lock is released by the kernel when its
holder dies (the descriptor is close-on-exec, so no git child inherits it), so a SIGKILLed
scan never blocks the next one. Every git child started while the lock is held carries
`BOUNDARY_AUDIT_LOCK=<lock path>` in its environment; a process that still carries it when the
lock is next taken was orphaned by a holder that died (kill -9 reaches the scan, not its git
children, which run in sessions of their own), and the new holder kills its process group
before it deletes the temp dirs. A holder that ends without a finished mirror (a failed,
timed-out or interrupted clone) removes the lock file too; taking the lock checks that the
file locked is still the one at the path, so removing it under the lock is safe.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from boundary_audit.errors import SourceError
from boundary_audit.source.spec import canonical_url

ENV_CACHE_DIR = "BOUNDARY_AUDIT_CACHE_DIR"
MARKER = "boundary-audit-mirror"
"""File inside a finished mirror holding its canonical URL (written before the rename)."""


def cache_root(cache_dir: Path | None = None) -> Path:
    """The cache root: the argument, else $BOUNDARY_AUDIT_CACHE_DIR, else the user cache dir."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(ENV_CACHE_DIR)
    return Path(env) if env else Path(platformdirs.user_cache_dir("boundary-audit"))


def mirror_key(url: str) -> str:
    """File-name-safe, collision-resistant key of a remote (see `canonical_url`)."""
    canon = canonical_url(url)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", canon.split("://", 1)[-1]).strip("_.")[:60]
    return f"{slug}-{hashlib.sha256(canon.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class MirrorSlot:
    """The paths belonging to one remote's mirror in the cache."""

    root: Path
    key: str
    canonical: str

    @classmethod
    def for_url(cls, url: str, cache_dir: Path | None = None) -> MirrorSlot:
        """The slot of `url` under the cache root (nothing is created yet)."""
        return cls(cache_root(cache_dir) / "git", mirror_key(url), canonical_url(url))

    @property
    def path(self) -> Path:
        """The published mirror (a bare repository)."""
        return self.root / f"{self.key}.git"

    @property
    def lock_path(self) -> Path:
        """The file that is flock(2)ed while this mirror is changed."""
        return self.root / f"{self.key}.lock"

    def is_complete(self) -> bool:
        """True when a finished mirror of this very URL is published."""
        try:
            return (self.path / MARKER).read_text(encoding="utf-8").strip() == self.canonical
        except OSError:
            return False

    def new_temp(self) -> Path:
        """A fresh, empty temp dir next to the mirror (same file system: rename is atomic)."""
        return Path(tempfile.mkdtemp(prefix=f"{self.key}.tmp-", dir=self.root))

    def clean_temps(self) -> list[Path]:
        """Delete leftovers of killed clones; call only while holding the lock."""
        gone = sorted(self.root.glob(f"{self.key}.tmp-*"))
        for tmp in gone:
            shutil.rmtree(tmp, ignore_errors=True)
        return gone

    def publish(self, tmp: Path) -> None:
        """Mark `tmp` finished and rename it into place (the lock is held, the slot is free)."""
        (tmp / MARKER).write_text(self.canonical + "\n", encoding="utf-8")
        os.rename(tmp, self.path)

    def discard(self) -> None:
        """Move an unusable mirror out of the way (renamed to a temp name, then deleted)."""
        if self.path.exists():
            trash = self.new_temp()
            os.rename(self.path, trash / "old")
            shutil.rmtree(trash, ignore_errors=True)


def ensure_root(root: Path) -> None:
    """Create the cache directory or raise a SourceError that says how to choose another."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SourceError(
            f"cannot create cache directory {root}: {exc.strerror}",
            hint=f"set {ENV_CACHE_DIR} to a writable directory",
        ) from exc


LOCK_ENV = "BOUNDARY_AUDIT_LOCK"
"""Set, to the lock's path, in the environment of every git child started under the lock."""


@contextlib.contextmanager
def locked(
    path: Path,
    timeout: float,
    on_wait: Callable[[str], None] | None = None,
    *,
    keep: Callable[[], bool] | None = None,
) -> Iterator[dict[str, str]]:
    """Hold an exclusive flock on `path`; wait at most `timeout` seconds for another holder.

    Yields the environment to give git children started under the lock (see `LOCK_ENV`).
    Processes a dead holder left behind are killed first. On exit the lock file is removed
    unless `keep()` says the slot is worth keeping.
    """
    deadline = time.monotonic() + timeout
    told = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise SourceError(
                            f"another boundary-audit process has held {path} "
                            f"for more than {timeout:g}s",
                            hint="wait for it to finish, or use a different cache directory",
                        ) from None
                    if on_wait is not None and not told:
                        on_wait(f"waiting for another process to finish with {path.name}")
                        told = True
                    time.sleep(0.05)
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed the file we locked: lock the one at the path now
    try:
        kill_orphans(path)
        yield {LOCK_ENV: str(path)}
    finally:
        try:
            if keep is not None and not keep():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def kill_orphans(path: Path) -> list[int]:
    """Kill the process groups of processes whose environment says they work under the lock
    `path` (only a dead holder's children can, while we hold it); return their pids."""
    needle = f"{LOCK_ENV}={path}".encode()
    me, killed = os.getpid(), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            if needle not in environ:
                continue
            group = os.getpgid(int(entry.name))
            if group == os.getpgrp():
                continue  # never our own group
            os.killpg(group, signal.SIGKILL)
            killed.append(int(entry.name))
        except (OSError, ValueError):
            continue  # gone already, or not ours to read
    return killed
