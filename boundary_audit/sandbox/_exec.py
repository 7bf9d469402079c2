"""Spawning one confined run and tearing it down: the Popen wrapper every host backend uses.

`_subprocess.run` kills a process group and then waits for the output pipes to close. A
sandbox needs more: a descriptor passed through to an in-sandbox reaper (the status pipe), and
a sweep of the processes that escaped the group (setsid, double fork) *before* waiting for the
pipes, because such a process holds them open. So this module owns that sequence:

    spawn (own session, umask 022, scrubbed env) -> wait up to the timeout
    -> sweep(main_pid, timed_out) kills stragglers and counts them -> drain output (capped)

and raises SandboxError when the output pipes are still held after the sweep and the grace
period, i.e. when something escaped that the backend could not find.
"""

from __future__ import annotations

import errno
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from boundary_audit._subprocess import popen, wait
from boundary_audit.errors import EnvironmentUnavailable, SandboxError

Sweep = Callable[[int, bool], int]
"""(main pid, timed out) -> number of escaped processes it found and killed."""


@dataclass(frozen=True)
class Spawned:
    """What one confined process left behind."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    status: str
    """Text the in-sandbox reaper wrote to the status pipe ("" without one)."""
    timed_out: bool
    truncated: bool
    escaped: int
    duration_s: float


class _ArgvTooLong(Exception):
    """execve refused the argv (E2BIG: one argument over 128 KiB, or all over ARG_MAX)."""


class StatusPipe:
    """A pipe whose write end is inherited by the reaper (by number) and closed for the reply."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()

    def close(self) -> None:
        """Close both ends; safe to call twice."""
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.read_fd = self.write_fd = -1


class _Capped:
    """Drains one stream on a thread, keeping the first `cap` bytes and counting the rest."""

    def __init__(self, stream: BinaryIO, cap: int) -> None:
        self.data = bytearray()
        self.truncated = False
        self._stream, self._cap = stream, cap
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        while chunk := read(65536):
            room = self._cap - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > room:
                self.truncated = True
        self._stream.close()


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: bytes | None,
    timeout: float,
    output_cap: int,
    grace_s: float,
    sweep: Sweep,
    status: StatusPipe | None = None,
    extra_fds: Sequence[int] = (),
) -> Spawned:
    """Run `argv` confined as described in the module docstring; never raises for the program.

    `extra_fds` are passed to the child by number (bwrap's seccomp program)."""
    start = time.monotonic()
    try:
        proc = _popen(argv, env, cwd, stdin, status, extra_fds)
    except _ArgvTooLong as exc:
        # The reply itself is the argument the kernel refused: what any harness that passes it
        # in argv gets. A shell reports a failed exec as 126; so does this run.
        return Spawned(
            returncode=126, stdout=b"", stderr=f"{exc}\n".encode(), status="",
            timed_out=False, truncated=False, escaped=0, duration_s=time.monotonic() - start,
        )  # fmt: skip
    status_reader = None
    if status is not None:
        os.close(status.write_fd)
        status.write_fd = -1
        status_reader = _Capped(os.fdopen(status.read_fd, "rb", buffering=0), 4096)
        status.read_fd = -1
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capped(proc.stdout, output_cap), _Capped(proc.stderr, output_cap)  # type: ignore[arg-type]
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    timed_out = False
    try:
        wait(proc, timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    escaped = sweep(proc.pid, timed_out)
    deadline = time.monotonic() + grace_s
    try:
        wait(proc, grace_s)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILLed but unkillable (D state)
        raise SandboxError(
            f"{Path(argv[0]).name}: still running {grace_s:g}s after SIGKILL"
        ) from None
    readers = [out, err] + ([status_reader] if status_reader else [])
    for reader in readers:
        reader.thread.join(timeout=max(0.0, deadline - time.monotonic()))
    if any(r.thread.is_alive() for r in readers):
        raise SandboxError(
            f"{Path(argv[0]).name}: output still held open {grace_s:g}s after teardown: "
            "a process escaped the sandbox and could not be found"
        )
    return Spawned(
        returncode=None if timed_out else proc.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        status=status_reader.data.decode("ascii", "replace") if status_reader else "",
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
        escaped=escaped,
        duration_s=time.monotonic() - start,
    )


def _popen(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    stdin: bytes | None,
    status: StatusPipe | None,
    extra_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    try:
        return popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            umask=0o022,
            pass_fds=((status.write_fd,) if status is not None else ()) + tuple(extra_fds),
        )
    except FileNotFoundError as exc:
        raise EnvironmentUnavailable(f"sandbox: program not found: {argv[0]}") from exc
    except OSError as exc:
        if exc.errno == errno.E2BIG:
            raise _ArgvTooLong(f"{argv[0]}: cannot execute: {exc.strerror}") from exc
        raise SandboxError(f"sandbox: cannot start {argv[0]}: {exc.strerror}") from exc


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
    except OSError:
        pass
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass


def signal_status(returncode: int | None) -> int | None:
    """Popen's -N for a signal death, as the shell convention 128+N that every backend reports."""
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode
