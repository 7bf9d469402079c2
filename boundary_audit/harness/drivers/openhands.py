"""OpenHands: openhands-tools 1.58.2's `terminal` tool (tmux backend), driven inside the sandbox.

The in-sandbox script (`inside/drive_openhands.py`) runs R as one `TerminalAction(command=R)`
through the tool's executor (`mode=executor`, the default: the literal-argument check, then a
pane of its tmux pane pool) or through a bare `create_terminal_session(terminal_type="tmux")`
(`mode=session`). Either way the released `TerminalSession.execute` strips R, refuses more than
one top-level statement, doubles the backslash of `\\;` `\\&` `\\|` `\\<` `\\>`, types R with
`tmux send-keys -l` + `Enter` into an interactive bash (256x200 pane, `set +H`, PS1 JSON
marker) and waits for the next marker or `timeout` seconds without new output. The tmux
server runs in the sandbox; the observation is the tool observation's text.

Importing openhands.sdk costs ~13 s of CPU per run (it imports litellm): this is the slowest
driver. Parameters: `timeout` (no_change_timeout_seconds, default 30, OpenHands' own),
`mode` (`executor` or `session`).
"""

from __future__ import annotations

from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.taxonomy import BoundaryClass, Contract

SPEC = HarnessSpec(
    name="openhands",
    title="OpenHands",
    version="1.58.2",
    packages=("openhands-tools==1.58.2", "openhands-sdk==1.58.2"),
    lock="openhands.txt",
    python=PythonRange(minimum=(3, 12), prefer=(3, 12)),
    script="drive_openhands.py",
    imports=(
        "openhands.tools.terminal.impl",
        "openhands.tools.terminal.terminal.factory",
        "libtmux",
    ),
    boundary_class=BoundaryClass.TTY_KEYSTROKES,
    contract=Contract.NATIVE,
    adapter_path="model",
    startup_budget_s=120.0,
    anchors=(
        Anchor(
            "openhands-tools 1.58.2 openhands/tools/terminal/impl.py:541-604",
            "TerminalExecutor.__call__: literal-argument check, pooled pane, execute, close",
        ),
        Anchor(
            "openhands-tools 1.58.2 openhands/tools/terminal/terminal/terminal_session.py:483-784",
            "execute: strip, split_bash_commands refusal, escape_bash_special_chars, send, "
            "PS1-marker / no-change-timeout loop",
        ),
        Anchor(
            "openhands-tools 1.58.2 openhands/tools/terminal/terminal/tmux_terminal.py:212-320",
            "initialize (256x200, set +H, PROMPT_COMMAND PS1 marker) and send_keys(literal=True)",
        ),
        Anchor(
            "openhands-tools 1.58.2 openhands/tools/terminal/definition.py:37-83",
            "looks_like_python_literal_argument and its [Tool-argument error] hint",
        ),
    ),
)


class OpenHandsHarness(HarnessTransport):
    """`harness:openhands`: R as one `terminal` tool call on OpenHands' tmux terminal."""

    name = "harness:openhands"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 30.0, "mode": "executor"}
    param_help = {
        "timeout": "no_change_timeout_seconds: seconds without new output before giving up",
        "mode": "executor (TerminalExecutor, the tool's path) or session (TerminalSession only)",
    }
    choices = {"mode": ("executor", "session")}
    teardown_budget_s = 10.0
