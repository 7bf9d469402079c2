# mypy: disable-error-code="import-not-found, import-untyped"
"""AutoGen's code path: autogen-agentchat 0.7.5 fence extraction, autogen-ext 0.7.5 executors.

Runs under the autogen harness venv; imported by driver_main.py. AutoGen's shell contract is raw:
the model writes markdown and `CodeExecutorAgent._extract_markdown_code_blocks` pulls out
```` ```sh ```` / ```` ```python ```` blocks with a regex (`_code_executor_agent.py:733-741` in
the wheel). With `fence=wrap` (default) the reply R is wrapped the way a model writes one shell
block, "```sh\\n" + R (+ "\\n" unless R ends with one) + "```", and goes through that regex, so
a reply containing ``` is cut where the regex cuts it; `fence=verbatim` hands R over as the whole
model message. The blocks then run through `CodeExecutorAgent.execute_code_block` (approval
hook, output rewording) on the chosen executor:

- `executor=local`: `LocalCommandLineCodeExecutor(work_dir=cwd, timeout=T)`: each block is written
  to `work_dir/tmp_code_<sha256>.sh` (or its `# filename:` target) and run as `sh <file>`
  without a shell, inheriting this process's stdin (here /dev/null, as for a service) and
  environment; files are deleted afterwards (`cleanup_temp_files=True`).
- `executor=docker`: `DockerCommandLineCodeExecutor(image=..., work_dir=cwd, bind_dir=HOST_WORK,
  container_name=...)`: a container with entrypoint `/bin/sh` and the work dir bound at
  /workspace; each block runs as `exec_run(["timeout", T, "sh", file])`; files are kept
  (AutoGen's default `delete_tmp_files=False`; the `delete_tmp_files` parameter sets it).
  Needs `DOCKER_HOST` and an image present in the engine.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from autogen_agentchat.agents import CodeExecutorAgent
from autogen_core import CancellationToken


def fence(reply: str) -> str:
    """R as a model writes one shell block."""
    return "```sh\n" + reply + ("" if reply.endswith("\n") else "\n") + "```"


def _executor(params: dict) -> Any:  # the executor classes exist only in the harness venv
    timeout = int(params["timeout"])
    if params["executor"] == "local":
        from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor

        return LocalCommandLineCodeExecutor(work_dir=os.getcwd(), timeout=timeout)
    from autogen_ext.code_executors.docker import DockerCommandLineCodeExecutor

    return DockerCommandLineCodeExecutor(
        image=params["image"],
        work_dir=os.getcwd(),
        bind_dir=params["bind_dir"],
        container_name=params["container_name"],
        timeout=timeout,
        stop_container=False,  # the host removes the container (see drivers/autogen.py)
        delete_tmp_files=bool(params["delete_tmp_files"]),
    )


async def _run(reply: str, params: dict) -> dict:
    message = fence(reply) if params["fence"] == "wrap" else reply
    executor = _executor(params)
    agent = CodeExecutorAgent("executor", code_executor=executor)
    blocks = agent._extract_markdown_code_blocks(message)
    notes = [
        f"block {i}: language {b.language!r}, {len(b.code)} chars" for i, b in enumerate(blocks)
    ]
    if not blocks:
        return {
            "status": "no-code-blocks",
            "observation": message,
            "exit_code": None,
            "notes": notes,
        }
    await executor.start()
    try:
        result = await agent.execute_code_block(blocks, CancellationToken())
    finally:
        if params["executor"] == "local":
            await executor.stop()
    status = "timeout" if result.exit_code == 124 else "executed"
    return {
        "status": status,
        "observation": result.output,
        "exit_code": result.exit_code,
        "notes": notes,
    }


def drive(reply: str, params: dict) -> dict:
    """Run `reply` as one AutoGen model message through the code executor agent."""
    return asyncio.run(_run(reply, params))
