"""`stdin`: R written to the standard input of a one-shot shell (`bash`, or `bash -s`).

The shell reads its script from the pipe as it goes, so a command in R that reads stdin
(`cat`, `read`, `ssh`, `docker exec -i`...) consumes the rest of R, which then never runs.
One shell parse; no tty. The pipe is closed after R, so the shell ends at EOF.
"""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport, refusal, rejected


class StdinTransport(Transport):
    """`subprocess.run([shell, *flags], input=R)`."""

    name = "stdin"
    boundary_class = BoundaryClass.SHELL_STDIN
    defaults = {"shell": "bash", "flags": "", "append_newline": False}
    param_help = {
        "shell": "the one-shot shell that reads R from stdin",
        "flags": "its flags, space-separated (e.g. '-s', '-e')",
        "append_newline": "add a newline when R lacks one (some harnesses do)",
    }

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=False)
        if why:
            return rejected(why)
        data = reply
        if self.params["append_newline"] and not data.endswith("\n"):
            data += "\n"
        argv = [self.params["shell"], *str(self.params["flags"]).split()]
        return sandbox.run(ws, argv, stdin=data.encode("utf-8"))
