"""Codex: the @openai/codex 0.171.0 CLI binary, one `codex exec` turn against a mock model.

The in-sandbox script (`inside/drive_codex.py`) starts a mock Responses API on 127.0.0.1
(`inside/mock_responses.py`) inside the sandbox's own network namespace, points Codex's
provider at it, and runs `codex exec` (the npm launcher `bin/codex.js` under the machine's
node, which execs the native binary) in the work dir. The mock answers the turn with one call
of the shell tool Codex offers (0.171.0 offers `exec_command` for catalog models such as
gpt-5.5) carrying R, records the function-call output Codex sends back, and ends the turn.

The npm package is pinned by a package-lock (`locks/codex/`) and installed with `npm ci` into
the harness environment (`<cache>/harness/codex-0.171.0/npm`); the Python side is stdlib only.

Parameters: `timeout` (seconds Codex waits for the command before yielding; exec_command's
`yield_time_ms`, sent only when it differs from Codex's 10 s default; Codex clamps it to
0.25-30 s), `tool` (`offered`, `exec_command` or `shell_command`), `snapshot` (Codex's default
shell snapshot: R runs as `exec /bin/bash -c 'R'` inside a wrapper that sources it; false runs
`bash -lc R`), `model` (a slug of the binary's model catalog; its default model, gpt-6.2-sol,
offers the shell only inside a JavaScript `exec` tool, a different contract not driven here).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from boundary_audit.errors import HarnessError
from boundary_audit.harness.install import npm_dir, require
from boundary_audit.harness.spec import Anchor, HarnessSpec, PythonRange
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.sandbox.interface import Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass, Contract

LAUNCHER = Path("node_modules", "@openai", "codex", "bin", "codex.js")

SPEC = HarnessSpec(
    name="codex",
    title="Codex",
    version="0.171.0",
    packages=("@openai/codex@0.171.0 (npm)",),
    lock="codex.txt",
    npm_lock="codex",
    python=PythonRange(minimum=(3, 10), prefer=(3, 11)),
    script="drive_codex.py",
    imports=("http.server", "json"),
    boundary_class=BoundaryClass.SHELL_STRING,
    contract=Contract.NATIVE,
    adapter_path="snapshot",
    startup_budget_s=20.0,
    anchors=(
        Anchor(
            "@openai/codex 0.171.0 bin/codex.js (npm launcher)",
            "resolves the platform package's native binary and execve()s it",
        ),
        Anchor(
            "codex-rs/core/src/tools/handlers/unified_exec (exec_command, observed)",
            "ExecCommandArgs{cmd, yield_time_ms=10000, tty=false}: argv [bash, -lc, cmd]",
        ),
        Anchor(
            "codex-rs/core/src/tools/runtimes/mod.rs maybe_wrap_shell_lc_with_snapshot (observed)",
            "bash -c '<env restore>; . SNAPSHOT; exec /bin/bash -c '\"'\"'R'\"'\"''",
        ),
        Anchor(
            "codex-rs/core/src/spawn.rs (observed with strace)",
            "stdin /dev/null, pipes for output, own process group; killed when exec ends",
        ),
    ),
)


class CodexHarness(HarnessTransport):
    """`harness:codex`: R as the shell tool call of one real `codex exec` turn."""

    name = "harness:codex"
    boundary_class = SPEC.boundary_class
    spec = SPEC
    defaults = {"timeout": 10.0, "tool": "offered", "snapshot": True, "model": "gpt-5.5"}
    param_help = {
        "timeout": "seconds Codex waits for the command before yielding (yield_time_ms)",
        "tool": "offered (exec_command if Codex offers it, else shell_command), or force one",
        "snapshot": "Codex's shell snapshot wrapper (its default); false runs bash -lc R",
        "model": "model slug Codex is configured with (decides the tools it offers)",
    }
    choices = {"tool": ("offered", "exec_command", "shell_command")}
    teardown_budget_s = 10.0
    turn_budget_s = 20.0
    """Seconds `codex exec` may take beyond the command's yield time to finish its turn."""

    def supports(self, sandbox: Sandbox) -> str | None:
        if shutil.which("node") is None:
            return "the codex harness runs its npm launcher with node, which is not installed"
        return super().supports(sandbox)

    def adapter_path(self) -> str:
        return "snapshot" if self.params["snapshot"] else "shell-command"

    def sandbox_timeout(self) -> float:
        return super().sandbox_timeout() + self.turn_budget_s

    def driver_params(self, ws: Workspace) -> dict[str, Any]:
        node = shutil.which("node")
        if node is None:
            raise HarnessError("the codex harness needs node (Debian: apt-get install nodejs)")
        launcher = npm_dir(require(self.spec).path) / LAUNCHER
        return {
            **super().driver_params(ws),
            "node": node,
            "codex_js": str(launcher),
            "turn_budget": self.turn_budget_s,
        }
