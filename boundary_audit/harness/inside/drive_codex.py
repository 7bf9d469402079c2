# mypy: disable-error-code="import-not-found"
"""Codex: the @openai/codex 0.171.0 CLI (`codex exec`) against a mock Responses API on loopback.

Runs under the codex harness environment's Python (stdlib only; the CLI itself is the npm
package installed next to it); imported by driver_main.py. Codex ships no library API, so the
real binary runs one non-interactive turn:

- `mock_responses.MockResponses` listens on 127.0.0.1 inside the sandbox (same network
  namespace, nothing else reachable) and answers the turn's first request with one
  `function_call` of the shell tool Codex offers, carrying R;
- `$CODEX_HOME/config.toml` (`$HOME/.codex`, HOME being the sandbox's) names a provider whose
  `base_url` is the mock, `wire_api = "responses"`, and turns off what would reach the internet
  (analytics, the plugin marketplace, apps); nothing else is changed from Codex's defaults;
- `node <npm>/node_modules/@openai/codex/bin/codex.js exec --skip-git-repo-check
  -s danger-full-access --json PROMPT` (the npm launcher, which execs the native binary) runs in
  the work dir with stdin /dev/null. Codex decodes the arguments, runs R (in 0.171.0: the shell
  snapshot wrapper `bash -c '. SNAP; exec /bin/bash -c '"'"'R'"'"''`, or `bash -lc R` with
  `snapshot=false`), and sends the result back, which the mock records.

The observation is the `Output:` section of Codex's function-call output (the header above it,
chunk id and wall time, varies per run and goes to notes); the exit code is the one Codex
reports. A command still running when exec_command's yield time ends is reported by Codex as
a live session; `codex exec` then ends and kills it: status `timeout`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable

from mock_responses import MockResponses

CODEX_DEFAULT_YIELD_MS = 10_000
PROMPT = "Run the command."
CONFIG = """\
model = {model}
model_provider = "boundary-audit-mock"

[model_providers.boundary-audit-mock]
name = "boundary-audit mock Responses API"
base_url = {url}
wire_api = "responses"
supports_websockets = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
shell_snapshot = {snapshot}
"""
EXITED = re.compile(r"^Process exited with code (-?\d+)$|^Exit code: (-?\d+)$", re.M)
FAILED = "exec_command failed: "
REJECTED = "` rejected: "
RUNNING = re.compile(r"^Process running with session ID (\d+)$", re.M)


def split_output(text: str) -> tuple[list[str], str]:
    """Codex's function-call output -> (header lines, the command's output)."""
    head, sep, body = text.partition("\nOutput:\n")
    if not sep:
        return [], text
    return head.splitlines(), body


def _config(params: dict, url: str) -> str:
    return CONFIG.format(
        model=json.dumps(params["model"]),
        url=json.dumps(url),
        snapshot="true" if params["snapshot"] else "false",
    )


def _verdict(output: str) -> dict:
    header, body = split_output(output)
    notes = [line for line in header if not line.startswith(("Chunk ID:", "Wall time:"))]
    if output.startswith("unsupported call:"):
        return {"status": "unsupported-call", "observation": output, "exit_code": None,
                "notes": notes}  # fmt: skip
    if output.startswith(FAILED):
        # Codex refused to start the process: its own command policy (`... rejected: rm -f
        # style commands are not permitted ...`, even under danger-full-access) or the spawn
        # itself (E2BIG for an argument over 128 KiB).
        status = "rejected" if REJECTED in output else "exec-failed"
        return {"status": status, "observation": output, "exit_code": None, "notes": notes}
    exited = EXITED.search("\n".join(header))
    if exited:
        code = int(exited.group(1) or exited.group(2))
        return {"status": "executed", "observation": body, "exit_code": code, "notes": notes}
    status = "timeout" if RUNNING.search("\n".join(header)) else "no-exit-status"
    return {"status": status, "observation": body, "exit_code": None, "notes": notes}


def _events(stdout: str) -> list[dict]:
    events = []
    for line in stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


SNAPSHOT_WAIT_S = 10.0


def _snapshot_ready(codex_home: str) -> Callable[[], str | None]:
    """Wait (before the tool call is sent) for the shell snapshot Codex takes at start-up.

    Codex 0.171.0 takes it in the background and runs a command through it only once it is
    written; before that, the command runs as plain `bash -lc R`. A real model answers after
    seconds, by when the snapshot exists; the mock answers in a millisecond, so without this
    wait which path a reply took would depend on the machine's load.
    """

    def wait() -> str | None:
        folder = os.path.join(codex_home, "shell_snapshots")
        deadline = time.monotonic() + SNAPSHOT_WAIT_S
        while time.monotonic() < deadline:
            if _has_snapshot(folder):
                time.sleep(0.05)  # let the write finish
                return None
            time.sleep(0.02)
        return f"no shell snapshot after {SNAPSHOT_WAIT_S:g} s: the command ran without it"

    return wait


def _has_snapshot(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(e.name.endswith(".sh") and e.stat().st_size > 0 for e in entries)
    except FileNotFoundError:  # the folder, or a file renamed away while we looked
        return False


def drive(reply: str, params: dict) -> dict:
    """Run `reply` as the shell tool call of one `codex exec` turn in the current directory."""
    yield_ms = round(float(params["timeout"]) * 1000)
    extra = {} if yield_ms == CODEX_DEFAULT_YIELD_MS else {"yield_time_ms": yield_ms}
    codex_home = os.path.join(os.environ["HOME"], ".codex")
    os.makedirs(codex_home, exist_ok=True)
    ready = _snapshot_ready(codex_home) if params["snapshot"] else None
    with MockResponses(reply, tool=params["tool"], extra=extra, before_call=ready) as mock:
        with open(os.path.join(codex_home, "config.toml"), "w", encoding="utf-8") as f:
            f.write(_config(params, mock.url))
        argv = [params["node"], params["codex_js"], "exec", "--skip-git-repo-check",
                "-s", "danger-full-access", "--json", PROMPT]  # fmt: skip
        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=float(params["timeout"]) + float(params["turn_budget"]),
            )
        except subprocess.TimeoutExpired:
            return {"status": "codex-timeout", "observation": mock.output or "", "exit_code": None,
                    "notes": ["codex exec did not finish its turn in time"]}  # fmt: skip
    notes = [f"tool {mock.call['name']}" if mock.call else "no tool call was made"]
    notes += mock.problems
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        notes.append(f"codex exec exited {proc.returncode}: {lines[-1] if lines else ''}")
    if mock.output is None:
        return {"status": "no-tool-output", "observation": "", "exit_code": None, "notes": notes}
    result = _verdict(mock.output)
    result["notes"] = notes + result["notes"]
    commands = [e["item"] for e in _events(proc.stdout)
                if e.get("type") == "item.completed"
                and e.get("item", {}).get("type") == "command_execution"]  # fmt: skip
    if commands:
        shown = str(commands[0].get("command"))
        cut = shown if len(shown) <= 200 else f"{shown[:200]}... ({len(shown)} chars)"
        result["notes"].append(f"codex shows: {cut}")
    return result
