"""LangChain: langchain 1.5.2 `ShellToolMiddleware` with the default `HostExecutionPolicy`.

The in-sandbox script (`inside/drive_langchain.py`) builds the middleware with
`workspace_root` = the work dir, validates `{"command": R}` with the tool's argument schema and
calls `_run_shell_tool`, the body of the registered `shell` tool: R plus a newline is written to
the stdin pipe of a persistent non-interactive `/bin/bash`, followed by
`printf '__LC_SHELL_DONE__<uuid> %s\n' $?`; the command ends when a stdout line *starts* with
that marker, stderr lines come back prefixed `[stderr] `, and a timeout restarts the session.

Parameters: `timeout` (the policy's `command_timeout`, default 30) and `env`: `empty` (the
middleware's default: bash starts with no environment at all, so HOME, the sandbox's PATH and
its helper variables are unset) or `sandbox` (the sandbox environment passed as `env=`).
"""

from __future__ import annotations

from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.taxonomy import BoundaryClass, Contract

SPEC = HarnessSpec(
    name="langchain",
    title="LangChain",
    version="1.5.2",
    packages=("langchain==1.5.2",),
    lock="langchain.txt",
    python=PythonRange(minimum=(3, 11), below=(4, 0), prefer=(3, 11)),
    script="drive_langchain.py",
    imports=("langchain.agents.middleware.shell_tool",),
    boundary_class=BoundaryClass.SHELL_SESSION,
    contract=Contract.NATIVE,
    adapter_path="shell-tool",
    startup_budget_s=15.0,
    anchors=(
        Anchor(
            "langchain 1.5.2 langchain/agents/middleware/shell_tool.py:217-238",
            "ShellSession.execute: R + newline, then the done-marker printf, into bash's stdin",
        ),
        Anchor(
            "langchain 1.5.2 langchain/agents/middleware/shell_tool.py:240-325",
            "_collect_output: line-start marker, [stderr] prefix, restart on timeout",
        ),
        Anchor(
            "langchain 1.5.2 langchain/agents/middleware/shell_tool.py:808-895",
            "_run_shell_tool: the shell tool's body",
        ),
        Anchor(
            "langchain 1.5.2 langchain/agents/middleware/_execution.py:27-48",
            "_launch_subprocess: Popen on pipes, text mode, new session",
        ),
    ),
)


class LangChainHarness(HarnessTransport):
    """`harness:langchain`: R as one `shell` tool call of LangChain's ShellToolMiddleware."""

    name = "harness:langchain"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 30.0, "env": "empty"}
    param_help = {
        "timeout": "the execution policy's command_timeout in seconds",
        "env": "empty (the middleware default: no environment) or sandbox (env=os.environ)",
    }
    choices = {"env": ("empty", "sandbox")}
    teardown_budget_s = 12.0  # a timeout restarts the session: termination_timeout is 10 s
