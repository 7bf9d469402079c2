"""`session`: a persistent interactive bash on a pty with a PS1 end marker (SWE-agent/SWE-ReX).

The in-sandbox driver `inside/pty_session.py` spawns `/usr/bin/env bash` on a pty with
`PS1=SHELLPS1PREFIX PS2= PS0=` in its environment and the tty's ECHO off (pexpect's
`echo=False`), types `export PS1='SHELLPS1PREFIX' ; export PS2='' ; export PS0=''`, then for
each reply writes `R + "\\n"`, waits for the marker, writes `"\\necho EXITCODESTART$?EXITCODEEND"`
and a newline, and parses the status: `swerex.runtime.local.BashSession._run_normal`
(swe-rex 1.4.0) without its bashlex rewrite and syntax pre-check, which are the adapter's to
add. Because the shell is interactive and fed through a pty, readline acts on every byte
(tabs complete, `!` expands history), and a command that reads stdin eats what comes next.
Replies sent with `execute_sequence` share the session: cwd, variables and functions persist;
a reply that ends the shell (`exit`, `kill $$`) ends the session, and later replies are not
run.
"""

from __future__ import annotations

from collections.abc import Sequence

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports._driver import host_python_reason, reply_timeout, run_driver
from boundary_audit.transports.interface import Transport, screened

SWE_REX_PS1 = "SHELLPS1PREFIX"


class SessionTransport(Transport):
    """Replies typed into one interactive bash over a pty; completion by PS1 marker."""

    name = "session"
    boundary_class = BoundaryClass.SHELL_SESSION
    stateful = True
    defaults = {
        "shell": ("/usr/bin/env", "bash"),
        "ps1": SWE_REX_PS1,
        "setup": f"export PS1='{SWE_REX_PS1}' ; export PS2='' ; export PS0=''",
        "exit_probe": "\necho EXITCODESTART$?EXITCODEEND",
        "exit_pattern": "EXITCODESTART([0-9]+)EXITCODEEND",
        "echo": False,
        "rows": 24,
        "cols": 80,
        "timeout": 0.0,
    }
    param_help = {
        "shell": "argv of the session's shell (SWE-ReX: /usr/bin/env bash)",
        "ps1": "prompt marker exported as PS1 and awaited after each reply",
        "setup": "one line typed after the first prompt (SWE-ReX: the PS1/PS2/PS0 reset)",
        "exit_probe": "typed after the marker to read $? (SWE-ReX: a blank line, then an echo)",
        "exit_pattern": "regex whose group 1 is the exit status in the probe's output",
        "echo": "leave the tty's ECHO on (pexpect's echo=True)",
        "rows": "terminal rows (pexpect's default 24)",
        "cols": "terminal columns (pexpect's default 80; readline wraps long lines here)",
        "timeout": "seconds per reply; 0 means the sandbox's timeout",
    }

    def supports(self, sandbox: Sandbox) -> str | None:
        return host_python_reason(sandbox)

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        return screened(self.name, replies, lambda rs: self._run(rs, ws, sandbox), argv=False)

    def _run(self, replies: list[str], ws: Workspace, sandbox: Sandbox) -> list[ExecResult]:
        p = self.params
        request = {
            "replies": list(replies),
            "shell": list(p["shell"]),
            "env": {"PS1": p["ps1"], "PS2": "", "PS0": ""},
            "ps1": p["ps1"],
            "setup": p["setup"],
            "exit_probe": p["exit_probe"],
            "exit_pattern": p["exit_pattern"],
            "echo": p["echo"],
            "rows": p["rows"],
            "cols": p["cols"],
        }
        per_reply = reply_timeout(p, sandbox)
        return run_driver("pty_session", request, ws, sandbox, per_reply_s=per_reply)
