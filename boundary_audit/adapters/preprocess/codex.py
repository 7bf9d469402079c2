"""Codex (openai/codex): the shell-snapshot wrapper around `[shell, "-lc", R]`.

`maybe_wrap_shell_lc_with_snapshot` (codex-rs/core/src/tools/runtimes/mod.rs, read at
03f0ba02; systems.md section 1.1) rewrites an argv `[shell, "-lc", R]` into
`[session_shell, "-c", "if . 'SNAP' >/dev/null 2>&1; then :; fi\\n\\nexec 'SHELL' -c 'R'"]`
when a shell snapshot exists, quoting each piece with `shell_single_quote` (`'` becomes
`'"'"'`). The outer shell parses a script in which R sits inside single quotes, then `exec`s
`SHELL -c R`: a lossless quoting round trip, but one more process and the snapshot sourced
first. `codex.snapshot-wrapper` builds that script; the adapter runs it with `raw(flags=-c)`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged


def shell_single_quote(text: str) -> str:
    """Codex's `shell_single_quote`: `'...'` with each `'` written `'"'"'`."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def snapshot_script(reply: str, snapshot: str, shell: str) -> str:
    """The `-c` script the wrapper hands to the session shell."""
    return (
        f"if . {shell_single_quote(snapshot)} >/dev/null 2>&1; then :; fi\n\n"
        f"exec {shell_single_quote(shell)} -c {shell_single_quote(reply)}"
    )


class SnapshotWrapper(Preprocessor):
    """R wrapped in the snapshot script (run afterwards as `bash -c SCRIPT`)."""

    name = "codex.snapshot-wrapper"
    cite = "codex-rs/core/src/tools/runtimes/mod.rs (maybe_wrap_shell_lc_with_snapshot)@03f0ba02"
    summary = "R single-quoted into `if . SNAP; then :; fi; exec SHELL -c 'R'`"
    defaults: ClassVar[dict[str, Any]] = {"snapshot": "/dev/null", "shell": "bash"}

    def apply(self, text: str, ctx: Context | None) -> Staged:
        return Staged.one(
            snapshot_script(text, self.params["snapshot"], self.params["shell"]),
            "wrapped in the snapshot script",
        )
