"""Terminal-Bench (terminal-bench 0.2.18): the keystrokes an agent hands to `TmuxSession`.

The model writes JSON (or XML) whose `keystrokes` strings end in a newline when they are meant
to run; Terminus-1 sends each with `TmuxSession.send_keys(keystrokes, block=True)`
(terminal_bench/agents/terminus_1.py:156-187). A task reply R is a command, so
`terminal-bench.keystrokes` writes the keystrokes the model would: R plus one newline unless it
already ends in one. The rest is the `tmux-keys` transport, which reproduces `_prepare_keys`
(terminal_bench/terminal/tmux_session.py:165-205: trailing Enter keys and newlines stripped,
`"; tmux wait -S done"` and `Enter` appended) and `_send_blocking_keys` (207-222: one
`tmux send-keys` without `-l`, then `tmux wait done`).

Not reproduced: Terminus-1 sends keystrokes that end in `EOF` or `&` without blocking (it
sleeps and screen-scrapes); this path always measures the blocking mode `_prepare_keys` serves.
"""

from __future__ import annotations

from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged


class Keystrokes(Preprocessor):
    """R as the model's `keystrokes` string: newline-terminated so that it executes."""

    name = "terminal-bench.keystrokes"
    cite = "terminal-bench==0.2.18 terminal_bench/agents/terminus_1.py:156-187"
    summary = "R typed as keystrokes ending in a newline (Terminus' JSON `keystrokes`)"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        if text.endswith(("\n", "\r")):
            return Staged.one(text)
        return Staged.one(text + "\n")
