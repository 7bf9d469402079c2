"""The JSON tool-call boundary shared by `json-naive` and `json-correct`.

A harness embeds R as the `command` argument of a tool call, decodes the document with
`json.loads`, and runs the decoded string as `[shell, flags, command]`. With a serializer
(`json.dumps`) the round trip is lossless (the study's Table 22: correct-serializer damage 0).
With string concatenation (`'{"command": "' + R + '"}'`) a double quote ends the string
early, a backslash starts an escape (`\\n` becomes a newline, `\\s` is invalid), and a raw
newline or tab is an invalid control character: the document then does not parse and the
run fails with `unparsable JSON`, or it parses to a different command, which then runs.
Decoding is host-side work charged to the run's timeout; a decoded command that no argv can
carry (a NUL, or a lone surrogate that a naive document's `\\ud800` spells) is refused.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import (
    Transport,
    nul_problem,
    out_of_time,
    refusal,
    rejected,
    remaining,
    surrogate_problem,
)


def naive_document(reply: str, key: str) -> str:
    """R pasted between the quotes of a JSON string by concatenation."""
    return '{"' + key + '": "' + reply + '"}'


def correct_document(reply: str, key: str) -> str:
    """R serialized with `json.dumps`."""
    return json.dumps({key: reply})


def decode_command(document: str, key: str, strict: bool) -> str:
    """The `key` string of the decoded document; ValueError says why there is none."""
    try:
        value: Any = json.loads(document, strict=strict)
    except json.JSONDecodeError as exc:
        raise ValueError(f"unparsable JSON: {exc}") from None
    if not isinstance(value, dict) or key not in value:
        raise ValueError(f"tool call has no {key!r} argument")
    command = value[key]
    if not isinstance(command, str):
        raise ValueError(f"tool call argument {key!r} is not a string")
    return command


class JsonCallTransport(Transport):
    """Embed R in a JSON tool call, decode it, run the decoded command raw."""

    name = "json"
    boundary_class = BoundaryClass.SERIALIZED
    naive: ClassVar[bool] = False
    defaults = {"key": "command", "strict": True, "shell": "bash", "flags": "-c"}
    param_help = {
        "key": "name of the tool-call argument that carries R",
        "strict": "json.loads strict mode (False accepts raw control characters in strings)",
        "shell": "shell that runs the decoded command",
        "flags": "its flags, space-separated (Codex: '-lc')",
    }

    def document(self, reply: str) -> str:
        """The tool-call JSON this transport builds for `reply`."""
        build = naive_document if self.naive else correct_document
        return build(reply, str(self.params["key"]))

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        started = time.monotonic()
        why = refusal(self.name, reply, argv=False)
        if why:
            return rejected(why)
        try:
            command = decode_command(
                self.document(reply), str(self.params["key"]), bool(self.params["strict"])
            )
        except ValueError as exc:
            return rejected(str(exc))
        problem = surrogate_problem(command)
        if not problem and (problem := nul_problem(command)):
            problem += ", which no process argument can carry"
        if problem:
            return rejected(f"{self.name}: the decoded command {problem}")
        left = remaining(sandbox, started)
        if left <= 0:
            return out_of_time(f"{self.name}: decoding the tool call", started)
        argv = [self.params["shell"], *str(self.params["flags"]).split(), command]
        return sandbox.run(ws, argv, timeout=left)
