# mypy: disable-error-code="import-not-found, import-untyped"
"""LangChain's shell tool: langchain 1.5.2 `ShellToolMiddleware`, called on its real code path.

Runs under the langchain harness venv; imported by driver_main.py. The steps are the released
package's own (paths in the wheel, `langchain/agents/middleware/shell_tool.py`):
`ShellToolMiddleware(workspace_root=cwd, execution_policy=HostExecutionPolicy(...), env=...)`,
`_create_resources()` (starts `/bin/bash` on pipes in the workspace with `self._environment or
{}`: an *empty* environment unless `env=` is given), the tool's argument schema
`_ShellToolInput(command=R)` (the pydantic validation a tool call goes through), then
`_run_shell_tool(resources, {"command": R, "restart": False}, tool_call_id=...)`, which returns
the `ToolMessage` the model would see (content, `status`, `artifact` with the exit code).
Finally the resources' finalizer stops the session as `after_agent` does (writes `exit`, waits
`termination_timeout`, then SIGKILLs the group).

Parameters: `timeout` (the policy's `command_timeout`, default 30 s) and `env`: `empty` (the
middleware's default) or `sandbox` (pass the sandbox's scrubbed environment as `env=`, as a
deployer who sets `env=dict(os.environ)` would).
"""

from __future__ import annotations

import os

from langchain.agents.middleware._execution import HostExecutionPolicy
from langchain.agents.middleware.shell_tool import ShellToolMiddleware, _ShellToolInput
from langchain_core.tools import ToolException
from pydantic import ValidationError


def drive(reply: str, params: dict) -> dict:
    """Run `reply` as one `shell` tool call of a fresh LangChain shell session."""
    env = None if params["env"] == "empty" else dict(os.environ)
    policy = HostExecutionPolicy(command_timeout=float(params["timeout"]))
    middleware = ShellToolMiddleware(workspace_root=os.getcwd(), execution_policy=policy, env=env)
    try:
        _ShellToolInput(command=reply)
    except ValidationError as exc:
        return {"status": "invalid-input", "observation": str(exc), "exit_code": None, "notes": []}
    resources = middleware._create_resources()
    try:
        message = middleware._run_shell_tool(
            resources, {"command": reply, "restart": False}, tool_call_id="call_boundary_audit"
        )
    except ToolException as exc:
        return {"status": "tool-error", "observation": str(exc), "exit_code": None, "notes": []}
    finally:
        resources.finalizer()
    artifact = message.artifact or {}
    status = "timeout" if artifact.get("timed_out") else "executed"
    notes = [f"tool message status: {message.status}"]
    if artifact.get("truncated_by_lines"):
        notes.append(f"output truncated at {policy.max_output_lines} lines")
    return {
        "status": status,
        "observation": message.content,
        "exit_code": artifact.get("exit_code"),
        "notes": notes,
    }
