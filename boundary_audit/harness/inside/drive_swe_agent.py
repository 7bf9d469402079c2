# mypy: disable-error-code="import-not-found, import-untyped"
"""SWE-agent's action path: its own pre-processing (3ea751c), then swe-rex 1.4.0's LocalRuntime.

Runs under the swe-agent harness venv (swe-rex, pexpect, bashlex); imported by driver_main.py.
The SWE-agent layer is not on PyPI (the `sweagent` name there is a placeholder), so its action
handling is reimplemented in `sweagent_layer.py` and cited there; everything after it is the
released swe-rex code, called the way SWE-agent calls it:

- `SWEEnv.communicate` (`sweagent/environment/swe_env.py:197-222`) maps any `check` to swe-rex
  `check="silent"` and calls `run_in_session(BashAction(command, timeout, check))` with
  `timeout` = `execution_timeout` (30, `sweagent/tools/tools.py:139`);
- a `CommandTimeoutError` is answered with `BashInterruptAction()` and the model is shown
  `command_cancelled_timeout_template` (`sweagent/agent/agents.py:968-987`, 112-117); a
  `BashIncorrectSyntaxError` re-queries the model (agents.py:1135-1141); a shell that died
  ends the run as `exit_error` (agents.py:1205-1209).

Session set-up mirrors SWEEnv: `CreateBashSessionRequest(startup_source=[~/.bashrc])`
(swe_env.py:184-188; `/root/.bashrc` in its images, where HOME is /root), the two
`set_env_variables` calls (swe_env.py:189, tools.py:256-261 with `ToolConfig.env_variables`
tools.py:94-101), and `cd <repo> && export ROOT=$(pwd -P)` (swe_env.py:155-166) with the work
dir standing in for `/<repo>`. Tool bundle installation and `git` resets are not reproduced.
"""

from __future__ import annotations

import asyncio
import os
import shlex

import pexpect
from sweagent_layer import preprocess
from swerex.exceptions import BashIncorrectSyntaxError, CommandTimeoutError
from swerex.runtime.abstract import BashAction, BashInterruptAction, CreateBashSessionRequest
from swerex.runtime.local import LocalRuntime

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
    verdict, command = preprocess(reply) if params["preprocess"] else ("run", reply)
    if verdict == "blocked":
        text = f"Operation '{command}' is not supported by this environment."
        return {
            "status": "blocked",
            "observation": text,
            "exit_code": None,
            "notes": ["blocklist: not executed"],
        }
    if verdict == "exit-command":
        return {
            "status": "exit-command",
            "observation": "Exited",
            "exit_code": None,
            "notes": ["exact `exit` ends the agent: not executed"],
        }
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
