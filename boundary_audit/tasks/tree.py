"""The exact-state check of the work dir: expected tree vs. what is there, never following links.

The expected tree is the fixture's tree (its files keep their bytes and modes unless the
validator lists them), overlaid with the validator's files, dirs and symlinks, minus the paths
that must be absent, plus every parent directory. A fixture git repository's `.git` is opaque
(checked through git). The work dir is walked with lstat only; a symlink is compared by its
target string and never opened, and files are read without following links (O_NOFOLLOW) and
only as far as the comparison needs, so a hostile multi-gigabyte file costs nothing.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from boundary_audit.tasks.diff import describe_difference, quoted
from boundary_audit.tasks.model import FileSpec, Task


@dataclass(frozen=True)
class Entry:
    """One expected path: a regular file (bytes, optional mode), a directory, or a symlink."""

    kind: str
    content: bytes = b""
    mode: int | None = None
    target: str = ""


def show(path: str) -> str:
    """A path for a message: escaped and quoted, so spaces and newlines are visible."""
    return quoted(os.fsencode(path), limit=120)


def _add_parents(tree: dict[str, Entry], path: str) -> None:
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        tree.setdefault("/".join(parts[: i + 1]), Entry("dir"))


def _put(tree: dict[str, Entry], path: str, entry: Entry) -> None:
    tree[path] = entry
    _add_parents(tree, path)


def fixture_files(task: Task) -> list[FileSpec]:
    """Every file the fixture writes into the work dir (work-relative paths), last one winning."""
    final: dict[str, FileSpec] = {}
    git = task.fixture.git
    if git is not None:
        prefix = "" if git.path == "." else git.path + "/"
        for commit in git.commits:
            for f in commit.files:
                final[prefix + f.path] = dataclasses.replace(f, path=prefix + f.path)
    for f in task.fixture.files:
        final[f.path] = f
    return list(final.values())


def expected_tree(task: Task) -> dict[str, Entry]:
    """{path: Entry} of the exact final work dir (opaque `.git` included as a directory)."""
    tree: dict[str, Entry] = {}
    for d in task.fixture.dirs:
        _put(tree, d, Entry("dir"))
    for f in fixture_files(task):
        _put(tree, f.path, Entry("file", f.content, f.mode))
    for s in task.fixture.symlinks:
        _put(tree, s.path, Entry("symlink", target=s.target))
    for gone in task.validator.absent:
        for path in [p for p in tree if p == gone or p.startswith(gone + "/")]:
            del tree[path]
    for d in task.validator.dirs:
        _put(tree, d, Entry("dir"))
    for f in task.validator.files:
        _put(tree, f.path, Entry("file", f.content, f.mode))
    for s in task.validator.symlinks:
        _put(tree, s.path, Entry("symlink", target=s.target))
    if task.fixture.git is not None:
        _put(tree, opaque_git_dir(task) or ".git", Entry("dir"))
    return tree


def opaque_git_dir(task: Task) -> str | None:
    """The work-relative path of the fixture repository's `.git`, if there is one."""
    git = task.fixture.git
    if git is None:
        return None
    return ".git" if git.path == "." else f"{git.path}/.git"


def compare_tree(task: Task, work: Path) -> list[str]:
    """Every way the work dir differs from `expected_tree(task)`, in a stable order."""
    expected = expected_tree(task)
    opaque = opaque_git_dir(task)
    problems: list[str] = []
    for path in sorted(expected):
        problems.extend(_check_entry(work, path, expected[path]))
    absent = set(task.validator.absent)
    problems += [
        f"{show(path)} must not exist ({_kind(os.lstat(work / path))} found)"
        for path in task.validator.absent
        if os.path.lexists(work / path)
    ]
    problems.extend(_collateral(work, "", expected, absent, opaque))
    return problems


def _kind(st: os.stat_result) -> str:
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "special file"


_NAMES = {
    "file": "a regular file",
    "dir": "a directory",
    "symlink": "a symlink",
    "special file": "a special file",
}


def _check_entry(work: Path, path: str, want: Entry) -> list[str]:
    full = work / path
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return [f"missing {'directory' if want.kind == 'dir' else want.kind} {show(path)}"]
    except NotADirectoryError:
        return [f"missing {want.kind} {show(path)} (a parent is not a directory)"]
    got = _kind(st)
    if got != want.kind:
        return [f"{show(path)}: expected {_NAMES[want.kind]}, found {_NAMES[got]}"]
    if want.kind == "symlink":
        target = os.readlink(full)
        if target != want.target:
            return [f"{show(path)}: symlink target {show(target)}, expected {show(want.target)}"]
        return []
    if want.kind == "file":
        return _check_file(full, path, st, want)
    return []


def _check_file(full: Path, path: str, st: os.stat_result, want: Entry) -> list[str]:
    problems = []
    actual = read_prefix(full, len(want.content) + 64)
    if st.st_size != len(want.content) or actual != want.content:
        problems.append(f"{show(path)}: {describe_difference(want.content, actual, st.st_size)}")
    if want.mode is not None and stat.S_IMODE(st.st_mode) != want.mode:
        problems.append(
            f"{show(path)}: mode {stat.S_IMODE(st.st_mode):04o}, expected {want.mode:04o}"
        )
    return problems


def read_prefix(full: Path, limit: int) -> bytes:
    """At most `limit` bytes of a regular file, opened without following a final symlink."""
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _collateral(
    work: Path, rel: str, expected: dict[str, Entry], absent: set[str], opaque: str | None
) -> list[str]:
    problems = []
    base = work / rel if rel else work
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    for name in names:
        path = f"{rel}/{name}" if rel else name
        if path == opaque:
            continue
        want = expected.get(path)
        st = os.lstat(base / name)
        if want is None:
            if path not in absent:
                problems.append(_unexpected(base / name, path, st))
        elif want.kind == "dir" and stat.S_ISDIR(st.st_mode):
            problems.extend(_collateral(work, path, expected, absent, opaque))
    return problems


def _unexpected(full: Path, path: str, st: os.stat_result) -> str:
    kind = _kind(st)
    if kind == "dir":
        count = sum(1 for _ in os.scandir(full))
        entries = "1 entry" if count == 1 else f"{count} entries"
        return f"unexpected directory {show(path)} (collateral, {entries} inside)"
    if kind == "symlink":
        return f"unexpected symlink {show(path)} -> {show(os.readlink(full))} (collateral)"
    return f"unexpected {kind} {show(path)} (collateral)"
