"""Read an `strace -f -yy -xx` output file into system-call events. The input is hostile.

The trace is written inside the sandbox, by strace, about processes of the harness: a harness
can shape what its system calls carry (argv, written bytes, file names) and, running as the
same uid, can even rewrite the file. So this reader trusts nothing in it:

- it reads at most `TRACE_LIMIT` bytes (more is a `TraceError`, never a silent cut);
- with `-xx` every byte of every string, and of every path in an fd annotation, is printed as
  `\\xNN`, so a string can hold no quote, bracket or newline of the trace's own syntax; a line
  that does not parse is skipped and counted (`Trace.skipped`), never guessed at;
- nesting is bounded (`MAX_DEPTH`); the parser is linear in the line's length.

A call split by another thread's output (`NAME(args <unfinished ...>` ... `<... NAME
resumed>rest`) is joined and dated by its start line, which is the order the kernel saw the
calls begin in: a `vfork` child's first calls come before its parent's `vfork` returns.

What a call's arguments become (`Arg`): `bytes` for a string, `Fd` for a descriptor with its
`-yy` annotation (`3<pipe:[123]>`, `0</dev/pts/1>`, `4<UNIX-STREAM:[10->11]>`), `list` for an
array, `dict` for a struct (`key=value` members; positional members under their index), and
`str` for anything else (numbers, flags, pointers, `NULL`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from boundary_audit.errors import BoundaryAuditError, ExitCode

TRACE_LIMIT = 128 << 20
"""Largest trace read, in bytes. A larger trace is a TraceError."""
DELETED = "(deleted)"
"""What strace appends to a descriptor's annotation when its file has been unlinked."""
MAX_DEPTH = 16
"""Deepest nesting of arrays, structs and annotations a line may have."""


class TraceError(BoundaryAuditError):
    """The trace cannot be read (too large, missing): the observation could not be made."""

    exit_code = ExitCode.RUN


@dataclass(frozen=True)
class Fd:
    """A file descriptor argument or result, with strace's `-yy` annotation decoded."""

    num: int
    annotation: str
    """What the descriptor is: `pipe:[N]`, `UNIX-STREAM:[a->b]`, a path (`/dev/pts/0`,
    `/tmp/x.sh`, `/dev/null<char 1:3>`)... Path bytes decoded as UTF-8 with surrogateescape."""


Arg = bytes | Fd | str | list["Arg"] | dict[str, "Arg"]


@dataclass(frozen=True)
class Call:
    """One completed system call of one thread."""

    line: int
    """The line it started on (1-based): the order calls are compared in."""
    tid: int
    name: str
    args: tuple[Arg, ...]
    result: Arg
    """The return value: an `Fd`, or a `str` such as `0`, `12`, `-1 ENOENT (...)`, `?`."""

    @property
    def ok(self) -> bool:
        """The call succeeded (its result is not `-1 ...`)."""
        return not (isinstance(self.result, str) and self.result.startswith("-"))

    @property
    def result_int(self) -> int | None:
        """The result as an integer (an fd's number), or None."""
        if isinstance(self.result, Fd):
            return self.result.num
        head = self.result.split(" ", 1)[0] if isinstance(self.result, str) else ""
        try:
            return int(head, 0)
        except ValueError:
            return None


@dataclass(frozen=True)
class Exit:
    """A thread's end: `exited with N` or `killed by SIGX`."""

    line: int
    tid: int
    how: str


@dataclass
class Trace:
    """Everything read from one trace file, in line order."""

    calls: list[Call] = field(default_factory=list)
    exits: list[Exit] = field(default_factory=list)
    skipped: int = 0
    """Lines that looked like calls but did not parse."""
    unfinished: int = 0
    """Calls still unfinished when the trace ended (a killed tracee, or the tracer killed)."""


_LINE = re.compile(rb"^(\d+) +(.*)$")
_HEX = re.compile(r"(?:\\x[0-9a-f]{2})+")
_EXIT = re.compile(
    r"^\+\+\+ (exited with -?\d+|killed by SIG[A-Z0-9]+(?: \(core dumped\))?) \+\+\+$"
)
_RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_?]+) resumed>(.*)$", re.S)
_UNFINISHED = " <unfinished ...>"


def read_trace(data: bytes) -> Trace:
    """Parse the bytes of one trace file."""
    if len(data) > TRACE_LIMIT:
        raise TraceError(f"the trace is over {TRACE_LIMIT >> 20} MiB: the observation is void")
    trace = Trace()
    pending: dict[int, tuple[int, str]] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        m = _LINE.match(raw)
        if m is None:
            continue
        tid = int(m.group(1))
        # -xx leaves only ASCII outside \xNN escapes; anything else is not strace's.
        text = m.group(2).decode("ascii", "replace")
        if text.startswith("+++ "):
            em = _EXIT.match(text)
            if em:
                trace.exits.append(Exit(number, tid, em.group(1)))
            continue
        if text.startswith("--- ") or text.startswith("strace: "):
            continue
        start = number
        rm = _RESUMED.match(text)
        if rm is not None:
            held = pending.pop(tid, None)
            if held is None or not held[1].startswith(rm.group(1) + "("):
                trace.skipped += 1
                continue
            start, partial = held
            text = partial + rm.group(2)
        elif text.endswith(_UNFINISHED):
            if tid in pending:
                trace.skipped += 1
            pending[tid] = (number, text[: -len(_UNFINISHED)])
            continue
        call = parse_call(text, start, tid)
        if call is None:
            trace.skipped += 1
        else:
            trace.calls.append(call)
    trace.unfinished = len(pending)
    trace.calls.sort(key=lambda c: c.line)
    return trace


_CALL = re.compile(r"^([a-z0-9_]+)\((.*)\)\s+= (.*)$", re.S)


def parse_call(text: str, line: int, tid: int) -> Call | None:
    """One `name(args) = result` line (joined if it was split), or None if it does not parse."""
    m = _CALL.match(text)
    if m is None:
        return None
    name, body, result = m.groups()
    try:
        args = _Parser(body).items(end="")
        res = _Parser(result.strip()).value()
    except _Bad:
        return None
    return Call(line, tid, name, tuple(args), res)


class _Bad(Exception):
    pass


class _Parser:
    """A recursive-descent reader of one argument list (bounded depth, linear)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.depth = 0

    def items(self, end: str) -> list[Arg]:
        found: list[Arg] = []
        while True:
            self._spaces()
            if self.i >= len(self.s) or (end and self.s[self.i] == end):
                break
            item = self.value()
            if self.s.startswith(" => ", self.i):  # an in/out struct: {in} => {out}
                self.i += 4
                out = self.value()
                if isinstance(item, dict) and isinstance(out, dict):
                    item = {**item, **{k: v for k, v in out.items() if k not in item}}
            found.append(item)
            self._spaces()
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
                continue
            break
        if end:
            if self.i >= len(self.s) or self.s[self.i] != end:
                raise _Bad
            self.i += 1
        elif self.i != len(self.s):
            raise _Bad
        return found

    def value(self) -> Arg:
        self._spaces()
        if self.i >= len(self.s):
            return ""
        c = self.s[self.i]
        if c == '"':
            return self._string()
        if c in "[{":
            return self._nested(c)
        word = self._atom()
        nxt = self.s[self.i] if self.i < len(self.s) else ""
        if nxt == "<":
            note = self._annotation()
            if self.s.startswith(DELETED, self.i):  # the file was unlinked since it was opened
                self.i += len(DELETED)
                note += DELETED
            return Fd(int(word), note) if word.isdigit() else f"{word}<{note}>"
        if nxt == "=" and re.fullmatch(r"[a-z_0-9]+", word):
            self.i += 1
            return {word: self.value()}
        if nxt == '"':
            return self._string()  # @"abstract socket name", and the like
        return word + self._rest_of_atom()

    def _nested(self, opener: str) -> Arg:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Bad
        self.i += 1
        closer = "]" if opener == "[" else "}"
        items = self.items(end=closer)
        self.depth -= 1
        if opener == "[":
            return items
        out: dict[str, Arg] = {}
        for index, item in enumerate(items):
            if isinstance(item, dict) and len(item) == 1:
                out.update(item)
            else:
                out[str(index)] = item
        return out

    def _string(self) -> bytes:
        j = self.s.find('"', self.i + 1)
        if j < 0:
            raise _Bad
        body = self.s[self.i + 1 : j]
        self.i = j + 1
        if self.s.startswith("...", self.i):
            self.i += 3
        if body and not _HEX.fullmatch(body):
            raise _Bad
        return bytes.fromhex(body.replace("\\x", ""))

    def _atom(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in ',[]{}()<>="':
            if self.s[self.i] == " " and self.s.startswith(" /*", self.i):
                break
            self.i += 1
        return self.s[start : self.i].strip()

    def _rest_of_atom(self) -> str:
        """What follows an atom before the next separator: `(flags O_RDONLY)`, `/* 9 vars */`,
        `|0x8` and the like, kept as text."""
        start = self.i
        depth = 0
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif c == "," and depth == 0:
                break
            elif c == '"':
                self._string()  # inet_addr("..."): text around a string is only kept as text
                continue
            self.i += 1
        return self.s[start : self.i].rstrip()

    def _annotation(self) -> str:
        """The text between `<` and its matching `>`, \\xNN runs decoded."""
        assert self.s[self.i] == "<"
        depth = 0
        start = self.i + 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "<":
                depth += 1
                if depth > MAX_DEPTH:
                    raise _Bad
            elif c == ">" and not (self.i > 0 and self.s[self.i - 1] == "-"):
                depth -= 1
                if depth == 0:
                    body = self.s[start : self.i]
                    self.i += 1
                    return decode_hex(body)
            self.i += 1
        raise _Bad

    def _spaces(self) -> None:
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1


def decode_hex(text: str) -> str:
    """`text` with every run of `\\xNN` decoded (UTF-8, surrogateescape for other bytes)."""
    return _HEX.sub(
        lambda m: bytes.fromhex(m.group(0).replace("\\x", "")).decode("utf-8", "surrogateescape"),
        text,
    )


def strings(arg: Arg) -> bytes:
    """Every string inside `arg`, concatenated in order (the bytes a write carried)."""
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, list):
        return b"".join(strings(a) for a in arg)
    if isinstance(arg, dict):
        return b"".join(strings(a) for a in arg.values())
    return b""


def fds(arg: Arg) -> list[Fd]:
    """Every descriptor inside `arg`, in order."""
    if isinstance(arg, Fd):
        return [arg]
    if isinstance(arg, list):
        return [f for a in arg for f in fds(a)]
    if isinstance(arg, dict):
        return [f for a in arg.values() for f in fds(a)]
    return []
