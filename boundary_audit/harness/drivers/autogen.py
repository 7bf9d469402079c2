"""AutoGen: autogen-agentchat 0.7.5 fence extraction + autogen-ext 0.7.5 command-line executors.

The in-sandbox script (`inside/drive_autogen.py`) wraps R in one ```` ```sh ```` fence (as a
model writes it; `fence=verbatim` takes R as the whole model message instead), extracts the
blocks with `CodeExecutorAgent._extract_markdown_code_blocks`, and runs them through
`CodeExecutorAgent.execute_code_block` on the chosen executor:

- `executor=local`: `LocalCommandLineCodeExecutor(work_dir=<work dir>)`; each block is written
  to `tmp_code_<sha256>.sh` in the work dir (or to its `# filename:` target), run as
  `sh <file>` with no shell in between (on Debian `sh` is dash), then deleted.
- `executor=docker`: `DockerCommandLineCodeExecutor` against a real Docker engine (the private
  one of `services.dockerd` unless `docker_host` names another) with the locally built image
  of `services.images` (`image` overrides it): a container with entrypoint `/bin/sh`, the work
  dir bound at /workspace (`bind_dir` = the work dir's host path), each block run as
  `exec_run(["timeout", T, "sh", file])`, files kept. The reply runs in that container, which
  is AutoGen's own confinement; the driver (in the sandbox) only talks to the engine's socket.
  The container is created per run with `stop_container=False` and force-removed from the
  host afterwards (AutoGen's own `stop()` waits out docker's 10 s SIGTERM grace: `sh` as pid 1
  ignores SIGTERM), which changes nothing the reply can observe.

Parameters: `timeout` (the executor's, default 60 s), `fence` (`wrap` or `verbatim`),
`executor` (`local` or `docker`), and for docker `image`, `docker_host` ("" = defaults) and
`delete_tmp_files` (AutoGen's option, default false as in AutoGen: the script stays in the
work dir, a collateral file for every task).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from boundary_audit.harness.docker_side import DockerSide
from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.sandbox.interface import Workspace
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
    adapter_path="local-executor",
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
    defaults = {
        "timeout": 60,
        "fence": "wrap",
        "executor": "local",
        "image": "",
        "docker_host": "",
        "delete_tmp_files": False,
    }
    param_help = {
        "timeout": "the executor's timeout in whole seconds",
        "fence": "wrap (R becomes one ```sh block) or verbatim (R is the whole model message)",
        "executor": "local (LocalCommandLineCodeExecutor) or docker (DockerCommandLine...)",
        "image": "docker: the image to run (default: the locally built boundary-audit image)",
        "docker_host": "docker: the engine URL (default: the private engine, started if needed)",
        "delete_tmp_files": "docker: AutoGen's option to delete each block's script after it ran",
    }
    choices = {"fence": ("wrap", "verbatim"), "executor": ("local", "docker")}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._docker: DockerSide | None = None
        self._lock = threading.Lock()

    @property
    def docker(self) -> DockerSide:
        """The engine, client and image (connected on first use, shared by all runs)."""
        with self._lock:
            if self._docker is None:
                self._docker = DockerSide.connect(self.params["docker_host"], self.params["image"])
            return self._docker

    def preflight_reply(self) -> str:
        reply = super().preflight_reply()
        return reply if self.params["fence"] == "wrap" else f"```sh\n{reply}\n```"

    def adapter_path(self) -> str:
        return "docker-executor" if self._docker_mode() else "local-executor"

    def _docker_mode(self) -> bool:
        return bool(self.params["executor"] == "docker")

    def sandbox_timeout(self) -> float:
        extra = 20.0 if self._docker_mode() else 0.0  # container create + start
        return super().sandbox_timeout() + extra

    def driver_params(self, ws: Workspace) -> dict[str, Any]:
        params = super().driver_params(ws)
        if self._docker_mode():
            params.update(
                image=self.docker.image, bind_dir=str(ws.work), container_name=container_name(ws)
            )
        return params

    def driver_env(self, ws: Workspace) -> dict[str, str]:
        return {"DOCKER_HOST": self.docker.url} if self._docker_mode() else {}

    def exposed_paths(self) -> list[Path]:
        extra = [self.docker.socket.parent] if self._docker_mode() else []
        return [*super().exposed_paths(), *extra]

    def granted_sockets(self) -> list[Path]:
        return [self.docker.socket] if self._docker_mode() else []

    def after_run(self, ws: Workspace) -> None:
        if self._docker_mode():
            self.docker.remove(container_name(ws))

    def close(self) -> None:
        with self._lock:
            if self._docker is not None:
                self._docker.close()
                self._docker = None


def container_name(ws: Workspace) -> str:
    """The AutoGen container of one run (named, so the host can always remove it)."""
    return f"ba-autogen-{ws.run_id}"
