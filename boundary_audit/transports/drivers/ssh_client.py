"""Driver: the ssh client side of the `ssh` transport, inside the sandbox.

Runs each client command line of the request (e.g. `bash -c 'ssh -F CFG localhost "R"'`) with
stdin at /dev/null and the sandbox's environment (which carries `BA_SSH_TOKEN`), one after
the other, so that ControlMaster/ControlPersist multiplexes them over one connection; then
stops the master (`ssh -O exit`) and kills whatever is left. ssh's exit status is the remote
command's (255 when ssh itself failed).

Request keys: replies, reply_timeout, argvs (one per reply), config (the ssh_config path).
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NOTE(h6): run as a script, the driver imports its sibling directly
    from boundary_audit.transports.drivers._driverlib import (
        become_subreaper,
        emit,
        kill_descendants,
        read_request,
        result,
        returncode_status,
    )
else:
    from _driverlib import (
        become_subreaper,
        emit,
        kill_descendants,
        read_request,
        result,
        returncode_status,
    )


def run_client(argv: list[str], timeout: float) -> dict[str, Any]:
    """One client command line, with its own deadline."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired as exc:
        return result(
            "timeout",
            None,
            exc.stdout or b"",
            exc.stderr or b"",
            note="the remote command did not finish before the timeout",
            elapsed_s=time.monotonic() - started,
        )
    note = "ssh itself failed (exit 255)" if done.returncode == 255 else ""
    return result(
        "ok",
        returncode_status(done.returncode),
        done.stdout,
        done.stderr,
        note=note,
        elapsed_s=time.monotonic() - started,
    )


def main() -> int:
    req = read_request()
    become_subreaper()
    timeout = float(req["reply_timeout"])
    results = [run_client(list(argv), timeout) for argv in req["argvs"]]
    try:
        subprocess.run(
            ["ssh", "-F", req["config"], "-O", "exit", "localhost"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
        )
    except subprocess.TimeoutExpired:
        pass
    log = [f"killed {kill_descendants()} leftover process(es)"]
    emit(results, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
