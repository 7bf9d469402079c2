"""SWE-agent (3ea751c) and SWE-ReX (swe-rex 1.4.0): what happens to an action before the pty.

Three steps, in the order the code runs them (systems.md section 2):

1. `swe-agent.handle-action` - `Agent.handle_action` (sweagent/agent/agents.py:936-967@3ea751c)
   with `ToolHandler.should_block_action` (sweagent/tools/tools.py:353-368@3ea751c) and the
   default filter lists (tools.py:37-65@3ea751c): blocked prefixes and standalone commands are
   refused, an action that is exactly `exit` after stripping ends the run, anything else is
   stripped (`guard_multiline_input` is the identity for the default tool bundles, which
   declare no multi-line command).
2. `swe-rex.syntax-check` - `_check_bash_command` (swerex/runtime/local.py:100-114, swe-rex
   1.4.0): `/usr/bin/env bash -n` fed R through a quoted here-document by `/bin/sh -c`; a
   non-zero status refuses R (`BashIncorrectSyntaxError`). It runs in the sandbox because it
   is a real program: a line of R equal to the delimiter ends the here-document, and what
   follows is run by `/bin/sh`.
3. `swe-rex.bashlex-split` - `_split_bash_command` + `BashSession._run_normal`
   (swerex/runtime/local.py:58-92 and 273-345, swe-rex 1.4.0): R is parsed with bashlex and
   its top-level commands re-joined with `" ; "`; when bashlex raises (it does on a quoted
   here-document, `$((...))`, `[[`, arrays), R is sent unchanged plus a sentinel line whose
   output the harness then strips. bashlex is slower than linear on long input, so a text
   over `BASHLEX_IN_PROCESS_CHARS` is split in a child Python the run's deadline kills
   (`_bashlex_split.py`); one that cannot finish in time leaves the reply timed out.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, ClassVar

from boundary_audit import _subprocess
from boundary_audit.adapters.preprocess._bashlex_split import split_commands
from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged
from boundary_audit.errors import AdapterError, TransportError

BLOCKLIST = (
    "vim",
    "vi",
    "emacs",
    "nano",
    "nohup",
    "gdb",
    "less",
    "tail -f",
    "python -m venv",
    "make",
)
"""Prefixes SWE-agent's default filter refuses (tools.py:37-48@3ea751c)."""
BLOCKLIST_STANDALONE = (
    "python",
    "python3",
    "ipython",
    "bash",
    "sh",
    "/bin/bash",
    "/bin/sh",
    "nohup",
    "vi",
    "vim",
    "emacs",
    "nano",
    "su",
)
"""Whole actions the default filter refuses (tools.py:51-65@3ea751c)."""
BLOCK_UNLESS_REGEX = {
    "radare2": r"\b(?:radare2)\b.*\s+-c\s+.*",
    "r2": r"\b(?:radare2)\b.*\s+-c\s+.*",
}
"""First words refused unless the action matches the regex (tools.py:68-71@3ea751c)."""
HEREDOC_DELIMITER = "SOUNIQUEEOF"
SENTINEL = "UNIQUESTRING29234"
FALLBACK_SUFFIX = f"\n TMPEXITCODE=$? ; sleep 0.1; echo -n '{SENTINEL}' ; (exit $TMPEXITCODE)"
BASHLEX_IN_PROCESS_CHARS = 16 * 1024
"""Texts up to this length are split in process (bashlex takes well under a second on them);
longer ones in a child Python that the run's deadline can kill."""
BASHLEX_CHILD = Path(__file__).with_name("_bashlex_split.py")


def should_block(action: str) -> bool:
    """`ToolHandler.should_block_action` with the default filter lists."""
    action = action.strip()
    if not action:
        return False
    if any(action.startswith(prefix) for prefix in BLOCKLIST):
        return True
    if action in BLOCKLIST_STANDALONE:
        return True
    first = action.split()[0]
    pattern = BLOCK_UNLESS_REGEX.get(first)
    return pattern is not None and not re.search(pattern, action)


class HandleAction(Preprocessor):
    """Blocklist, `exit` interception and strip, as `Agent.handle_action` does."""

    name = "swe-agent.handle-action"
    cite = "sweagent/agent/agents.py:936-967@3ea751c, sweagent/tools/tools.py:37-71,353-368@3ea751c"
    summary = "strip; refuse blocklisted commands; an exact `exit` ends the run"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        if should_block(text):
            shown = text.strip().splitlines()[0][:60]
            return Staged.refuse(
                f"blocked: Operation '{shown}' is not supported by this environment"
            )
        if text.strip() == "exit":
            return Staged.end("the `exit` action ends the agent; it is never executed")
        return Staged.one(text.strip())


class SyntaxCheck(Preprocessor):
    """`bash -n` through a `/bin/sh` here-document; a failing check refuses R."""

    name = "swe-rex.syntax-check"
    cite = "swe-rex==1.4.0 swerex/runtime/local.py:100-114"
    summary = "`/usr/bin/env bash -n << 'SOUNIQUEEOF'` run by /bin/sh; failure refuses R"
    needs_sandbox = True
    defaults: ClassVar[dict[str, Any]] = {"shell": "/bin/sh"}

    def command(self, text: str) -> str:
        """The string SWE-ReX hands to `subprocess.run(..., shell=True)`."""
        return f"/usr/bin/env bash -n << '{HEREDOC_DELIMITER}'\n{text}\n{HEREDOC_DELIMITER}"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        if ctx is None:
            raise AdapterError(f"pre-processor {self.name} needs a sandbox to run bash -n")
        if "\0" in text:  # what subprocess.run(shell=True) raises before any program starts
            return Staged.refuse("ValueError: embedded null byte")
        left = ctx.left()
        if left is not None and left <= 0:
            return Staged.late("no time left for `bash -n`")
        res = ctx.sandbox.run(
            ctx.ws, [self.params["shell"], "-c", self.command(text)], timeout=left
        )
        if res.timed_out:
            return Staged.late("`bash -n` did not finish within the run's timeout")
        if res.exit_code == 0:
            return Staged.one(text)
        err = [ln for ln in res.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        detail = err[-1].strip() if err else f"exit {res.exit_code}"
        return Staged.refuse(f"BashIncorrectSyntaxError: {detail}")


class BashlexSplit(Preprocessor):
    """Re-join bashlex's top-level commands with `" ; "`, or append the fallback sentinel."""

    name = "swe-rex.bashlex-split"
    cite = "swe-rex==1.4.0 swerex/runtime/local.py:58-92,273-345"
    summary = "bashlex split, re-joined with ' ; '; on a bashlex error a sentinel line is appended"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        if len(text) > BASHLEX_IN_PROCESS_CHARS:
            outcome = split_in_child(text, ctx.left() if ctx is not None else None)
            if outcome is None:
                return Staged.late("bashlex did not finish within the run's timeout")
        else:
            try:
                outcome = split_commands(text)
            except Exception as exc:  # noqa: BLE001 - SWE-ReX catches everything bashlex raises
                outcome = type(exc).__name__
        if isinstance(outcome, str):
            why = f"bashlex failed ({outcome}): sentinel appended"
            return Staged.one(text + FALLBACK_SUFFIX, why)
        commands = outcome
        joined = " ; ".join(commands)
        return Staged.one(joined, *(("rewritten by bashlex",) if joined != text else ()))

    def clean_stdout(self, stdout: bytes) -> bytes:
        """SWE-ReX removes the sentinel from the observation."""
        return stdout.replace(SENTINEL.encode(), b"")


def split_in_child(text: str, timeout: float | None) -> list[str] | str | None:
    """`split_commands(text)` in a child Python: the commands, the name of the exception
    bashlex raised, or None when the child did not finish within `timeout` seconds."""
    if timeout is not None and timeout <= 0:
        return None
    res = _subprocess.run(
        [sys.executable, "-I", str(BASHLEX_CHILD)],
        input=text.encode("utf-8"),
        timeout=timeout,
        output_cap=8 * len(text) + 4096,
    )
    if res.timed_out:
        return None
    try:
        answer = json.loads(res.stdout.decode("utf-8"))
        if "error" in answer:
            return str(answer["error"])
        commands = answer["commands"]
        if not all(isinstance(c, str) for c in commands):
            raise TypeError("commands")
        return list(commands)
    except (ValueError, KeyError, TypeError):
        detail = res.stderr_line() or f"exit {res.returncode}"
        raise TransportError(f"bashlex child failed: {detail}") from None
