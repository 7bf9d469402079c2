"""`raw`: the reply as one `bash -c R` argv, the reference path every damage is measured against."""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport


class RawTransport(Transport):
    """`[shell, *flags, R]` with stdin at /dev/null (Codex: `bash -lc R`)."""

    name = "raw"
    boundary_class = BoundaryClass.SHELL_STRING
    defaults = {"shell": "bash", "flags": "-c"}

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        argv = [self.params["shell"], *str(self.params["flags"]).split(), reply]
        return sandbox.run(ws, argv)
