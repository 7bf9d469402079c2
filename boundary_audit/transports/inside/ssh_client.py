"""Driver: the ssh client side of the `ssh` transport, inside the sandbox.

Runs each client command line of the request (e.g. `bash -c 'ssh -F CFG localhost "R"'`) with
stdin at /dev/null and the sandbox's environment (which carries `BA_SSH_TOKEN`), one after
the other, so that ControlMaster/ControlPersist multiplexes them over one connection; then
stops the master (`ssh -O exit`) and kills whatever is left. ssh's exit status is the remote
command's (255 when ssh itself failed).

Request keys: replies, reply_timeout, output_bytes, payload (see _driverlib), argvs (one per
reply), config (the ssh_config path). Each client's output is read with the cap as it comes,
so a remote flood cannot fill the driver's memory.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NOTE(h6): run as a script, the driver imports its sibling directly
    from boundary_audit.transports.inside._driverlib import (
        Capped,
        Reporter,
        become_subreaper,
        kill_descendants,
        read_request,
        result,
        returncode_status,
    )
else:
    from _driverlib import (
        Capped,
        Reporter,
        become_subreaper,
        kill_descendants,
        read_request,
        result,
        returncode_status,
    )


def run_client(argv: list[str], timeout: float, cap: int) -> dict[str, Any]:
    """One client command line, with its own deadline; each stream keeps its first `cap`."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    streams = {proc.stdout.fileno(): Capped(cap), proc.stderr.fileno(): Capped(cap)}
    out, err = streams.values()
    deadline = started + timeout
    while streams and time.monotonic() < deadline:
        ready, _, _ = select.select(list(streams), [], [], max(0.0, deadline - time.monotonic()))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                streams[fd].add(chunk)
            else:
                del streams[fd]
    try:
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return result(
            "timeout", None, bytes(out.data), bytes(err.data),
            note="the remote command did not finish before the timeout",
            elapsed_s=time.monotonic() - started, truncated=out.truncated or err.truncated,
        )  # fmt: skip
    finally:
        proc.stdout.close()
        proc.stderr.close()
    note = "ssh itself failed (exit 255)" if code == 255 else ""
    return result(
        "ok", returncode_status(code), bytes(out.data), bytes(err.data), note=note,
        elapsed_s=time.monotonic() - started, truncated=out.truncated or err.truncated,
    )  # fmt: skip


def main() -> int:
    req = read_request()
    reporter = Reporter(req)
    become_subreaper()
    reporter.ready()
    timeout, cap = float(req["reply_timeout"]), int(req["output_bytes"])
    for argv in req["argvs"]:
        reporter.report(run_client(list(argv), timeout, cap))
    try:
        subprocess.run(
            ["ssh", "-F", req["config"], "-O", "exit", "localhost"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
        )
    except subprocess.TimeoutExpired:
        pass
    reporter.done([f"killed {kill_descendants()} leftover process(es)"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
