"""The exact-state check of the work dir: expected tree vs. what is there, never following links.

The expected tree is the fixture's tree (its files keep their bytes and modes unless the
validator lists them), overlaid with the validator's files, dirs and symlinks, minus the paths
that must be absent, plus every parent directory. A fixture git repository's `.git` is opaque
(checked by `gitread`). The work dir is read through its directory descriptor
(`Workspace.work_fd`, taken before the reply ran), so a reply that moves it away and leaves a
symlink in its place is still judged on the original directory, and nothing outside it is
ever listed. Every path is walked from that descriptor one component at a time without
following a link (`wsfs`); a symlink is compared by its target string and never opened, a
parent that is a link counts as "not a directory", and files are read only when they are
regular (a FIFO never blocks) and only as far as the comparison needs, so a hostile
multi-gigabyte file costs nothing.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
from dataclasses import dataclass

from boundary_audit.tasks import wsfs
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


def compare_tree(task: Task, work_fd: int) -> list[str]:
    """Every way the work dir (descriptor `work_fd`) differs from `expected_tree(task)`, in a
    stable order."""
    expected = expected_tree(task)
    opaque = opaque_git_dir(task)
    problems: list[str] = []
    for path in sorted(expected):
        problems.extend(_check_entry(work_fd, path, expected[path]))
    absent = set(task.validator.absent)
    problems += [
        f"{show(path)} must not exist ({wsfs.kind(wsfs.lstat(work_fd, path))} found)"
        for path in task.validator.absent
        if wsfs.lexists(work_fd, path)
    ]
    problems.extend(_collateral(work_fd, "", expected, absent, opaque))
    return problems


_NAMES = {
    "file": "a regular file",
    "dir": "a directory",
    "symlink": "a symlink",
    "special file": "a special file",
}


def _check_entry(work_fd: int, path: str, want: Entry) -> list[str]:
    try:
        st = wsfs.lstat(work_fd, path)
    except FileNotFoundError:
        return [f"missing {'directory' if want.kind == 'dir' else want.kind} {show(path)}"]
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            return [f"missing {want.kind} {show(path)} (a parent is not a directory)"]
        return [_unreadable(path, exc)]
    got = wsfs.kind(st)
    if got != want.kind:
        return [f"{show(path)}: expected {_NAMES[want.kind]}, found {_NAMES[got]}"]
    if want.kind == "symlink":
        target = wsfs.readlink(work_fd, path)
        if target != want.target:
            return [f"{show(path)}: symlink target {show(target)}, expected {show(want.target)}"]
        return []
    if want.kind == "file":
        return _check_file(work_fd, path, want)
    return []


def _check_file(work_fd: int, path: str, want: Entry) -> list[str]:
    try:
        st, actual = wsfs.read_prefix(work_fd, path, len(want.content) + 64)
    except wsfs.NotRegular as exc:
        return [f"{show(path)}: expected {_NAMES['file']}, found {_NAMES.get(exc.kind, exc.kind)}"]
    except OSError as exc:
        return [_unreadable(path, exc)]
    problems = []
    if st.st_size != len(want.content) or actual != want.content:
        problems.append(f"{show(path)}: {describe_difference(want.content, actual, st.st_size)}")
    if want.mode is not None and stat.S_IMODE(st.st_mode) != want.mode:
        problems.append(
            f"{show(path)}: mode {stat.S_IMODE(st.st_mode):04o}, expected {want.mode:04o}"
        )
    return problems


def _unreadable(path: str, exc: OSError) -> str:
    return f"{show(path)}: cannot be read ({os.strerror(exc.errno) if exc.errno else exc})"


def _collateral(
    work_fd: int, rel: str, expected: dict[str, Entry], absent: set[str], opaque: str | None
) -> list[str]:
    problems = []
    try:
        base = wsfs.open_dir(work_fd, rel)
    except OSError:
        return []
    try:
        for name in sorted(os.listdir(base)):
            path = f"{rel}/{name}" if rel else name
            if path == opaque:
                continue
            want = expected.get(path)
            st = os.stat(name, dir_fd=base, follow_symlinks=False)
            if want is None:
                if path not in absent:
                    problems.append(_unexpected(base, name, path, st))
            elif want.kind == "dir" and stat.S_ISDIR(st.st_mode):
                problems.extend(_collateral(work_fd, path, expected, absent, opaque))
    finally:
        os.close(base)
    return problems


def _unexpected(base: int, name: str, path: str, st: os.stat_result) -> str:
    kind = wsfs.kind(st)
    if kind == "dir":
        try:
            count = len(wsfs.listdir(base, name))
        except OSError:
            return f"unexpected directory {show(path)} (collateral, unreadable)"
        entries = "1 entry" if count == 1 else f"{count} entries"
        return f"unexpected directory {show(path)} (collateral, {entries} inside)"
    if kind == "symlink":
        target = os.readlink(name, dir_fd=base)
        return f"unexpected symlink {show(path)} -> {show(target)} (collateral)"
    return f"unexpected {kind} {show(path)} (collateral)"
