"""Host side of the in-sandbox drivers: build the argv, send the request, read the answer.

A driver runs through `sandbox.run` like any reply, so it is confined and killed with the
sandbox. It reports as it goes (see inside/_driverlib.py): small events on its stdout, each
reply's output in a payload file in the workspace's obs dir, capped at the sandbox's
`output_bytes` per stream, read back here through the obs directory descriptor (never
following a link) and removed. This module turns that into one `TransportResult` per reply.

Who is to blame when the answer is incomplete:

- the sandbox killed the driver at its timeout: every reply timed out (the reply's doing);
- the driver died by a signal after it was ready: the reply in progress killed it (`kill -9
  -1` reaches the driver; so would the OOM killer it provoked); the replies before keep their
  results, that one fails with `the reply killed the ... driver`, the rest are not run;
- the machinery never came up, or the driver exited without a signal before it answered
  every reply (an exception: a bug of ours): a `TransportError`, the run is an error.

A result whose bytes are not in the payload as the driver wrote them (the reply removed,
replaced or rewrote the file: their SHA-256 differs) loses its output, not the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from boundary_audit.errors import TransportError
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.transports.interface import TransportResult, not_run

DRIVER_DIR = Path(__file__).resolve().with_name("inside")
"""Where the driver scripts live (our own code, read-only inside every host-program sandbox)."""

SETUP_ALLOWANCE_S = 5.0
"""Time a driver may spend starting and stopping its machinery, on top of the replies."""
STATUSES = frozenset({"ok", "timeout", "exited", "broken", "not-run"})
"""What a driver may say of a reply."""
GONE = "not run: the session is gone"


def driver_argv(driver: str) -> list[str]:
    """`[python, -E -s -S, inside/<driver>.py]`: no site, no PYTHON* variables, no cwd on path."""
    return [sys.executable, "-E", "-s", "-S", str(DRIVER_DIR / f"{driver}.py")]


def host_python_reason(sandbox: Sandbox) -> str | None:
    """Why a driver cannot run in `sandbox` (it needs this interpreter inside), or None."""
    if not sandbox.host_programs:
        return f"needs the host Python inside the sandbox, which {sandbox.name} does not offer"
    return None


def reply_timeout(params: Mapping[str, Any], sandbox: Sandbox) -> float:
    """Seconds one reply may take: the transport's `timeout` parameter, else the sandbox limit."""
    value = float(params.get("timeout") or 0)
    return value if value > 0 else float(sandbox.limits.timeout_s)


def run_driver(
    driver: str,
    request: dict[str, Any],
    ws: Workspace,
    sandbox: Sandbox,
    *,
    per_reply_s: float,
    env: Mapping[str, str] | None = None,
) -> list[ExecResult]:
    """Run `driver` with `request` (which holds `replies`) and return one result per reply.

    `env` is added to the sandbox's environment of the driver (and so of what it starts).
    """
    replies: Sequence[str] = request["replies"]
    name = f".ba-driver-{secrets.token_hex(8)}.out"
    request = {
        **request,
        "reply_timeout": per_reply_s,
        "output_bytes": int(sandbox.limits.output_bytes),
        "payload": f"{ws.inner_obs.rstrip('/')}/{name}",
    }
    budget = per_reply_s * max(1, len(replies)) + SETUP_ALLOWANCE_S
    try:
        res = sandbox.run(
            ws,
            driver_argv(driver),
            stdin=json.dumps(request).encode("utf-8"),
            timeout=budget,
            env=env,
        )
        if res.timed_out:
            return [_killed(res) for _ in replies]
        events = _events(res.stdout)
        with _Payload(ws, name) as payload:
            cap = int(sandbox.limits.output_bytes)
            results = [_result(e, res, payload, cap) for e in events if e.get("event") == "result"]
    finally:
        _Payload.remove(ws, name)
    if len(results) > len(replies):
        raise TransportError(f"{driver} driver answered {len(results)} of {len(replies)} replies")
    if len(results) < len(replies):
        results += _unanswered(driver, events, res, len(replies) - len(results))
    return results


def _unanswered(
    driver: str, events: list[dict[str, Any]], res: ExecResult, missing: int
) -> list[ExecResult]:
    """Results for the replies the driver never answered, or the TransportError it was."""
    kinds = [e.get("event") for e in events]
    code = res.exit_code
    if "ready" in kinds and "error" not in kinds and code is not None and code > 128:
        why = f"the reply killed the {driver} driver (signal {code - 128}); the session is gone"
        killed = TransportResult(
            exit_code=None,
            stdout=b"",
            stderr=b"",
            escaped_killed=res.escaped_killed,
            duration_s=res.duration_s,
            note=why,
        )
        return [killed, *[not_run(GONE)] * (missing - 1)]
    errors = [str(e.get("note", "")) for e in events if e.get("event") == "error"]
    if errors:
        raise TransportError(f"{driver}: {errors[0]}")
    err = [ln for ln in res.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    detail = err[-1].strip() if err else "no output"
    raise TransportError(f"{driver} driver failed (exit {code}): {detail}")


def _events(stdout: bytes) -> list[dict[str, Any]]:
    """The driver's event lines (anything else on its stdout is ignored)."""
    found: list[dict[str, Any]] = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


class _Payload:
    """The driver's payload file, opened through the obs directory descriptor."""

    def __init__(self, ws: Workspace, name: str) -> None:
        self.fd = -1
        try:
            self.fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=_obs(ws))
            if not stat.S_ISREG(os.fstat(self.fd).st_mode):
                self.close()
        except OSError:
            self.close()

    def __enter__(self) -> _Payload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def read(self, where: Any, cap: int) -> bytes | None:
        """The bytes at `where` ([offset, length, sha256], as the driver said), or None if
        they are not there any more (a reply removed, replaced or rewrote the file)."""
        if not (
            isinstance(where, list)
            and len(where) == 3
            and all(type(v) is int and v >= 0 for v in where[:2])
            and where[1] <= cap
            and isinstance(where[2], str)
        ):
            return None
        offset, length, digest = where
        data = b""
        if length:
            if self.fd < 0:
                return None
            try:
                data = os.pread(self.fd, length, offset)
            except OSError:
                return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    @staticmethod
    def remove(ws: Workspace, name: str) -> None:
        try:
            os.unlink(name, dir_fd=_obs(ws))
        except OSError:
            pass


def _obs(ws: Workspace) -> int:
    """The obs directory's descriptor (opened without following a link if the workspace has
    none); the caller does not close it."""
    if ws.obs_fd >= 0:
        return ws.obs_fd
    fd = os.open(ws.obs, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    ws.obs_fd = fd  # NOTE: closed with the workspace (layout.remove_workspace)
    return fd


def _result(item: Mapping[str, Any], res: ExecResult, payload: _Payload, cap: int) -> ExecResult:
    status = item.get("status")
    if status not in STATUSES:
        raise TransportError(f"driver reported an unknown status {status!r}")
    note = str(item.get("note", ""))
    code = item.get("exit_code")
    if status == "not-run":
        return not_run(note)
    out = payload.read(item.get("stdout"), cap)
    err = payload.read(item.get("stderr"), cap)
    if out is None or err is None:
        note = (note + "; " if note else "") + "its output was lost (the payload was altered)"
    elapsed = item.get("elapsed_s", 0.0)
    return TransportResult(
        exit_code=code if type(code) is int else None,
        stdout=out or b"",
        stderr=err or b"",
        timed_out=status == "timeout",
        truncated=bool(item.get("truncated")) or out is None or err is None,
        duration_s=float(elapsed) if isinstance(elapsed, (int, float)) else 0.0,
        escaped_killed=res.escaped_killed,
        note=note,
    )


def _killed(res: ExecResult) -> TransportResult:
    return TransportResult(
        exit_code=None,
        stdout=b"",
        stderr=res.stderr,
        timed_out=True,
        duration_s=res.duration_s,
        escaped_killed=res.escaped_killed,
        note="the sandbox killed the driver at its timeout",
    )
