"""`nested-escaped`: the nested wrapper with `shlex.quote` at the interpolation point.

Must reproduce the `raw` outcome task by task (the study's first invariant).
"""

from __future__ import annotations

import shlex

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports.interface import Transport, refusal, rejected


class NestedEscapedTransport(Transport):
    """`bash -c 'bash -c <shlex.quote(R)>'`: two parses, the first one lossless."""

    name = "nested-escaped"
    boundary_class = BoundaryClass.NESTED_STRING

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=True)
        if why:
            return rejected(why)
        return sandbox.run(ws, ["bash", "-c", f"bash -c {shlex.quote(reply)}"])
