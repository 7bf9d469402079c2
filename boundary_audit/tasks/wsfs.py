"""Reading (and, for `tasks check`, editing) a workspace that a reply has had its hands on.

Every host-side reader of a reply's workspace goes through here, and through a directory
descriptor, never a path: `Workspace.work_fd` / `obs_fd` were opened when the workspace was
created, before any reply ran, so a reply that moves its work dir away and puts a symlink in
its place (`mv work w0 && ln -s /root work`) cannot point a reader at another directory; the
reader keeps seeing the original directory, wherever it now is.

From that descriptor a relative path is walked one component at a time, each directory opened
with O_NOFOLLOW | O_DIRECTORY, so a symlink anywhere along the way is an error (`ELOOP` /
`ENOTDIR`), never followed. A file is only opened after `lstat` says it is a regular file, with
O_NOFOLLOW | O_NONBLOCK | O_NOCTTY (a FIFO or a device swapped in at the last moment neither
blocks nor becomes our terminal), and `fstat` must then agree (same inode, still regular)
before one byte is read. Reads stop at a limit given by the caller: a multi-gigabyte file costs
what the comparison needs. Errors are `OSError`s (with `errno`) or `NotRegular`; callers turn
them into validator reasons.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
CHUNK = 1 << 16


class NotRegular(Exception):
    """A path that had to be a regular file is something else (`kind`: see `kind`)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def kind(st: os.stat_result) -> str:
    """`file`, `dir`, `symlink` or `special file` (FIFO, socket, device)."""
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "special file"


@contextmanager
def root(fd: int, path: Path) -> Iterator[int]:
    """A private descriptor of a workspace directory, closed on exit.

    `fd` is the workspace's own descriptor (`Workspace.work_fd`/`obs_fd`), duplicated so that
    the caller may close it; -1 (a workspace made by hand) opens `path` with O_NOFOLLOW.
    """
    own = os.dup(fd) if fd >= 0 else os.open(path, DIR_FLAGS)
    try:
        yield own
    finally:
        os.close(own)


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EACCES, "'..' is not followed", rel)
    return parts


def open_dir(dir_fd: int, rel: str) -> int:
    """A new descriptor of directory `rel` under `dir_fd`, no component followed if a link."""
    fd = os.dup(dir_fd)
    try:
        for part in _parts(rel):
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def opened_dir(dir_fd: int, rel: str) -> Iterator[int]:
    """`open_dir` as a context manager."""
    fd = open_dir(dir_fd, rel)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def parent(dir_fd: int, rel: str) -> Iterator[tuple[int, str]]:
    """(descriptor of the directory holding `rel`, last component of `rel`)."""
    parts = _parts(rel)
    if not parts:
        raise OSError(errno.EINVAL, "empty path", rel)
    with opened_dir(dir_fd, "/".join(parts[:-1])) as fd:
        yield fd, parts[-1]


def lstat(dir_fd: int, rel: str) -> os.stat_result:
    """`lstat` of `rel` under `dir_fd`; no component is followed if it is a link."""
    with parent(dir_fd, rel) as (fd, name):
        return os.stat(name, dir_fd=fd, follow_symlinks=False)


def lexists(dir_fd: int, rel: str) -> bool:
    """Whether `rel` exists under `dir_fd` (a dangling link counts) without following links."""
    try:
        lstat(dir_fd, rel)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    return True


def readlink(dir_fd: int, rel: str) -> str:
    """The target string of symlink `rel` (never followed)."""
    with parent(dir_fd, rel) as (fd, name):
        return os.readlink(name, dir_fd=fd)


def listdir(dir_fd: int, rel: str = "") -> list[str]:
    """The names in directory `rel` under `dir_fd`, unsorted."""
    with opened_dir(dir_fd, rel) as fd:
        return os.listdir(fd)


def open_file(dir_fd: int, name: str, flags: int = FILE_FLAGS) -> tuple[int, os.stat_result]:
    """Open regular file `name` (one component) in `dir_fd`: (descriptor, its fstat).

    Raises NotRegular (kind of what is there) unless both lstat before and fstat after the
    open say it is the same regular file.
    """
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegular(kind(before))
    fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(kind(st))
        if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise NotRegular("file replaced while it was opened")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from the current offset of `fd`."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_prefix(dir_fd: int, rel: str, limit: int) -> tuple[os.stat_result, bytes]:
    """(fstat, at most `limit` bytes) of regular file `rel` under `dir_fd`."""
    with parent(dir_fd, rel) as (pfd, name):
        fd, st = open_file(pfd, name)
    try:
        return st, read_fd(fd, limit)
    finally:
        os.close(fd)


def write_file(dir_fd: int, rel: str, data: bytes, *, create: bool = False) -> None:
    """Replace the bytes of regular file `rel` (or create it, `create=True`: it must not exist).

    For `tasks check`, which edits a passing state to show that the validator notices; never
    through a link, never into a FIFO or device.
    """
    with parent(dir_fd, rel) as (pfd, name):
        if create:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(name, flags, 0o644, dir_fd=pfd)
        else:
            fd, _ = open_file(pfd, name, os.O_WRONLY | os.O_CLOEXEC)
            os.ftruncate(fd, 0)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def unlink(dir_fd: int, rel: str) -> None:
    """Remove the non-directory `rel` under `dir_fd` (a link itself, never its target)."""
    with parent(dir_fd, rel) as (pfd, name):
        os.unlink(name, dir_fd=pfd)
