"""Entry point of every real-harness driver; runs inside the sandbox under the harness's own venv.

Standalone on purpose: stdlib only (boundary_audit is not installed in a harness venv). The host
runs `python -I -B driver_main.py SYSTEM PARAMS_JSON` through `Sandbox.run` with cwd = the
task's work dir and the reply R on stdin. This script reads R, points fd 0 at /dev/null and fd 1
at stderr (so nothing the harness or its children print can corrupt the result), imports
`drive_<system>.py` from its own directory, calls `drive(reply, params)`, and writes one JSON
object (protocol `boundary-audit-harness/1`) to the saved stdout:

    {"protocol", "system", "status", "observation", "exit_code", "notes", "timings"}

`status` is the harness's own verdict (`executed`, `timeout`, `blocked`, ...); `observation` is
the text the harness would hand back to the model. A bug or an unexpected exception inside the
harness becomes status `harness-error` with the exception named in `notes`.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback

PROTOCOL = "boundary-audit-harness/1"


def _redirect_stdio() -> int:
    """Save the real stdout for the result; send fd 1 to stderr and fd 0 to /dev/null."""
    result_fd = os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return result_fd


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else ""


def main(argv: list[str]) -> int:
    """Run one reply through one harness and emit its result; exit 2 on bad arguments."""
    if len(argv) != 3:
        sys.stderr.write("usage: driver_main.py SYSTEM PARAMS_JSON < reply\n")
        return 2
    system, params = argv[1], json.loads(argv[2])
    reply = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    result_fd = _redirect_stdio()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    t0 = t1 = time.monotonic()
    try:
        module = importlib.import_module("drive_" + system.replace("-", "_"))
        t1 = time.monotonic()
        result = module.drive(reply, params)
    except Exception as exc:  # noqa: BLE001 - reported as data, never a traceback on stdout
        traceback.print_exc()
        result = {
            "status": "harness-error",
            "observation": "",
            "exit_code": None,
            "notes": [f"{type(exc).__module__}.{type(exc).__qualname__}: {_first_line(exc)}"],
        }
    t2 = time.monotonic()
    result.setdefault("notes", [])
    result.setdefault("timings", {})
    result["timings"].update({"import_s": round(t1 - t0, 4), "drive_s": round(t2 - t1, 4)})
    document = {"protocol": PROTOCOL, "system": system, **result}
    sys.stdout.flush()
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(document, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
