"""`session-pipe`: a persistent non-interactive bash fed through a pipe, with a done marker.

LangChain's `ShellToolMiddleware` (langchain 1.5.2, `ShellSession.execute`): one long-lived
`/bin/bash` with stdin, stdout and stderr on pipes; each reply is written to its stdin
(newline-terminated), followed by `printf '__LC_SHELL_DONE__<uuid> %s\\n' $?`; completion is
a stdout line that *starts with* the marker, read line by line. No tty, no readline, no
history expansion. The boundary's own hazards follow: output without a trailing newline glues
the marker to it (the session then times out), a command that reads stdin swallows the
marker line, and `exit` ends the session. The in-sandbox half is `inside/pipe_session.py`.

`env` reproduces the middleware's environment handling: None inherits the sandbox's
scrubbed environment; a mapping *replaces* it (LangChain's default resources pass `{}`, an
empty environment with no PATH or HOME).
"""

from __future__ import annotations

from collections.abc import Sequence

from boundary_audit.errors import UsageError
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports._driver import host_python_reason, reply_timeout, run_driver
from boundary_audit.transports.interface import Transport, screened


class SessionPipeTransport(Transport):
    """Replies written into one bash's stdin pipe; completion by a line-start done marker."""

    name = "session-pipe"
    boundary_class = BoundaryClass.SHELL_SESSION
    stateful = True
    defaults = {
        "shell": ("/bin/bash",),
        "env": None,
        "marker_prefix": "__LC_SHELL_DONE__",
        "timeout": 0.0,
    }
    param_help = {
        "shell": "argv of the session's shell (LangChain: /bin/bash)",
        "env": "None inherits the sandbox environment; a mapping replaces it ({} is LangChain's)",
        "marker_prefix": "done-marker prefix; a random hex id is appended per reply",
        "timeout": "seconds per reply; 0 means the sandbox's timeout",
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        env = self.params["env"]
        if env is not None and not (
            isinstance(env, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        ):
            raise UsageError("transport session-pipe: env must be None or a str->str mapping")

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
            "env": p["env"],
            "marker_prefix": p["marker_prefix"],
        }
        per_reply = reply_timeout(p, sandbox)
        return run_driver("pipe_session", request, ws, sandbox, per_reply_s=per_reply)
