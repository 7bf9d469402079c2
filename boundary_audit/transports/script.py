"""`script-bash` / `script-sh`: R written verbatim to a temp file, run as `[interpreter, path]`.

AutoGen's code executors (autogen-ext 0.7.5) write a fenced `sh` block to
`tmp_code_<sha256>.<lang>` and run `[lang_to_cmd(lang), file]` (local) or
`["timeout", "60", "sh", file]` (Docker), with no shell parsing the argv. The file is read by
one shell parse, so there is no quoting damage (the study's "temporary script" bypass); the
only difference between the variants is the interpreter (`sh` is dash on Debian: no `[[`,
no brace expansion, no `$'...'`). The file goes to the workspace's tmp dir, outside the work
dir, so it never counts as a collateral file. Stdin is /dev/null.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath
from typing import ClassVar

from boundary_audit.sandbox import layout
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport, refusal, rejected


class ScriptTransport(Transport):
    """Write R to a file, run it with the interpreter."""

    name = "script"
    boundary_class = BoundaryClass.SCRIPT_FILE
    interpreter: ClassVar[str] = "bash"
    extension: ClassVar[str] = "bash"
    defaults = {"prefix": ""}
    param_help = {
        "prefix": "argv words before the interpreter, space-separated (AutoGen Docker: "
        "'timeout 60')",
    }

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=False)
        if why:
            return rejected(why)
        data = reply.encode("utf-8")
        name = f"tmp_code_{hashlib.sha256(data).hexdigest()}.{self.extension}"
        layout.write_new(ws, name, data)  # never through a link a reply planted under the name
        inner = str(PurePosixPath(ws.inner_tmp) / name)
        return sandbox.run(ws, [*str(self.params["prefix"]).split(), self.interpreter, inner])


class ScriptBashTransport(ScriptTransport):
    """`bash FILE`."""

    name = "script-bash"
    interpreter = "bash"
    extension = "bash"


class ScriptShTransport(ScriptTransport):
    """`sh FILE` (dash), AutoGen's ```sh blocks."""

    name = "script-sh"
    interpreter = "sh"
    extension = "sh"
