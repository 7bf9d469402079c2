"""Generic mutations of a passing final state, to show that a validator can fail.

`flip_one_byte` picks the first thing the validator compares exactly, in this order: a file
the validator expects, a fixture file that must stay unchanged, a recorder's output (argv or
env), stdout; it flips one bit of one byte there (or, for an empty expected file, adds one
byte), and restores it afterwards. `stray_file` adds one file to the work dir and removes it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.tree import expected_tree
from boundary_audit.tasks.validate import recorded

STRAY_NAME = "stray-file.tmp"


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _file_candidates(task: Task, ws: Workspace) -> list[Path]:
    tree = expected_tree(task)
    first = [f.path for f in task.validator.files]
    rest = sorted(p for p, e in tree.items() if e.kind == "file" and p not in first)
    paths = [ws.work / p for p in first + rest]
    for check in task.validator.argv:
        paths.extend(recorded(ws.obs, check.program, "argv"))
    for env in task.validator.env:
        paths.extend(recorded(ws.obs, env.program, "env"))
    return paths


@contextmanager
def flip_one_byte(
    task: Task, ws: Workspace, result: ExecResult
) -> Iterator[tuple[str | None, ExecResult]]:
    """Yield (what was changed, the result to validate) with one byte of the state changed.

    What was changed is None when the state holds nothing to mutate (no file, no stdout).
    """
    candidates = _file_candidates(task, ws)
    target = next(
        (p for p in candidates if p.is_file() and not p.is_symlink() and p.stat().st_size), None
    )
    if target is not None:
        original = target.read_bytes()
        at = len(original) // 2
        target.write_bytes(_flipped(original, at))
        try:
            yield f"byte {at} of {_label(target, ws)}", result
        finally:
            target.write_bytes(original)
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
    empty = next((p for p in candidates if p.is_file() and not p.is_symlink()), None)
    if empty is None:
        yield None, result
        return
    empty.write_bytes(b"x")
    try:
        yield f"one byte added to empty {_label(empty, ws)}", result
    finally:
        empty.write_bytes(b"")


@contextmanager
def stray_file(ws: Workspace) -> Iterator[str]:
    """Yield the name of a file added to the work dir; remove it afterwards."""
    path = ws.work / STRAY_NAME
    path.write_bytes(b"stray\n")
    try:
        yield STRAY_NAME
    finally:
        os.unlink(path)


def _label(path: Path, ws: Workspace) -> str:
    for base, name in ((ws.work, ""), (ws.obs, "obs/")):
        try:
            return name + str(path.relative_to(base))
        except ValueError:
            continue
    return str(path)
