# mypy: disable-error-code="import-not-found, import-untyped"
"""SWE-agent's action path: its own pre-processing (3ea751c), then swe-rex 1.4.0's LocalRuntime.

Runs under the swe-agent harness venv (swe-rex, pexpect, bashlex); imported by driver_main.py.
The SWE-agent layer is not on PyPI (the `sweagent` name there is a placeholder), so the steps
below are reimplemented from its source at SWE-agent/SWE-agent@3ea751c and cited; everything
after them is the released swe-rex code, called the way SWE-agent calls it.

1. Parse (default `function_calling` parser): the bash tool's `command` argument is not quoted
   (`sweagent/tools/utils.py:39-43`), is rendered through `{{value}}` and `"{command}"`, and the
   result is `.strip()`ped (`sweagent/tools/parsing.py:425-439`).
2. `handle_action` (`sweagent/agent/agents.py:936-966`): the blocklist check
   (`sweagent/tools/tools.py:353-367`, lists at 37-71) raises `_BlockedActionError`, which
   re-queries the model (agents.py:1125-1129); an action that is exactly `exit` after
   stripping ends the run without executing (agents.py:948-955); otherwise
   `guard_multiline_input(action).strip()` (`sweagent/tools/utils.py:8-36`, patterns from
   `sweagent/tools/tools.py:390-430`) is sent with `communicate(..., timeout=30)`.
   In the default configuration no tool has an `end_name`, so the only multi-line pattern is
   the submit command's, whose end name is `None` and is interpolated as the literal text
   `None` (tools.py:425-428): a reply with a line starting `submit` and a later line `None`
   gets ` << 'None'` appended to its first line. Reproduced as is.
3. `SWEEnv.communicate` (`sweagent/environment/swe_env.py:197-222`) maps any `check` to
   swe-rex `check="silent"` and calls `run_in_session(BashAction(command, timeout, check))`.
   A `CommandTimeoutError` is answered with `BashInterruptAction()` (agents.py:968-987); a
   `BashIncorrectSyntaxError` re-queries the model (agents.py:1135-1141).
Session set-up mirrors SWEEnv: `CreateBashSessionRequest(startup_source=[~/.bashrc])`
(swe_env.py:184-188; `/root/.bashrc` in its images, where HOME is /root), the two
`set_env_variables` calls (swe_env.py:189, tools.py:256-261 with `ToolConfig.env_variables`
tools.py:94-101), and `cd <repo> && export ROOT=$(pwd -P)` (swe_env.py:155-166) with the work
dir standing in for `/<repo>`. Tool bundle installation and `git` resets are not reproduced.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex

import pexpect
from swerex.exceptions import BashIncorrectSyntaxError, CommandTimeoutError
from swerex.runtime.abstract import BashAction, BashInterruptAction, CreateBashSessionRequest
from swerex.runtime.local import LocalRuntime

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
SESSION_ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PIP_PROGRESS_BAR": "off", "PAGER": "cat"}
TOOL_ENV = {
    "PAGER": "cat",
    "MANPAGER": "cat",
    "LESS": "-R",
    "PIP_PROGRESS_BAR": "off",
    "TQDM_DISABLE": "1",
    "GIT_PAGER": "cat",
}
TIMEOUT_TEMPLATE = (  # sweagent/agent/agents.py:112-117, rendered at 983-987
    "The command '{command}' was cancelled because it took more than {timeout} "
    "seconds. Please try a different command that completes more quickly. Note: "
    "A common source of this error is if the command is interactive or requires "
    "user input (it is impossible to receive user input in the current "
    "environment, so the command will never complete)."
)


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


async def _setup(rt: LocalRuntime, cwd: str) -> None:
    home = os.environ.get("HOME", "/root")
    await rt.create_session(
        CreateBashSessionRequest(startup_source=[os.path.join(home, ".bashrc")], startup_timeout=10)
    )
    exports = [
        " && ".join(f"export {k}={shlex.quote(v)}" for k, v in env.items())
        for env in (SESSION_ENV, TOOL_ENV)
    ]
    for command in (*exports, f"cd {shlex.quote(cwd)} && export ROOT=$(pwd -P)"):
        obs = await rt.run_in_session(BashAction(command=command, timeout=120, check="silent"))
        if obs.exit_code != 0:  # SWEEnv.communicate(check="raise") fails the run here
            raise RuntimeError(f"set-up command {command!r} exited {obs.exit_code}: {obs.output!r}")


async def _run(reply: str, params: dict) -> dict:
    timeout = float(params["timeout"])
    if params["preprocess"]:
        action = reply.strip()
        if is_blocked(action):
            return {
                "status": "blocked",
                "observation": f"Operation '{action}' is not supported by this environment.",
                "exit_code": None,
                "notes": ["blocklist: not executed"],
            }
        if action.strip() == "exit":
            return {
                "status": "exit-command",
                "observation": "Exited",
                "exit_code": None,
                "notes": ["exact `exit` ends the agent: not executed"],
            }
        command = guard_multiline_input(action).strip()
    else:
        command = reply
    notes = [] if command == reply else ["command rewritten by SWE-agent pre-processing"]
    rt = LocalRuntime()
    try:
        await _setup(rt, os.getcwd())
        try:
            obs = await rt.run_in_session(
                BashAction(command=command, timeout=timeout, check="silent")
            )
        except CommandTimeoutError:
            await rt.run_in_session(BashInterruptAction())
            text = TIMEOUT_TEMPLATE.format(command=command, timeout=params["timeout"])
            return {"status": "timeout", "observation": text, "exit_code": None, "notes": notes}
        except pexpect.EOF:
            return {
                "status": "shell-exited",
                "observation": "",
                "exit_code": None,
                "notes": notes
                + [
                    "the session's bash exited; SWE-agent ends the run with "
                    "exit_error (agents.py:1205-1209)"
                ],
            }
        except BashIncorrectSyntaxError as exc:
            stderr = exc.extra_info.get("bash_stderr", "")
            return {
                "status": "syntax-error",
                "observation": stderr,
                "exit_code": None,
                "notes": notes + ["rejected by swe-rex's `bash -n` check: not executed"],
            }
        if obs.expect_string != "SHELLPS1PREFIX":
            notes.append(f"bashlex fallback: ended on {obs.expect_string!r}")
        return {
            "status": "executed",
            "observation": obs.output,
            "exit_code": obs.exit_code,
            "notes": notes,
        }
    finally:
        await rt.close()


def drive(reply: str, params: dict) -> dict:
    """Run `reply` as one SWE-agent action in a fresh swe-rex session in the current directory."""
    return asyncio.run(_run(reply, params))
