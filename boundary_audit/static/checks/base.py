"""The shape of a check and of the sites its queries find.

A check is a class: a stable `code`, a kebab-case `name`, the boundary classes it reports,
a status and the version it appeared in, and a docstring that is its documentation page.
Its queries (`static/queries/<dialect>/<name>.scm`) find *sites*; `Check.sites` turns one
query match into site objects:

- `SinkSite`: where a value reaches a process (the capture `@sink.<kind>` names the kind);
- `WriteSite`: a write of a value into a file (for script-file);
- `TemplateSite`: a string literal of interest inside a template (second-parser launch,
  hand-built JSON);
- `CommentSite`: a comment that may hold an inline suppression.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import tree_sitter as ts

from boundary_audit.static.queries import Captures
from boundary_audit.taxonomy import BoundaryClass, Severity

SINK_KINDS = frozenset(
    {
        "process",
        "argv",
        "shell",
        "stdin",
        "stdin-oneshot",
        "stdin-handle",
        "session",
        "session-handle",
        "pty",
        "tty",
        "remote",
        "remote-argv",
        "docker",
        "kernel",
    }
)
"""Sink kinds a `@sink.<kind>` capture may name (see `analyze.evaluate_sink`)."""


@dataclass(frozen=True)
class SinkSite:
    """A place where a value reaches a process."""

    check: str
    kind: str
    span: ts.Node
    """The primary location (a call, a command, a list literal)."""
    value: ts.Node | None
    """The expression carrying the command (`@arg`), if the kind needs one."""
    receiver: ts.Node | None
    """The `@sink` node: callee or receiver (stdin stream, pty, pane, connection)."""
    skip: int = 0
    """Leading positional arguments of `span` that are not the sink's: a forwarder call
    (`asyncio.to_thread(subprocess.run, cmd)`) whose `receiver` is the sink callable."""
    rest: ts.Node | None = None
    """For an argv given as a program and its arguments apart (`runCommand({cmd, args})`):
    the arguments' expression; `value` is then the program."""

    @property
    def key(self) -> tuple[int, int, str, int, int]:
        """Identity for de-duplicating one sink matched twice by the same reading."""
        value = self.value.start_byte if self.value is not None else -1
        receiver = self.receiver.start_byte if self.receiver is not None else -1
        return (self.span.start_byte, self.span.end_byte, self.kind, value, receiver)


@dataclass(frozen=True)
class WriteSite:
    """A write of `content` into the file `target` (or through the handle `receiver`)."""

    check: str
    span: ts.Node
    content: ts.Node
    target: ts.Node | None
    receiver: ts.Node | None


@dataclass(frozen=True)
class TemplateSite:
    """A literal inside a string template that a check cares about."""

    check: str
    span: ts.Node


@dataclass(frozen=True)
class CommentSite:
    """A comment that mentions `boundary-audit:`."""

    check: str
    span: ts.Node


Site = SinkSite | WriteSite | TemplateSite | CommentSite


TransportHint = Callable[[str, str, bool], tuple[str, dict[str, object]]]
"""(sink source text, whole file text, sanitized) -> (transport name, parameters) that
replays the boundary; `pipelines.measure` asks the owning check of a finding's class."""


def has(text: str, *patterns: str) -> bool:
    """True if any regular expression of `patterns` matches `text` (transport hints)."""
    return any(re.search(p, text) for p in patterns)


@dataclass(frozen=True)
class ClassRecord:
    """Everything about one boundary class that the stages after the scan need, declared by
    the check that owns the class, so that a class is its check module, queries and fixture."""

    boundary_class: BoundaryClass
    rank: int
    """Order of harm among classes (higher: worse); picks the verdict of a sink read twice."""
    layers: tuple[str, ...]
    """Those parse layers in words (a Table-8 row that comes from a finding)."""
    fix: str
    """What removes the damage at this class of boundary."""
    severity: tuple[Severity, Severity]
    """(value traced to the model or named like a command, value of unknown origin)."""
    transport: TransportHint
    """How to replay the boundary for real."""
    lossless: bool = False
    """True when a faithful replay reproduces raw, so zero damage confirms the class."""
    sanitized_severity: Severity | None = None
    """Severity when the value went through a sanitizer, where that changes it."""


class Check:
    """Base class of every check. Subclasses set the class attributes and a docstring."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    classes: ClassVar[tuple[BoundaryClass, ...]] = ()
    """Boundary classes whose findings carry this check's code."""
    record: ClassVar[ClassRecord | None] = None
    """The per-class record of the (one) class this check owns; None for tool diagnostics."""
    status: ClassVar[str] = "stable"
    since: ClassVar[str] = "0.1.0"
    phase: ClassVar[str] = "sink"
    """When the scanner runs the check's queries: `sink` on every file; `aux` only on files
    that have sinks (facts the sinks need); `guarded` only on files whose bytes match `guard`."""
    guard: ClassVar[re.Pattern[bytes] | None] = None

    @classmethod
    def summary(cls) -> str:
        """First sentence of the documentation."""
        doc = (cls.__doc__ or "").strip().splitlines()
        return doc[0].strip() if doc else ""

    @classmethod
    def sites(cls, lang: str, caps: Captures) -> Iterator[Site]:
        """Sites of one query match; by default one `SinkSite` per `@sink.<kind>` capture."""
        span = caps["span"][0]
        value = caps["arg"][0] if "arg" in caps else None
        for name, nodes in caps.items():
            if name.startswith("sink."):
                kind = name.split(".", 1)[1]
                if kind not in SINK_KINDS:
                    raise ValueError(f"{cls.code}: unknown sink kind {kind!r}")
                yield SinkSite(cls.code, kind, span, value, nodes[0])
