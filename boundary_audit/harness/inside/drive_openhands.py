# mypy: disable-error-code="import-not-found, import-untyped"
"""OpenHands: openhands-tools 1.58.2's `terminal` tool on tmux, as the agent's tool call runs it.

Runs under the openhands harness venv (Python 3.12); imported by driver_main.py. The tmux server
starts inside the sandbox (its socket under the sandbox's private /tmp). The steps are the
released package's own (`openhands/tools/terminal/` in the wheel):

- `mode=executor` (default): `TerminalExecutor(working_dir=cwd, no_change_timeout_seconds=T,
  terminal_type="tmux")`, the tool's executor, then `executor(TerminalAction(command=R))`:
  the Python/JSON-literal check (`impl.py`, `definition.py:55-83`), a pane checked out of its
  `TmuxPanePool`, and `TerminalSession.execute`; `mode=session`: `create_terminal_session(
  work_dir=cwd, terminal_type="tmux", no_change_timeout_seconds=T)`, `initialize()`,
  `execute(TerminalAction(command=R))` (the session alone, no executor checks);
- either way `execute` strips R, refuses more than one top-level statement
  (`split_bash_commands`, tree-sitter-bash), rewrites `\\;` `\\&` `\\|` `\\<` `\\>` with
  `escape_bash_special_chars`, types it with libtmux `send_keys(literal=True)` (`tmux send-keys
  -l`) plus `Enter` into an interactive `/bin/bash` set up with `set +H` and a PS1 JSON
  marker, and waits for a new marker (or `T` seconds without new output).

The observation is the `TerminalObservation`'s text (the output between the markers); its
exit code is the marker's. `-1` with "no new output" is a timeout (the command is left running
and the sandbox ends it). The executor/session is closed (tmux session killed) at the end.
Parameters: `timeout` (no_change_timeout_seconds, default 30) and `mode`.
"""

from __future__ import annotations

import os
from typing import Any

# NOTE(h10): openhands.sdk imports litellm, which tries to download a model price list at import
# time (three attempts, ~10 s without a network), and prints a banner; both have their own
# switches. They are set for the import only, so the terminal's environment never sees them.
_IMPORT_ONLY = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1"}
os.environ.update(_IMPORT_ONLY)
from openhands.tools.terminal.definition import TerminalAction  # noqa: E402
from openhands.tools.terminal.impl import TerminalExecutor  # noqa: E402
from openhands.tools.terminal.terminal.factory import create_terminal_session  # noqa: E402

for _name in _IMPORT_ONLY:
    del os.environ[_name]

REFUSALS = (
    ("Cannot execute multiple commands at once.", "multiple-commands"),  # terminal_session.py
    ("[Tool-argument error] ", "literal-argument"),  # definition.py:37 via impl.py __call__
)


def _status(observation: Any) -> str:
    text = observation.text
    if observation.is_error:
        for start, status in REFUSALS:
            if text.startswith(start):
                return status
        return "rejected"
    if observation.exit_code == -1:
        suffix = observation.metadata.suffix
        if "no new output after" in suffix or "timed out after" in suffix:
            return "timeout"
        return "no-exit-status"
    return "executed"


def _run(reply: str, params: dict) -> Any:
    timeout = int(params["timeout"])
    action = TerminalAction(command=reply)
    if params["mode"] == "session":
        session = create_terminal_session(
            work_dir=os.getcwd(), terminal_type="tmux", no_change_timeout_seconds=timeout
        )
        session.initialize()
        try:
            return session.execute(action)
        finally:
            session.close()
    executor = TerminalExecutor(
        working_dir=os.getcwd(), no_change_timeout_seconds=timeout, terminal_type="tmux"
    )
    try:
        return executor(action)
    finally:
        executor.close()


def drive(reply: str, params: dict) -> dict:
    """Run `reply` as one `terminal` tool call of a fresh OpenHands tmux terminal."""
    observation = _run(reply, params)
    status = _status(observation)
    notes = [note for note in (observation.metadata.suffix.strip(),) if note]
    exit_code = observation.exit_code if status == "executed" else None
    return {
        "status": status,
        "observation": observation.text,
        "exit_code": exit_code,
        "notes": notes,
    }
