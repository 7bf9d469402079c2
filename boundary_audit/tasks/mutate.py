"""Generic mutations of a passing final state, to show that a validator can fail.

`flip_one_byte` picks the first thing the validator compares exactly, in this order: a file
the validator expects, a fixture file that must stay unchanged, a recorder's output (argv or
env), stdout; it flips one bit of one byte there (or, for an empty expected file, adds one
byte), and restores it afterwards. `stray_file` adds one file to the work dir and removes it.
"""

from __future__ import annotations

import dataclasses
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.tasks import wsfs
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.tree import expected_tree
from boundary_audit.tasks.validate import recorded

STRAY_NAME = "stray-file.tmp"


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _file_candidates(task: Task, work: int, obs: int) -> list[tuple[int, str, str]]:
    """(directory descriptor, relative path, label) of each file the mutation may change."""
    tree = expected_tree(task)
    first = [f.path for f in task.validator.files]
    rest = sorted(p for p, e in tree.items() if e.kind == "file" and p not in first)
    found = [(work, p, p) for p in first + rest]
    for check in task.validator.argv:
        found.extend((obs, p, f"obs/{p}") for p in recorded(obs, check.program, "argv"))
    for env in task.validator.env:
        found.extend((obs, p, f"obs/{p}") for p in recorded(obs, env.program, "env"))
    return found


def _size(dir_fd: int, rel: str) -> int | None:
    """The size of `rel` if it is a regular file (links never followed), else None."""
    try:
        st = wsfs.lstat(dir_fd, rel)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _read(dir_fd: int, rel: str, size: int) -> bytes:
    return wsfs.read_prefix(dir_fd, rel, size)[1]


@contextmanager
def flip_one_byte(
    task: Task, ws: Workspace, result: ExecResult
) -> Iterator[tuple[str | None, ExecResult]]:
    """Yield (what was changed, the result to validate) with one byte of the state changed.

    What was changed is None when the state holds nothing to mutate (no file, no stdout).
    Files are reached through the workspace's descriptors and never through a link.
    """
    with ExitStack() as stack:
        work = stack.enter_context(wsfs.root(ws.work_fd, ws.work))
        obs = stack.enter_context(wsfs.root(ws.obs_fd, ws.obs))
        candidates = [(fd, rel, label, _size(fd, rel)) for fd, rel, label in
                      _file_candidates(task, work, obs)]  # fmt: skip
        target = next((c for c in candidates if c[3]), None)
        if target is not None:
            fd, rel, label, size = target
            assert size is not None
            original = _read(fd, rel, size)
            at = len(original) // 2
            wsfs.write_file(fd, rel, _flipped(original, at))
            try:
                yield f"byte {at} of {label}", result
            finally:
                wsfs.write_file(fd, rel, original)
            return
        stdout_check = task.validator.stdout
        if stdout_check is not None and result.stdout:
            at = (
                result.stdout.find(stdout_check.contains)
                if stdout_check.contains
                else len(result.stdout) // 2
            )
            yield (
                f"byte {max(at, 0)} of stdout",
                dataclasses.replace(result, stdout=_flipped(result.stdout, max(at, 0))),
            )
            return
        empty = next((c for c in candidates if c[3] is not None), None)
        if empty is None:
            yield None, result
            return
        fd, rel, label, _ = empty
        wsfs.write_file(fd, rel, b"x")
        try:
            yield f"one byte added to empty {label}", result
        finally:
            wsfs.write_file(fd, rel, b"")


@contextmanager
def stray_file(ws: Workspace) -> Iterator[str]:
    """Yield the name of a file added to the work dir; remove it afterwards."""
    with wsfs.root(ws.work_fd, ws.work) as work:
        wsfs.write_file(work, STRAY_NAME, b"stray\n", create=True)
        try:
            yield STRAY_NAME
        finally:
            wsfs.unlink(work, STRAY_NAME)
