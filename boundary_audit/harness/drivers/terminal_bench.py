"""Terminal-Bench: terminal-bench 0.2.18's `TmuxSession` with a local stand-in container.

The in-sandbox script (`inside/drive_terminal_bench.py`) builds the released `TmuxSession`
around `LocalContainer`, whose `exec_run(argv)` runs the argv inside the sandbox (cwd = the
work dir) instead of `docker exec`, so the real `_tmux_start_session`, `_prepare_keys` and
`_send_blocking_keys` drive a local tmux server (private to the run: its socket is under the
sandbox's /tmp). R is sent as Terminus-1 sends a blocking command: keystrokes R + "\\n"
(unless R ends in a newline), `send_keys(keys, block=True, max_timeout_sec=timeout)`, which
becomes `tmux send-keys -t agent R "; tmux wait -S done" Enter` (no `-l`) and
`timeout <T>s tmux wait done`. The observation is the visible pane (`capture_pane()`).

Not reproduced: Terminus-1 sends keystrokes that end in `EOF` or `&` without blocking (it then
screen-scrapes after the model's next call); here every reply is sent blocking, as in the
adapter's `send-keys` path. The container is the sandbox, not a Docker image: the pane's login
shell reads the host's /etc/profile and an empty $HOME.

Parameter: `timeout` (`max_timeout_sec`, default 60 s).
"""

from __future__ import annotations

from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.taxonomy import BoundaryClass, Contract

SPEC = HarnessSpec(
    name="terminal-bench",
    title="Terminal-Bench",
    version="0.2.18",
    packages=("terminal-bench==0.2.18",),
    lock="terminal-bench.txt",
    python=PythonRange(minimum=(3, 12), prefer=(3, 12)),
    script="drive_terminal_bench.py",
    imports=("terminal_bench.terminal.tmux_session", "docker.models.containers"),
    boundary_class=BoundaryClass.TTY_KEYSTROKES,
    contract=Contract.RAW,
    adapter_path="send-keys",
    startup_budget_s=15.0,
    anchors=(
        Anchor(
            "terminal-bench 0.2.18 terminal_bench/terminal/tmux_session.py:90-111",
            "_tmux_start_session (160x40, history 50000, pipe-pane) and _tmux_send_keys (no -l)",
        ),
        Anchor(
            "terminal-bench 0.2.18 terminal_bench/terminal/tmux_session.py:155-222",
            "_prevent_execution, _prepare_keys ('; tmux wait -S done' + Enter), "
            "_send_blocking_keys (timeout Ts tmux wait done -> TimeoutError)",
        ),
        Anchor(
            "terminal-bench 0.2.18 terminal_bench/terminal/docker_compose_manager.py:191-211",
            "copy_to_container: exec_run('mkdir -p DIR') (a string) and put_archive",
        ),
        Anchor(
            "terminal-bench 0.2.18 terminal_bench/agents/terminus_1.py:156-187",
            "Terminus-1 sends command.keystrokes with block=is_blocking (not for EOF/&)",
        ),
    ),
)


class TerminalBenchHarness(HarnessTransport):
    """`harness:terminal-bench`: R typed by Terminal-Bench's TmuxSession as one blocking command."""

    name = "harness:terminal-bench"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 60.0}
    param_help = {"timeout": "TmuxSession.send_keys max_timeout_sec (tmux wait done)"}

    def preflight_reply(self) -> str:
        """The observation is the screen: an empty prompt leaves only the word on it."""
        return "PS1=; clear; echo boundary-audit-preflight"
