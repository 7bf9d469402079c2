"""SWE-agent 3ea751c's handling of a bash action before it reaches swe-rex, reimplemented.

Stdlib only, so it runs both in the swe-agent harness venv (imported by drive_swe_agent.py) and
in boundary-audit's tests. Reimplemented from reading SWE-agent/SWE-agent@3ea751c, not copied:

- `is_blocked`: `ToolHandler.should_block_action` (`sweagent/tools/tools.py:353-367`) with the
  default `ToolFilterConfig` lists (tools.py:37-71);
- `guard_multiline_input`: `_guard_multiline_input` (`sweagent/tools/utils.py:8-36`) with the
  patterns of `ToolHandler._get_first_multiline_cmd` / `_get_command_patterns`
  (tools.py:390-430) for the default tool bundles, where no command has an `end_name`;
- `preprocess`: the parser's `.strip()` (`sweagent/tools/parsing.py:439`) and the order of
  checks in `DefaultAgent.handle_action` (`sweagent/agent/agents.py:945-960`).
"""

from __future__ import annotations

import re

# sweagent/tools/tools.py:37-48, 51-65, 68-71 (ToolFilterConfig defaults)
BLOCK_PREFIXES = (
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
BLOCK_EXACT = (
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
BLOCK_UNLESS = {"radare2": r"\b(?:radare2)\b.*\s+-c\s+.*", "r2": r"\b(?:radare2)\b.*\s+-c\s+.*"}
SUBMIT_COMMAND, SUBMIT_END_NAME = "submit", None  # tools.py:109, 128 (no bundle sets an end name)


def is_blocked(action: str) -> bool:
    """SWE-agent's `should_block_action` with the default filter."""
    action = action.strip()
    if not action:
        return False
    if action.startswith(BLOCK_PREFIXES) or action in BLOCK_EXACT:
        return True
    name = action.split()[0]
    return name in BLOCK_UNLESS and not re.search(BLOCK_UNLESS[name], action)


def _first_multiline_match(action: str) -> re.Match[str] | None:
    end = f"{SUBMIT_END_NAME}"  # an f-string turns None into the text "None", as upstream does
    pattern = re.compile(rf"^\s*({SUBMIT_COMMAND})\s*(.*?)^({end})\s*$", re.DOTALL | re.MULTILINE)
    return pattern.search(action)


def guard_multiline_input(action: str) -> str:
    """SWE-agent's heredoc guard: `<< 'END'` appended to each multi-line command's first line."""
    pieces: list[str] = []
    rest = action
    while rest.strip():
        match = _first_multiline_match(rest)
        if match is None:
            pieces.append(rest)
            break
        before, body, rest = (
            rest[: match.start()],
            rest[match.start() : match.end()],
            rest[match.end() :],
        )
        if before.strip():
            pieces.append(before)
        if not body.strip():
            continue
        eof = match.group(3).strip()
        if body.split("\n")[0].strip().endswith(f"<< '{eof}'"):
            pieces.append(body)
            continue
        guarded = body[match.start() :]  # upstream slices the match by its offset in `rest`
        first_line = guarded.split("\n")[0]
        pieces.append(guarded.replace(first_line, f"{first_line} << '{eof}'", 1))
    return "\n".join(pieces)


def preprocess(reply: str) -> tuple[str, str]:
    """(verdict, command): verdict `blocked`, `exit-command` (nothing runs) or `run`."""
    action = reply.strip()
    if is_blocked(action):
        return "blocked", action
    if action.strip() == "exit":
        return "exit-command", action
    return "run", guard_multiline_input(action).strip()
