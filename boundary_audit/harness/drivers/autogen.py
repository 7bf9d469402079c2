"""AutoGen: autogen-agentchat 0.7.5 fence extraction + autogen-ext 0.7.5 command-line executors.

The in-sandbox script (`scripts/drive_autogen.py`) wraps R in one ```` ```sh ```` fence (as a
model writes it; `fence=verbatim` takes R as the whole model message instead), extracts the
blocks with `CodeExecutorAgent._extract_markdown_code_blocks`, and runs them through
`CodeExecutorAgent.execute_code_block` on `LocalCommandLineCodeExecutor(work_dir=<work dir>)`:
each block is written to `tmp_code_<sha256>.sh` in the work dir (or to its `# filename:`
target) and run as `sh <file>` with no shell in between; on Debian `sh` is dash.

Parameters: `timeout` (the executor's, default 60 s), `fence` (`wrap` or `verbatim`).
"""

from __future__ import annotations

from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.taxonomy import BoundaryClass, Contract

SPEC = HarnessSpec(
    name="autogen",
    title="AutoGen",
    version="0.7.5",
    packages=("autogen-ext[docker]==0.7.5", "autogen-core==0.7.5", "autogen-agentchat==0.7.5"),
    lock="autogen.txt",
    python=PythonRange(minimum=(3, 10), prefer=(3, 11)),
    script="drive_autogen.py",
    imports=(
        "autogen_ext.code_executors.local",
        "autogen_ext.code_executors.docker",
        "autogen_agentchat.agents",
    ),
    boundary_class=BoundaryClass.SCRIPT_FILE,
    contract=Contract.RAW,
    default_against="script-sh",
    startup_budget_s=10.0,
    anchors=(
        Anchor(
            "autogen-agentchat 0.7.5 autogen_agentchat/agents/_code_executor_agent.py:733-741",
            "_extract_markdown_code_blocks: ```(python|sh)\\n ... ``` regex, IGNORECASE",
        ),
        Anchor(
            "autogen-agentchat 0.7.5 autogen_agentchat/agents/_code_executor_agent.py:687-727",
            "execute_code_block: approval hook, executor call, output rewording",
        ),
        Anchor(
            "autogen-ext 0.7.5 autogen_ext/code_executors/local/__init__.py:341-472",
            "write tmp_code_<sha256>.<lang>, create_subprocess_exec(sh, file), cleanup",
        ),
        Anchor(
            "autogen-ext 0.7.5 autogen_ext/code_executors/_common.py:96-131,155-171",
            "# filename: directive, silence_pip, lang_to_cmd",
        ),
    ),
)


class AutoGenHarness(HarnessTransport):
    """`harness:autogen`: R as one fenced ```sh block run by AutoGen's code executor."""

    name = "harness:autogen"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 60, "fence": "wrap", "executor": "local"}
    param_help = {
        "timeout": "the executor's timeout in whole seconds",
        "fence": "wrap (R becomes one ```sh block) or verbatim (R is the whole model message)",
        "executor": "local (LocalCommandLineCodeExecutor)",
    }
    choices = {"fence": ("wrap", "verbatim"), "executor": ("local",)}
