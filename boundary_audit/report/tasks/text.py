"""Pure renderers for the `tasks` commands: list (table, JSON), show (text, JSON), check.

Every function returns a string; the CLI prints it. JSON documents carry a schema version,
keep a fixed key order and end with a newline. Text output escapes control characters (a
task may hold ESC bytes), keeping newlines and TABs readable.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from boundary_audit.tasks.check import TaskCheck
from boundary_audit.tasks.diff import quoted
from boundary_audit.tasks.model import FileSpec, Task
from boundary_audit.tasks.vocabulary import CORE_FAMILIES, HAZARDS

LIST_SCHEMA = "boundary-audit/tasks/v1"
SHOW_LIMIT = 1200
"""Characters of a reply or payload shown by `tasks show` before it is cut."""


def group_of(task: Task) -> str | None:
    """The Table 7 mechanism group of a core task, else None."""
    return CORE_FAMILIES.get(task.family) if task.core else None


def list_record(task: Task) -> dict[str, Any]:
    """The `tasks list --format json` object of one task (fixed key order)."""
    return {
        "id": task.id,
        "family": task.family,
        "tier": task.tier,
        "core": task.core,
        "group": group_of(task),
        "tags": list(task.tags),
        "hazards": list(task.hazards),
        "naive_breaks": task.naive_breaks,
        "oracle_passes": list(task.oracle_passes),
        "oracle_fails": list(task.oracle_fails),
        "source": task.source_file,
    }


def list_json(tasks: Sequence[Task]) -> str:
    """`{"schema": ..., "tasks": [...]}` with a trailing newline."""
    doc = {"schema": LIST_SCHEMA, "tasks": [list_record(t) for t in tasks]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def list_table(tasks: Sequence[Task]) -> str:
    """An aligned plain-text table: id, core/boundary, tier, naive breaks on, hazards."""
    rows = [("ID", "KIND", "TIER", "NAIVE BREAKS", "HAZARDS")]
    for t in tasks:
        kind = "core" if t.core else (t.boundary or "extra")
        rows.append((t.id, kind, str(t.tier), t.naive_breaks, ", ".join(t.hazards) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4]
        for r in rows
    ]
    core = sum(t.core for t in tasks)
    lines.append(f"{len(tasks)} tasks ({core} core, {len(tasks) - core} boundary)")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def display(text: str) -> str:
    """`text` with control characters other than newline and TAB escaped, cut at SHOW_LIMIT."""
    out = "".join(
        c if c in "\n\t" or (ord(c) >= 0x20 and ord(c) != 0x7F) else f"\\x{ord(c):02x}"
        for c in text
    )
    if len(out) > SHOW_LIMIT:
        return out[:SHOW_LIMIT] + f"… ({len(text.encode('utf-8', 'surrogateescape'))} bytes in all)"
    return out


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in display(text).split("\n"))


def _file(f: FileSpec) -> str:
    mode = "" if f.mode is None else f" mode {f.mode:04o}"
    return f"{quoted(f.path.encode())} = {quoted(f.content, 120)}{mode}"


def show_text(task: Task) -> str:
    """Everything about one task, for a reader."""
    kind = f"core, group {group_of(task)}" if task.core else ", ".join(task.tags)
    lines = [
        f"{task.id}  ({kind}; family {task.family}, tier {task.tier})",
        f"source: {task.source_file}",
        "",
    ]
    lines += ["instruction:", _indent(task.instruction), ""]
    lines.append("hazards:" + ("" if task.hazards else " none (control)"))
    lines += [f"    {h}: {HAZARDS[h]}" for h in task.hazards]
    lines += ["", "fixture:", *(_fixture_lines(task) or ["    (empty work dir)"]), ""]
    fails = f"; fails on {', '.join(task.oracle_fails)}" if task.oracle_fails else ""
    lines += [
        f"oracle (passes on {', '.join(task.oracle_passes)}{fails}):",
        _indent(task.oracle),
        "",
    ]
    lines += [f"naive (breaks on {task.naive_breaks}):", _indent(task.naive), ""]
    lines += ["validator:", *_validator_lines(task)]
    if task.notes:
        lines += ["", "notes:", _indent(task.notes)]
    return "\n".join(lines) + "\n"


def _fixture_lines(task: Task) -> list[str]:
    fx = task.fixture
    lines = []
    if fx.git is not None:
        for i, c in enumerate(fx.git.commits):
            names = ", ".join(f.path for f in c.files) or "no files"
            lines.append(
                f"    git repo {fx.git.path!r} on {fx.git.branch}, commit {i + 1}: "
                f"{quoted(c.message)} ({names})"
            )
    lines += [f"    dir {quoted(d.encode())}" for d in fx.dirs]
    lines += [f"    file {_file(f)}" for f in fx.files]
    lines += [
        f"    symlink {quoted(s.path.encode())} -> {quoted(s.target.encode())}" for s in fx.symlinks
    ]
    lines += [f"    env {k}={quoted(v.encode())}" for k, v in fx.env]
    for p in fx.programs:
        what = p.helper or "custom sh script"
        extra = (
            f" (home {p.home}" + "".join(f", {k}={v}" for k, v in p.env) + ")"
            if p.helper == "remote"
            else ""
        )
        lines.append(f"    program {p.name}: {what}{extra}")
    return lines


def _validator_lines(task: Task) -> list[str]:
    v = task.validator
    lines = [f"    file {_file(f)}" for f in v.files]
    lines += [f"    dir {quoted(d.encode())}" for d in v.dirs]
    lines += [
        f"    symlink {quoted(s.path.encode())} -> {quoted(s.target.encode())}" for s in v.symlinks
    ]
    lines += [f"    absent {quoted(p.encode())}" for p in v.absent]
    for a in v.argv:
        lines += [
            f"    argv {a.program} call #{i + 1}: [{', '.join(quoted(x, 40) for x in call)}]"
            for i, call in enumerate(a.calls)
        ]
    for e in v.env:
        seen = ", ".join(f"{k}={quoted(val)}" for k, val in e.vars)
        lines.append(
            f"    env seen by {e.program}: {seen}"
            + (f"; unset {', '.join(e.unset)}" if e.unset else "")
        )
    if v.git is not None:
        lines.append(
            f"    git {v.git.path!r} history: {', '.join(quoted(m, 60) for m in v.git.messages)}"
        )
        lines += [f"    git HEAD tree {_file(f)}" for f in v.git.tree]
    if v.stdout is not None:
        lines.append(
            f"    stdout is {quoted(v.stdout.exact)}"
            if v.stdout.exact is not None
            else f"    stdout contains {quoted(v.stdout.contains or b'')}"
        )
    lines.append(
        "    fixture files not listed keep their bytes and modes; any other path is collateral"
    )
    return lines


def _bytes(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def show_json(task: Task) -> str:
    """The task as JSON (bytes as {"text": ...} or {"base64": ...}), with a trailing newline."""

    def convert(value: Any) -> Any:
        if isinstance(value, bytes):
            return _bytes(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: convert(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, tuple | list):
            return [convert(v) for v in value]
        return value

    doc = {"schema": LIST_SCHEMA, "task": convert(task)}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def check_report(results: Sequence[TaskCheck], *, verbose: bool = False) -> str:
    """Failures (always), unverified claims (with --verbose, else counted), and a summary line."""
    lines = []
    for r in results:
        lines += [f"FAIL {r.task_id}: {i.claim}: {display(i.detail)}" for i in r.failed]
    unverified = [(r.task_id, i) for r in results for i in r.unverified]
    if verbose:
        lines += [f"unverified {tid}: {i.claim} ({i.detail})" for tid, i in unverified]
    failed = sum(1 for r in results if r.failed)
    checked = sum(len(r.items) - len(r.unverified) for r in results)
    summary = (
        f"tasks check: {len(results)} tasks, {len(results) - failed} ok, {failed} failed; "
        f"{checked} claims verified, {len(unverified)} unverified"
    )
    if unverified and not verbose:
        summary += " (--verbose lists them)"
    return "\n".join([*lines, summary]) + "\n"
