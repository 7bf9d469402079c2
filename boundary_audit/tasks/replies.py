"""Reply sets: the commands a run feeds through a transport, per task.

Built in: `oracle` and `naive` (the replies stored with each task). Otherwise a JSONL file,
one JSON object per line:

    {"task_id": "write-file-t3", "reply": "printf ...", "reply_id": "r1", "contract": "raw"}

`task_id` and `reply` are required; `reply_id` (default `line<N>`), `model` (default none),
`contract` (`raw`, `disclosed` or `native`, default `raw`) and `meta` (any JSON object, carried
along) are optional. Two keys of `meta` are read, as `generate` writes them: `draw` (an integer
>= 0: which of several replies to the same task, model and contract this is) and `failure` (a
string: the model gave no usable command, for that reason; the reply is never run and its runs
fail with `failed reply: <reason>`). Blank lines are skipped. Any other problem (bad JSON, a
missing or misspelt key, a wrong type, an unknown task id, a repeated (task_id, model,
reply_id), a `meta.draw` that is not an integer >= 0, a `meta.failure` that is neither a
string nor null, text that is not text: a lone surrogate such as `"\ud800"` anywhere, a NUL
`"\u0000"` in one of the string fields) is a ProbeError naming `file:line` (exit code 4), and
nothing is run. The built-in sets are held to the same rule, naming the task file.

A file may hold several replies to one task from one model: one per (contract, draw) *group*.
`load_reply_sets` splits such a file into one `ReplySet` per group, named
`FILE#<contract>-d<draw>` (`FILE#<contract>` for lines without a draw), so that every set holds
one reply per task per model and every consumer (probe, crossover, table8, scan, harness) pairs
runs task by task. A file with at most one reply per task per model is one set named `FILE`,
exactly as before draws existed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit.errors import ProbeError
from boundary_audit.tasks.model import Task
from boundary_audit.transports.interface import nul_problem, surrogate_problem

BUILTIN_SETS = ("oracle", "naive")
CONTRACTS = ("raw", "disclosed", "native")
_KEYS = ("task_id", "reply", "reply_id", "model", "contract", "meta")


@dataclass(frozen=True)
class Reply:
    """One reply to one task."""

    task_id: str
    reply: str
    reply_id: str
    model: str | None = None
    contract: str = "raw"
    """`raw` (the model was not told about the boundary) or `disclosed` (it was)."""
    meta: str = "{}"
    """The line's `meta` object, as canonical JSON text (kept hashable)."""
    draw: int | None = None
    """`meta.draw`: which of several replies to this task, model and contract (None: no draw)."""
    failure: str | None = None
    """`meta.failure`: why the model gave no usable command; such a reply is never run."""

    @property
    def group(self) -> tuple[str, int | None]:
        """(contract, draw): the replies of one group pair task by task."""
        return (self.contract, self.draw)


@dataclass(frozen=True)
class ReplySet:
    """A named collection of replies; `name` is `oracle`, `naive`, the file's name, or
    `FILE#<contract>-d<draw>` for one group of a file that holds several."""

    name: str
    replies: tuple[Reply, ...]
    source: str = ""
    """The file (or built-in set) the replies came from; "" means `name`."""

    @property
    def origin(self) -> str:
        """The file or built-in set the replies came from."""
        return self.source or self.name

    def for_task(self, task_id: str) -> tuple[Reply, ...]:
        """The replies for `task_id`, in file order."""
        return tuple(r for r in self.replies if r.task_id == task_id)

    def restricted(self, tasks: Iterable[Task]) -> ReplySet:
        """The same set keeping only replies to `tasks` (e.g. after --select)."""
        ids = {t.id for t in tasks}
        kept = tuple(r for r in self.replies if r.task_id in ids)
        return ReplySet(self.name, kept, self.source)

    def groups(self) -> tuple[ReplySet, ...]:
        """One set per (contract, draw) group, in (contract, draw) order; this set itself when
        no task has two replies from one model (then every consumer pairs it as it is)."""
        per_task = Counter((r.task_id, r.model) for r in self.replies)
        if all(n == 1 for n in per_task.values()):
            return (self,)
        found: dict[tuple[str, int | None], list[Reply]] = {}
        for reply in self.replies:
            found.setdefault(reply.group, []).append(reply)
        if len(found) <= 1:
            return (self,)
        return tuple(
            ReplySet(group_name(self.name, contract, draw), tuple(found[(contract, draw)]),
                     self.origin)
            for contract, draw in sorted(found, key=_group_key)
        )  # fmt: skip


def group_name(name: str, contract: str, draw: int | None) -> str:
    """`FILE#raw-d0`, or `FILE#raw` for replies without a draw."""
    return f"{name}#{contract}" + ("" if draw is None else f"-d{draw}")


def _group_key(group: tuple[str, int | None]) -> tuple[int, str, int]:
    contract, draw = group
    rank = CONTRACTS.index(contract) if contract in CONTRACTS else len(CONTRACTS)
    return (rank, contract, -1 if draw is None else draw)


def load_reply_set(spec: str | Path, tasks: Sequence[Task]) -> ReplySet:
    """`oracle`, `naive`, or the path of a JSONL reply file checked against `tasks`' ids."""
    if isinstance(spec, str) and spec in BUILTIN_SETS:
        return builtin_reply_set(spec, tasks)
    return read_jsonl(Path(spec), {t.id for t in tasks})


def load_reply_sets(spec: str | Path, tasks: Sequence[Task]) -> tuple[ReplySet, ...]:
    """Like `load_reply_set`, split into one set per (contract, draw) group (`ReplySet.groups`)."""
    return load_reply_set(spec, tasks).groups()


def builtin_reply_set(name: str, tasks: Sequence[Task]) -> ReplySet:
    """The oracle or naive reply of every task."""
    if name not in BUILTIN_SETS:
        raise ProbeError(f"unknown reply set {name!r} (built in: {', '.join(BUILTIN_SETS)})")
    for task in tasks:
        problem = text_problem(getattr(task, name))
        if problem:
            raise ProbeError(f"{task.source_file}: task {task.id}: its {name} reply {problem}")
    return ReplySet(name, tuple(Reply(t.id, getattr(t, name), name) for t in tasks))


def text_problem(text: str) -> str:
    """Why `text` cannot be a reply ("" if it can): a NUL or a lone surrogate (see
    `transports.interface.nul_problem` and `surrogate_problem`)."""
    return nul_problem(text) or surrogate_problem(text)


def read_jsonl(path: Path, known_ids: set[str]) -> ReplySet:
    """Parse and check a JSONL reply file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProbeError(f"{path}: cannot read reply file: {exc.strerror or exc}") from None
    replies: list[Reply] = []
    seen: dict[tuple[str, str | None, str], int] = {}
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        reply = _parse_line(path, lineno, line, known_ids)
        key = (reply.task_id, reply.model, reply.reply_id)
        if key in seen:
            who = f" from model {reply.model!r}" if reply.model else ""
            raise ProbeError(
                f"{path}:{lineno}: reply_id {reply.reply_id!r} for task {reply.task_id!r}{who} "
                f"repeats line {seen[key]}"
            )
        seen[key] = lineno
        replies.append(reply)
    if not replies:
        raise ProbeError(f"{path}: no replies (expected one JSON object per line)")
    return ReplySet(path.name, tuple(replies))


def _parse_line(path: Path, lineno: int, line: bytes, known_ids: set[str]) -> Reply:
    where = f"{path}:{lineno}"
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ProbeError(f"{where}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ProbeError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ProbeError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    _check_text(obj, where)
    unknown = sorted(set(obj) - set(_KEYS))
    if unknown:
        raise ProbeError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(_KEYS)})")
    task_id = _str(obj, "task_id", where, required=True)
    if task_id not in known_ids:
        raise ProbeError(
            f"{where}: unknown task id {task_id!r}",
            hint="`boundary-audit tasks list` shows the ids",
        )
    contract = _str(obj, "contract", where) or "raw"
    if contract not in CONTRACTS:
        raise ProbeError(f"{where}: contract {contract!r} is not one of {', '.join(CONTRACTS)}")
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        raise ProbeError(f"{where}: meta must be a JSON object")
    draw = meta.get("draw")
    if draw is not None and (isinstance(draw, bool) or not isinstance(draw, int) or draw < 0):
        raise ProbeError(f"{where}: meta.draw must be an integer >= 0, got {draw!r}")
    failure = meta.get("failure")
    if failure is not None and not isinstance(failure, str):
        raise ProbeError(f"{where}: meta.failure must be a string or null")
    reply_id = _str(obj, "reply_id", where)
    if reply_id == "":
        raise ProbeError(f"{where}: reply_id must not be empty")
    return Reply(
        task_id=task_id,
        reply=_str(obj, "reply", where, required=True) or "",
        reply_id=reply_id or f"line{lineno}",
        model=_str(obj, "model", where),
        contract=contract,
        meta=json.dumps(meta, sort_keys=True, ensure_ascii=False),
        draw=draw,
        failure=(failure or "no usable command") if failure is not None else None,
    )


def _check_text(obj: dict[str, Any], where: str) -> None:
    """No lone surrogate anywhere in the line, no NUL in its string fields."""
    for key, value in obj.items():
        if key != "meta" and isinstance(value, str) and (problem := text_problem(value)):
            raise ProbeError(f"{where}: {key!r} {problem}")
    stack: list[tuple[str, Any]] = [("meta", obj.get("meta"))]
    while stack:
        label, value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if problem := surrogate_problem(k):
                    raise ProbeError(f"{where}: a key of {label!r} {problem}")
                stack.append((label, v))
        elif isinstance(value, list):
            stack.extend((label, v) for v in value)
        elif isinstance(value, str) and (problem := surrogate_problem(value)):
            raise ProbeError(f"{where}: a string in {label!r} {problem}")


def _str(obj: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise ProbeError(f"{where}: missing {key!r}")
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise ProbeError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return value
