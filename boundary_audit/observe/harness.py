"""A black-box harness as a transport: each task reply is one mock conversation through it.

`HarnessCommand` is what the user gave `boundary-audit observe`: the harness's argv, the host
paths it needs inside (`expose`), the config files that point it at the model
(`templates`), the answer shape, extra variables. `ObservedHarness(command)` is a Transport
whose `execute_sequence(replies, ws, sandbox)` runs the harness once in `ws` (the task's
fixture is already there, its work dir the harness's cwd), behind the in-sandbox model
endpoint (`netrelay.py`, `endpoint.ModelEndpoint`), with `replies` as the conversation: the
first request gets the reply, the next one (carrying its output) the task's follow-up if it
has one, then the final text. It is not traced: damage runs measure what the harness does to
R, which the observation already explained.

With a plain reply source (`source="env"`, `file`, `stdin`) the replies are delivered as in
an observation and the harness's stdout is the first reply's.

Each reply's result is what the harness reported back to its model for it (the tool output,
or the next user message of a raw harness): that is the stdout the validators see, as for the
real-harness drivers. The harness does not report the command's exit status in a form every
harness shares, so `exit_code` is None. A reply the harness never asked for (it stopped, or
asked fewer times) is rejected with that reason: the run fails. A harness that made no model
request at all could not be driven: TransportError, the run's `error: ...`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from boundary_audit.errors import TransportError, UsageError
from boundary_audit.observe.endpoint import PORT, ConfigTemplate, ModelEndpoint, render_argv
from boundary_audit.observe.record import NETRELAY
from boundary_audit.observe.replies import SOURCES
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport, TransportResult, screened

INTERPRETERS = re.compile(r"^(?:python[0-9.]*|node|nodejs|bun|deno|ruby|perl)$")
TIMEOUT_S = 60.0
"""Seconds one harness run (one conversation) may take by default."""


@dataclass(frozen=True)
class HarnessCommand:
    """An observed harness, as given on the command line."""

    argv: tuple[str, ...]
    expose: tuple[Path, ...] = ()
    templates: tuple[ConfigTemplate, ...] = ()
    shape: str = "auto"
    env: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    """What reports call it (default: the program's base name)."""

    @property
    def runnable(self) -> tuple[str, ...]:
        """The argv with its `{{home}}`, `{{work}}`, `{{base_url}}`, `{{model}}` filled."""
        return render_argv(self.argv)

    @property
    def label(self) -> str:
        """The harness's name in reports: `name`, else the program's base name (the script's,
        for an interpreter running one: `node cli.js` is `cli.js`)."""
        if self.name:
            return self.name
        program = Path(self.argv[0]).name
        if INTERPRETERS.match(program) and len(self.argv) > 1 and not self.argv[1].startswith("-"):
            return Path(self.argv[1]).name
        return program


class ObservedHarness(Transport):
    """`observed:<name>`: each reply (and its follow-up) as one conversation of the harness."""

    name = "observed"
    boundary_class: ClassVar[BoundaryClass] = BoundaryClass.SHELL_STRING
    """Replaced per observation by `for_class` (what the observation derived)."""
    stateful = True

    def __init__(
        self, command: HarnessCommand, *, timeout: float = TIMEOUT_S, source: str = "mock"
    ) -> None:
        super().__init__()
        if source not in SOURCES:
            raise UsageError(f"reply source {source!r}: one of {', '.join(SOURCES)}")
        self.command = command
        self.timeout = timeout
        self.source = source
        """`mock` (the model), or a plain source (env, file, stdin: the harness's stdout is
        the first reply's, the others get none)."""

    @staticmethod
    def for_class(
        command: HarnessCommand,
        cls: BoundaryClass,
        *,
        timeout: float = TIMEOUT_S,
        source: str = "mock",
    ) -> ObservedHarness:
        """An instance whose `boundary_class` is the observed one."""
        kind: type[ObservedHarness] = type(
            "ObservedHarness", (ObservedHarness,), {"boundary_class": cls}
        )
        return kind(command, timeout=timeout, source=source)

    @property
    def label(self) -> str:
        return f"observed:{self.command.label}"

    def supports(self, sandbox: Sandbox) -> str | None:
        if not sandbox.isolated or not sandbox.host_programs:
            return f"an observed harness runs in an isolating host sandbox, not {sandbox.name}"
        return None

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        return screened(self.label, replies, lambda rs: self._run(rs, ws, sandbox), argv=False)

    def _plain(self, replies: list[str], ws: Workspace, sandbox: Sandbox) -> list[ExecResult]:
        cmd = self.command
        with SOURCES[self.source]().deliver(replies, ws) as d:
            res = sandbox.run(
                ws, cmd.runnable, stdin=d.stdin, env={**d.env, **cmd.env}, timeout=self.timeout
            )
        return [
            TransportResult(
                exit_code=None,
                stdout=res.stdout if i == 0 else b"",
                stderr=res.stderr if i == 0 else b"",
                timed_out=res.timed_out,
                truncated=res.truncated,
                duration_s=res.duration_s if i == 0 else 0.0,
                escaped_killed=res.escaped_killed if i == 0 else 0,
            )
            for i in range(len(replies))
        ]

    def _run(self, replies: list[str], ws: Workspace, sandbox: Sandbox) -> list[ExecResult]:
        cmd = self.command
        sandbox.expose(cmd.expose)
        if self.source != "mock":
            return self._plain(replies, ws, sandbox)
        endpoint = ModelEndpoint(replies, ws, shape=cmd.shape, templates=cmd.templates)
        with endpoint:
            argv = [
                sys.executable, "-E", "-s", "-S", str(NETRELAY), "-", endpoint.inner_socket,
                str(PORT), "--", *cmd.runnable,
            ]  # fmt: skip
            res = sandbox.run(ws, argv, env={**endpoint.env, **cmd.env}, timeout=self.timeout)
        ex = endpoint.exchange
        if not ex.bodies:
            tail = res.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TransportError(
                f"{self.label}: the harness made no model request (exit {res.exit_code}"
                + (f": {tail[-1][:200]}" if tail else "")
                + ")"
            )
        results: list[ExecResult] = []
        for i, output in enumerate(ex.outputs):
            asked = any(a.reply == i for a in ex.answers)
            never = f"{self.label}: the harness never asked its model for reply {i + 1}"
            note = "" if output is not None else "the harness never showed its model the output"
            first = i == 0
            results.append(
                TransportResult(
                    exit_code=None,
                    stdout=(output or "").encode("utf-8", "surrogateescape"),
                    stderr=res.stderr if first else b"",
                    timed_out=res.timed_out,
                    truncated=res.truncated,
                    duration_s=res.duration_s if first else 0.0,
                    escaped_killed=res.escaped_killed if first else 0,
                    rejected="" if asked else never,
                    note=note if asked else never,
                )
            )
        return results
