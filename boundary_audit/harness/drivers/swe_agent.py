"""SWE-agent: swe-rex 1.4.0's `LocalRuntime` bash session behind SWE-agent 3ea751c's action layer.

The in-sandbox script (`inside/drive_swe_agent.py`) strips R, applies the blocklist, intercepts
an exact `exit`, applies `guard_multiline_input`, and sends the result as
`BashAction(command=..., timeout=30, check="silent")` into a fresh swe-rex session: a pexpect
pty running an interactive bash with PS1 `SHELLPS1PREFIX`, after swe-rex's `bash -n` syntax
check and its bashlex split-and-rejoin (or the unique-string fallback when bashlex fails).

Parameters: `timeout` (seconds, SWE-agent's `execution_timeout`, default 30) and `preprocess`
(default true; false sends R to swe-rex untouched, to separate the two layers).
"""

from __future__ import annotations

from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.taxonomy import BoundaryClass, Contract

SPEC = HarnessSpec(
    name="swe-agent",
    title="SWE-agent",
    version="1.4.0",
    packages=("swe-rex==1.4.0",),
    lock="swe-agent.txt",
    python=PythonRange(minimum=(3, 10), prefer=(3, 11)),
    script="drive_swe_agent.py",
    imports=("swerex.runtime.local", "pexpect", "bashlex"),
    boundary_class=BoundaryClass.SHELL_SESSION,
    contract=Contract.NATIVE,
    adapter_path="default",
    startup_budget_s=10.0,
    anchors=(
        Anchor(
            "SWE-agent@3ea751c sweagent/agent/agents.py:936-987",
            "handle_action: blocklist, exact `exit`, guard_multiline_input, communicate",
        ),
        Anchor(
            "SWE-agent@3ea751c sweagent/tools/tools.py:37-71,353-367,382-430",
            "blocklists, should_block_action, multi-line command patterns",
        ),
        Anchor("SWE-agent@3ea751c sweagent/tools/utils.py:8-36", "_guard_multiline_input"),
        Anchor(
            "SWE-agent@3ea751c sweagent/environment/swe_env.py:184-189,197-222",
            "session start, env exports, communicate -> BashAction(check='silent')",
        ),
        Anchor(
            "swe-rex 1.4.0 swerex/runtime/local.py:58-114,128-361",
            "bashlex split, `bash -n` check, pexpect BashSession",
        ),
    ),
)


class SweAgentHarness(HarnessTransport):
    """`harness:swe-agent`: R as one SWE-agent bash action in a swe-rex LocalRuntime session."""

    name = "harness:swe-agent"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 30.0, "preprocess": True}
    param_help = {
        "timeout": "seconds before swe-rex gives up on the command (SWE-agent execution_timeout)",
        "preprocess": "apply SWE-agent's strip/blocklist/exit/guard layer before swe-rex",
    }
