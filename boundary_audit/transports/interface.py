"""The transport interface: carry a reply R through one boundary mechanism, for real.

A transport is built from its name and parameters (e.g. `tmux-literal` with `width=256`), and
`execute` runs R inside a workspace of a sandbox the way that boundary does. Preparing the
fixture and validating the final state are the runner's job, not the transport's.

Every transport runs R through `sandbox.run(ws, argv, stdin=...)`: either a plain argv
(`bash -c R`), or an in-sandbox driver program (`inside/`) that starts the live machinery (a
pty session, a tmux server, an sshd) inside the sandbox, so the sandbox's pid namespace and
timeout confine everything R starts. The one exception is `docker`, whose container is itself
the confinement.

Variants of one mechanism are subclasses that fix a class attribute (the tokenizer, the
interpreter, `send-keys -l`) and register under their own name; `defaults` holds the knobs an
adapter may turn, each documented in `param_help`.

What no boundary can carry is refused before anything runs, by every transport (`refusal`,
`screened`): a reply over `MAX_REPLY_CHARS` (host-side parsing of a reply stays bounded), a
reply that is not Unicode text (a lone surrogate has no UTF-8 encoding), and, where the
mechanism hands R to a process as an argument (argv, tmux's and ssh's client argv, docker
exec), a NUL. Work a transport does on the host before the run (tokenizing, decoding) is
charged to the run: the run gets what is left of the timeout (`remaining`, `within`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from boundary_audit.errors import UsageError
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass


@dataclass(frozen=True)
class TransportResult(ExecResult):
    """An ExecResult plus what the boundary itself said about the reply.

    `exit_code` None with `timed_out` False means the boundary does not report an exit status
    (e.g. tmux completion by `tmux wait`) or never ran the reply (`rejected`).
    """

    rejected: str = ""
    """Why the boundary refused the reply before running it (`unparsable JSON: ...`, a
    tokenizer error, an empty argv); "" when it ran. A rejected run fails with this reason."""
    note: str = ""
    """What the boundary observed that the exit status does not say: the reply ended the
    session, the done marker never came, the status is not observable. "" when nothing."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_problem(text: str) -> str:
    """Where the first lone surrogate of `text` is, or "" when `text` is Unicode text.

    A Python str can hold a lone surrogate (JSON spells one `"\\ud800"`; a decoded pair is
    one code point, so any surrogate left is lone). It has no UTF-8 encoding: no boundary can
    hand it to a process, and no harness could have received it from a model as text.
    """
    found = _SURROGATE.search(text)
    if found is None:
        return ""
    return (
        f"holds a lone surrogate U+{ord(found.group()):04X} at character {found.start()} "
        "(not Unicode text: it has no UTF-8 encoding)"
    )


def nul_problem(text: str) -> str:
    """Where the first NUL of `text` is (an argv or C string ends there), or "" if none."""
    at = text.find("\0")
    return f"holds a NUL character (U+0000) at character {at}" if at >= 0 else ""


MAX_REPLY_CHARS = 1 << 20
"""The longest reply a run accepts (characters). Every transport refuses a longer one: a
harness's own parsing of R (shlex, shell-quote, tree-sitter, bashlex) is reproduced on the
host, and this keeps it bounded in time and memory. A reply over 128 KiB cannot be one
process argument anyway (the kernel's MAX_ARG_STRLEN)."""


def refusal(name: str, reply: str, *, argv: bool) -> str:
    """Why boundary `name` cannot carry `reply`, or "" when it can.

    `argv` says the mechanism hands R (or a string holding it verbatim) to a process as an
    argument, where a NUL cannot go.
    """
    if len(reply) > MAX_REPLY_CHARS:
        return (
            f"{name}: the reply has {len(reply):,} characters, more than a run accepts "
            f"({MAX_REPLY_CHARS:,})"
        )
    problem = surrogate_problem(reply)
    if not problem and argv and (problem := nul_problem(reply)):
        problem += ", which no process argument can carry"
    return f"{name}: the reply {problem}" if problem else ""


def screened(
    name: str,
    replies: Sequence[str],
    run: Callable[[list[str]], list[ExecResult]],
    *,
    argv: bool,
) -> list[ExecResult]:
    """`run(replies)`, unless one of them cannot be carried (see `refusal`).

    Then the replies before it run, it is refused, and those after it are not run (a
    harness that cannot send a command does not send the next ones either).
    """
    for index, reply in enumerate(replies):
        why = refusal(name, reply, argv=argv)
        if why:
            ran = run(list(replies[:index])) if index else []
            rest = [not_run("not run: an earlier reply was refused")] * (len(replies) - index - 1)
            return [*ran, rejected(why), *rest]
    return run(list(replies))


def not_run(why: str) -> TransportResult:
    """The result of a reply that was never sent (`why` says so)."""
    return TransportResult(exit_code=None, stdout=b"", stderr=b"", note=why)


def remaining(sandbox: Sandbox, started: float) -> float:
    """Seconds left of a run that began (host side) at monotonic time `started`."""
    return float(sandbox.limits.timeout_s) - (time.monotonic() - started)


def out_of_time(what: str, started: float) -> TransportResult:
    """The result of a run whose host-side work (`what`) used up its whole timeout."""
    return TransportResult(
        exit_code=None,
        stdout=b"",
        stderr=b"",
        timed_out=True,
        duration_s=time.monotonic() - started,
        note=f"{what} used up the run's timeout; nothing ran",
    )


def within(sandbox: Sandbox, seconds: float) -> Sandbox:
    """`sandbox` as seen by a run that has `seconds` left: its `limits.timeout_s` is that,
    and a `run` without an explicit timeout gets it. Everything else is `sandbox`'s own."""
    return _Budget(sandbox, seconds)


class _Budget(Sandbox):
    """A view of a sandbox with less time per run (see `within`); closing it closes nothing."""

    def __init__(self, inner: Sandbox, seconds: float) -> None:
        super().__init__(dataclasses.replace(inner.limits, timeout_s=seconds))
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.isolated = inner.isolated  # type: ignore[misc]
        self.host_programs = inner.host_programs  # type: ignore[misc]

    def expose(self, paths: Any) -> None:
        self.inner.expose(paths)

    @property
    def exposed(self) -> tuple[str, ...]:
        return self.inner.exposed

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        with self.inner.workspace() as ws:
            yield ws

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        return self.inner.run(
            ws, argv, stdin=stdin, timeout=timeout or self.limits.timeout_s, env=env
        )

    def base_env(self, ws: Workspace) -> dict[str, str]:
        return self.inner.base_env(ws)

    def notices(self) -> tuple[str, ...]:
        return self.inner.notices()

    def describe(self) -> str:
        return self.inner.describe()


def rejected(why: str) -> TransportResult:
    """The result of a reply the boundary refused to run."""
    return TransportResult(exit_code=None, stdout=b"", stderr=why.encode() + b"\n", rejected=why)


def note(result: ExecResult) -> str:
    """`result.note` for a TransportResult, "" for a plain ExecResult."""
    return result.note if isinstance(result, TransportResult) else ""


def rejection(result: ExecResult) -> str:
    """`result.rejected` for a TransportResult, "" for a plain ExecResult."""
    return result.rejected if isinstance(result, TransportResult) else ""


class Transport(ABC):
    """One way a reply reaches a process."""

    name: ClassVar[str]
    """Registry name used on the command line (`--transport NAME`)."""
    boundary_class: ClassVar[BoundaryClass]
    """The taxonomy class this transport reproduces."""
    defaults: ClassVar[Mapping[str, Any]] = {}
    """Parameter names and default values; anything else passed to __init__ is an error."""
    param_help: ClassVar[Mapping[str, str]] = {}
    """One line per parameter in `defaults`: what it changes and which system uses it."""
    stateful: ClassVar[bool] = False
    """True when replies sent with `execute_sequence` share one live session (cwd, variables,
    functions persist); False when each reply starts from scratch."""

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise UsageError(
                f"transport {self.name}: unknown parameter(s) {', '.join(unknown)} (known: {known})"
            )
        for key, value in params.items():
            _check_type(self.name, key, value, self.defaults[key])
        self.params: dict[str, Any] = {**self.defaults, **params}

    @property
    def label(self) -> str:
        """Name plus the parameters that differ from the defaults, e.g. `tmux-keys(width=80)`."""
        diff = {k: v for k, v in self.params.items() if self.defaults.get(k) != v}
        if not diff:
            return self.name
        inner = ",".join(f"{k}={_fmt(v)}" for k, v in sorted(diff.items()))
        return f"{self.name}({inner})"

    def supports(self, sandbox: Sandbox) -> str | None:
        """None if this transport can run in `sandbox`, else the reason it cannot."""
        return None

    @abstractmethod
    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        """Run `reply` through this boundary in `ws`; the final state is left in ws.work."""

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        """Run `replies` one after another in `ws`, one result each.

        Stateful transports send them into one live session; the others run each reply as
        its own fresh process, so only the work dir carries state between them.
        """
        return [self.execute(reply, ws, sandbox) for reply in replies]

    def close(self) -> None:
        """Stop anything shared across runs (a container, an engine client). Idempotent."""


def _check_type(transport: str, key: str, value: Any, default: Any) -> None:
    if default is None:  # NOTE(h6): a None default means "any type"; the transport checks it
        return
    expected: tuple[type, ...]
    if isinstance(default, bool):
        expected = (bool,)
    elif isinstance(default, (int, float)):
        expected = (int, float)
    elif isinstance(default, (list, tuple)):
        expected = (list, tuple)
    else:
        expected = (type(default),)
    if isinstance(value, bool) and bool not in expected:
        ok = False
    else:
        ok = isinstance(value, expected)
    if not ok:
        want = " or ".join(t.__name__ for t in expected)
        raise UsageError(
            f"transport {transport}: parameter {key} must be {want}, got {type(value).__name__}"
        )


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(str(x) for x in v) + "]"
    return str(v)
