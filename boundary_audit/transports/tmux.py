"""`tmux-keys` / `tmux-literal`: replies typed into an interactive bash by a real tmux server.

The in-sandbox driver `inside/tmux_keys.py` starts a tmux server on a private socket in the
sandbox's tmp dir (`tmux -S`), a detached session whose pane runs an interactive bash, and
types each reply with `send-keys`, the way Terminal-Bench's `TmuxSession` (terminal-bench
0.2.18) does: keys `[R, "Enter"]` become `[R, "; tmux wait -S done", "Enter"]` and the driver
blocks in `tmux wait done`. Two registered variants:

- `tmux-keys`: one `send-keys -t S R "; tmux wait -S done" Enter` (Terminal-Bench). tmux parses
  that argv as a command sequence (an argument ending in `;` ends the command there, `\\;`
  becomes `;`) and looks each argument up as a key name first (`Enter`, `C-a`, `^M`...).
- `tmux-literal`: each text key with `send-keys -l`, each Enter with its own `send-keys`
  (OpenHands' libtmux `send_keys(text, literal=True)` + `Enter`); the `;` rule still applies.

Then the pty line discipline and readline act on every byte (tabs complete, `!` expands
history unless a setup line says `set +H`), and stdin of every command is the pane. With
`completion="marker"` the driver instead sets `PS1` to a marker carrying `$?` and waits for a
new marker in `capture-pane` (OpenHands' PS1 JSON idea), which also yields the exit status.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import ClassVar

from boundary_audit.errors import UsageError
from boundary_audit.sandbox.interface import BASE_PATH, ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports._driver import host_python_reason, reply_timeout, run_driver
from boundary_audit.transports.interface import Transport, screened


class TmuxTransport(Transport):
    """Replies typed with `tmux send-keys` into a pane's interactive bash."""

    name = "tmux"
    boundary_class = BoundaryClass.TTY_KEYSTROKES
    stateful = True
    literal: ClassVar[bool] = False
    """True: `send-keys -l` per text key and a separate `send-keys Enter`."""
    defaults = {
        "shell": ("bash",),
        "width": 160,
        "height": 40,
        "history_limit": 50000,
        "completion": "wait",
        "setup": (),
        "ps1": "__BA_PS1__$?__",
        "ps1_pattern": r"__BA_PS1__(\d+)__",
        "append_enter": True,
        "timeout": 0.0,
    }
    param_help = {
        "shell": "argv the pane runs; () for tmux's default, a login shell (Terminal-Bench)",
        "width": "pane columns (Terminal-Bench 160; OpenHands 256)",
        "height": "pane rows (Terminal-Bench 40)",
        "history_limit": "scrollback kept by tmux (Terminal-Bench 50000)",
        "completion": "'wait': append '; tmux wait -S done' and block; 'marker': PS1 marker",
        "setup": "lines typed before the first reply (OpenHands: 'set +H', its PS1 settings)",
        "ps1": "prompt exported in marker mode; must expand to a ps1_pattern match",
        "ps1_pattern": "regex whose group 1 is the exit status shown in the prompt",
        "append_enter": "send Enter after the reply (Terminal-Bench's [R, 'Enter'])",
        "timeout": "seconds per reply; 0 means the sandbox's timeout",
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.params["completion"] not in ("wait", "marker"):
            raise UsageError(f"transport {self.name}: completion must be 'wait' or 'marker'")

    def supports(self, sandbox: Sandbox) -> str | None:
        if shutil.which("tmux", path=BASE_PATH) is None:
            return "needs tmux (apt-get install tmux)"
        return host_python_reason(sandbox)

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        return screened(self.name, replies, lambda rs: self._run(rs, ws, sandbox), argv=True)

    def _run(self, replies: list[str], ws: Workspace, sandbox: Sandbox) -> list[ExecResult]:
        p = self.params
        request = {
            "replies": list(replies),
            "literal": self.literal,
            "completion": p["completion"],
            "shell": list(p["shell"]),
            "width": p["width"],
            "height": p["height"],
            "history_limit": p["history_limit"],
            "setup": list(p["setup"]),
            "ps1": p["ps1"],
            "ps1_pattern": p["ps1_pattern"],
            "append_enter": p["append_enter"],
            "startup_timeout": 5.0,
        }
        per_reply = reply_timeout(p, sandbox)
        return run_driver("tmux_keys", request, ws, sandbox, per_reply_s=per_reply)


class TmuxKeysTransport(TmuxTransport):
    """`send-keys` without `-l`: key-name lookup on every argument (Terminal-Bench)."""

    name = "tmux-keys"
    literal = False


class TmuxLiteralTransport(TmuxTransport):
    """`send-keys -l` for text, a separate `send-keys Enter` (OpenHands)."""

    name = "tmux-literal"
    literal = True
