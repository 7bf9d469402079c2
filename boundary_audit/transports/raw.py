"""`raw`: R as one `[shell, flags, R]` argv, the reference path every damage is measured against.

One shell parse, stdin at /dev/null: Codex's `shell_command` tool (`["bash", "-lc", R]`,
`flags="-lc"`), and any `subprocess.run(R, shell=True)` (`shell="sh"`).
"""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BASELINE, BoundaryClass
from boundary_audit.transports.interface import Transport, refusal, rejected


class RawTransport(Transport):
    """`[shell, *flags, R]` with stdin at /dev/null (Codex: `bash -lc R`)."""

    name = BASELINE
    boundary_class = BoundaryClass.SHELL_STRING
    defaults = {"shell": "bash", "flags": "-c"}
    param_help = {
        "shell": "the shell that parses R (sh for Python's shell=True)",
        "flags": "its flags, space-separated, ending in -c (Codex: '-lc')",
    }

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=True)
        if why:
            return rejected(why)
        argv = [self.params["shell"], *str(self.params["flags"]).split(), reply]
        return sandbox.run(ws, argv)
