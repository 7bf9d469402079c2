"""The one way boundary-audit runs an external program.

Every `git`, `bash`, `ssh`, `docker`, `bwrap` or `tmux` call goes through `run()`: the child
gets its own session (process group), a timeout kills that whole group, output is captured
with a cap, and failures become typed `BoundaryAuditError`s carrying the program's stderr.
While it runs, the child's group is registered with the supervisor (from before it starts:
`supervisor.spawned`), so that a boundary-audit killed mid-call (a clone downloading) leaves
no `git` behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit._spawn import SPAWN_LOCK, popen, wait, write_executable
from boundary_audit.errors import BoundaryAuditError, EnvironmentUnavailable

DEFAULT_OUTPUT_CAP = 16 * 1024 * 1024
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH of every sandboxed run and of the host programs boundary-audit looks up."""

__all__ = [
    "BASE_PATH",
    "SPAWN_LOCK",
    "ProcessResult",
    "kill_group",
    "popen",
    "run",
    "wait",
    "write_executable",
]


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or killed) child left behind."""

    argv: tuple[str, ...]
    returncode: int | None
    """Exit status; negative for a signal; None only if the child could not be reaped."""
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    """True when stdout or stderr exceeded the cap and the rest was discarded."""
    duration_s: float

    def stderr_line(self) -> str:
        """The last non-empty stderr line, decoded leniently, for one-line error messages."""
        lines = [ln for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else ""


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid`, ignoring a group that is already gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(stream, sink: bytearray, cap: int, flag: list[bool]) -> None:  # type: ignore[no-untyped-def]
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        room = cap - len(sink)
        if room > 0:
            sink += chunk[:room]
        if len(chunk) > max(room, 0):
            flag[0] = True
    stream.close()


def run(
    argv: Sequence[str],
    *,
    timeout: float | None = 60.0,
    input: bytes | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = False,
    error: type[BoundaryAuditError] = BoundaryAuditError,
    what: str | None = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    stdin_devnull: bool = True,
    guarded: bool = True,
) -> ProcessResult:
    """Run `argv` to completion in its own process group and return what it left.

    The child is registered with the supervisor while it runs; `guarded=False` only for a
    child that ends by itself if we die (see `supervisor`): no guardian is started for it.

    On timeout the whole group is SIGKILLed and `timed_out` is set. With `check`, a non-zero
    exit or a timeout raises `error` whose message names `what` (default: the program) and
    quotes its last stderr line. A missing program raises `EnvironmentUnavailable`.
    """
    argv = tuple(str(a) for a in argv)
    label = what or Path(argv[0]).name
    start = time.monotonic()
    try:
        proc, token = supervisor.spawned(
            lambda child_env: popen(
                argv,
                stdin=subprocess.PIPE
                if input is not None
                else (subprocess.DEVNULL if stdin_devnull else None),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=child_env,
                start_new_session=True,
            ),
            dict(env) if env is not None else None,
            guarded=guarded,
        )
    except FileNotFoundError as exc:
        raise EnvironmentUnavailable(f"{label}: program not found: {argv[0]}") from exc
    except PermissionError as exc:
        raise EnvironmentUnavailable(f"{label}: cannot execute {argv[0]}: {exc.strerror}") from exc
    book = supervisor.ledger()
    out, err = bytearray(), bytearray()
    trunc = [False]
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out, output_cap, trunc), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err, output_cap, trunc), daemon=True),
    ]
    for t in readers:
        t.start()
    if input is not None:
        threading.Thread(target=_feed, args=(proc, input), daemon=True).start()
    timed_out = False
    try:
        wait(proc, timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        kill_group(proc.pid)  # NOTE: also reaps grandchildren left in the group after exit
        try:
            wait(proc, 5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            pass
        book.release(token)
    for t in readers:
        t.join(timeout=5)
    result = ProcessResult(
        argv=argv,
        returncode=proc.returncode,
        stdout=bytes(out),
        stderr=bytes(err),
        timed_out=timed_out,
        truncated=trunc[0],
        duration_s=time.monotonic() - start,
    )
    if check and (timed_out or result.returncode != 0):
        why = f"timed out after {timeout:g}s" if timed_out else f"exit {result.returncode}"
        detail = result.stderr_line()
        raise error(f"{label} failed ({why})" + (f": {detail}" if detail else ""))
    return result


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
