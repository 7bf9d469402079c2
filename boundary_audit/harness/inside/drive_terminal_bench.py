# mypy: disable-error-code="import-not-found, import-untyped"
"""Terminal-Bench: terminal-bench 0.2.18's own `TmuxSession`, driving a local tmux in the sandbox.

Runs under the terminal-bench harness venv; imported by driver_main.py. `TmuxSession` talks to
its container only through `container.exec_run(argv, user=...)` (plus one `exec_run(str)` and
`put_archive` in `copy_to_container`), so `LocalContainer` stands in for docker's `Container`:
`exec_run` runs the argv here, inside the sandbox, with cwd = the work dir (the container's
WORKDIR), stdin /dev/null and stdout+stderr merged, and returns docker's own `ExecResult` (a
program that cannot be started gives exit 127 or 126 with the error as output, as a failed
`docker exec` does, never an exception); a string command is split with `shlex.split`, as the
docker SDK does; `put_archive` extracts the tar locally. Everything after that is the released
code, unchanged (`terminal_bench/terminal/tmux_session.py` in the wheel):

- `TmuxSession("agent", container, disable_recording=True)`: `tmux -V`, the timestamp helper
  copied to /tmp; `start()`: `bash -c "tmux new-session -x 160 -y 40 -d -s agent \\; set-option
  ... history-limit 50000 \\; pipe-pane ... 'cat > /logs/agent.log'"` (the pane runs tmux's
  default shell, an interactive login bash; /logs does not exist here, so pipe-pane's `cat`
  fails and nothing is logged, which the reply cannot observe);
- the driver waits until the pane shows its prompt (in a real run the model's first reply
  takes seconds), then sends R as Terminus-1 does with a blocking command: one keystrokes
  string, R plus a newline unless it ends in one (the JSON `keystrokes` of a command that is
  meant to run), `send_keys(keys, block=True, max_timeout_sec=T)`. `_prepare_keys` strips the
  trailing newlines and appends `"; tmux wait -S done"` and `Enter` (`[R, "Enter"]` would become
  the same keys), `_send_blocking_keys` runs `tmux send-keys -t agent <keys...>` (no `-l`) and
  then `timeout Ts tmux wait done`, whose failure is Terminal-Bench's `TimeoutError`;
- the observation is `capture_pane()`, the visible screen Terminus-1 shows the model.

Terminal-Bench reads no exit status (exit_code is None). The tmux server is killed at the end,
as removing the container would. Parameter: `timeout` (max_timeout_sec, default 60 s).
"""

from __future__ import annotations

import importlib.util
import io
import os
import shlex
import subprocess
import sys
import tarfile
import time
import types
from typing import Any

from docker.models.containers import ExecResult


def _import_tmux_session() -> Any:
    """`terminal_bench.terminal.tmux_session.TmuxSession`, unchanged, without the package root.

    NOTE(h10): `terminal_bench/__init__.py` imports the benchmark harness and every agent, which
    pull in litellm (~10 s of CPU per import, and a price-list download attempt at import time).
    The package object is registered with its real search path but without running that file,
    so `terminal_bench.terminal` and `tmux_session` import exactly as released.
    """
    spec = importlib.util.find_spec("terminal_bench")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("terminal_bench is not installed")
    package = types.ModuleType("terminal_bench")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules.setdefault("terminal_bench", package)
    from terminal_bench.terminal.tmux_session import TmuxSession

    return TmuxSession


TmuxSession = _import_tmux_session()

SESSION = "agent"
PROMPT_WAIT_S = 5.0


class LocalContainer:
    """The part of docker's `Container` that `TmuxSession` uses, run locally."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.attrs = {"Config": {"WorkingDir": workdir}}
        self.commands: list[list[str]] = []

    def exec_run(self, cmd: str | list[str], user: str = "", **_: object) -> ExecResult:
        """Run `cmd` here as `docker exec` would run it in the container (no shell, no stdin)."""
        if user not in ("", "root"):
            raise RuntimeError(f"the local stand-in container runs as root only, not {user!r}")
        argv = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
        self.commands.append(argv)
        try:
            proc = subprocess.run(
                argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
            )  # fmt: skip
        except OSError as exc:
            # Docker reports a failed exec as a result, not an exception: exit 127 for a
            # missing program, 126 otherwise (e.g. E2BIG for an argv over 128 KiB).
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            return ExecResult(code, f"OCI runtime exec failed: {exc}".encode())
        return ExecResult(proc.returncode, proc.stdout)

    def put_archive(self, path: str, data: bytes) -> bool:
        """Extract a tar stream under `path`, as the docker engine does."""
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(path, filter="data")
        return True


def keystrokes(reply: str) -> str:
    """R as the keystrokes of a command meant to run: newline-terminated."""
    return reply if reply.endswith(("\n", "\r")) else reply + "\n"


def _short(key: str, keep: int = 160) -> str:
    """A key as notes show it: long ones cut, with their length."""
    return key if len(key) <= keep else f"{key[:keep]}... ({len(key)} chars)"


def _wait_for_prompt(session: Any) -> bool:
    deadline = time.monotonic() + PROMPT_WAIT_S
    while time.monotonic() < deadline:
        if session.capture_pane().strip():
            return True
        time.sleep(0.05)
    return False


def drive(reply: str, params: dict) -> dict:
    """Send `reply` as one blocking Terminus-1 command through a fresh `TmuxSession`."""
    container = LocalContainer(os.getcwd())
    session = TmuxSession(SESSION, container, disable_recording=True)
    notes: list[str] = []
    try:
        session.start()
        if not _wait_for_prompt(session):
            notes.append(f"no prompt on the pane after {PROMPT_WAIT_S:g}s; sending anyway")
        try:
            session.send_keys(keystrokes(reply), block=True, max_timeout_sec=params["timeout"])
            status = "executed"
        except TimeoutError as exc:
            status = "timeout"
            notes.append(f"TmuxSession: {exc}")
        screen = session.capture_pane()
        sent = next((c for c in container.commands if c[1:2] == ["send-keys"]), None)
        if sent is not None:
            notes.append(f"send-keys argv: {[_short(k) for k in sent[4:]]!r}")
    finally:
        container.exec_run(["tmux", "kill-server"])
    return {"status": status, "observation": screen, "exit_code": None, "notes": notes}
