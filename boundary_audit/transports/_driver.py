"""Host side of the in-sandbox drivers: build the argv, send the request, decode the answer.

A driver runs through `sandbox.run` like any reply, so it is confined and killed with the
sandbox. It reports one result per reply (see drivers/_driverlib.py); this module turns those
into `TransportResult`s. A driver that cannot report at all (it crashed, or the sandbox killed
it) is a `TransportError`, except a sandbox timeout, which is the reply's doing.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from boundary_audit.errors import TransportError
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.transports.interface import TransportResult

DRIVER_DIR = Path(__file__).resolve().with_name("drivers")
"""Where the driver scripts live (our own code, read-only inside every host-program sandbox)."""

SETUP_ALLOWANCE_S = 5.0
"""Time a driver may spend starting and stopping its machinery, on top of the replies."""


def driver_argv(driver: str) -> list[str]:
    """`[python, -E -s -S, drivers/<driver>.py]`: no site, no PYTHON* variables, no cwd on path."""
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
    request = {**request, "reply_timeout": per_reply_s}
    budget = per_reply_s * max(1, len(replies)) + SETUP_ALLOWANCE_S
    res = sandbox.run(
        ws,
        driver_argv(driver),
        stdin=json.dumps(request).encode("utf-8"),
        timeout=budget,
        env=env,
    )
    if res.timed_out:
        return [_killed(res) for _ in replies]
    answer = _decode(driver, res)
    results: list[ExecResult] = [_result(i, res.escaped_killed) for i in answer["results"]]
    if len(results) != len(replies):
        raise TransportError(f"{driver} driver answered {len(results)} of {len(replies)} replies")
    errors = [n for r in results if (n := getattr(r, "note", "")).startswith("error:")]
    if errors:
        raise TransportError(f"{driver}: {errors[0][len('error: ') :]}")
    return results


def _decode(driver: str, res: ExecResult) -> dict[str, Any]:
    lines = res.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        answer: dict[str, Any] = json.loads(lines[-1])
        answer["results"]  # noqa: B018 - presence check
    except (IndexError, ValueError, KeyError, TypeError):
        err = [ln for ln in res.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        detail = err[-1].strip() if err else "no output"
        raise TransportError(f"{driver} driver failed (exit {res.exit_code}): {detail}") from None
    return answer


def _result(item: Mapping[str, Any], escaped: int) -> TransportResult:
    status = item["status"]
    note = str(item.get("note", ""))
    if status == "error":
        note = "error: " + note
    return TransportResult(
        exit_code=item.get("exit_code"),
        stdout=base64.b64decode(item.get("stdout", "")),
        stderr=base64.b64decode(item.get("stderr", "")),
        timed_out=status == "timeout",
        duration_s=float(item.get("elapsed_s", 0.0)),
        escaped_killed=escaped,
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
