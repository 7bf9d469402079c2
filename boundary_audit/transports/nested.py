"""`nested`: the study's deliberately unescaped added parser, R between double quotes."""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport, refusal, rejected


def nested_command(reply: str) -> str:
    """The outer command line: `bash -c "R"`, with R pasted in unescaped."""
    return f'bash -c "{reply}"'


class NestedTransport(Transport):
    """`bash -c 'bash -c "R"'` in effect: a second bash parses R after the first one has."""

    name = "nested"
    boundary_class = BoundaryClass.NESTED_STRING

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=True)
        if why:
            return rejected(why)
        return sandbox.run(ws, ["bash", "-c", nested_command(reply)])
