"""Driver: a persistent interactive bash on a pty, driven SWE-ReX style (runs in the sandbox).

The shell is spawned on a fresh pty (it is its controlling terminal, so bash is interactive:
readline, history expansion, job control, the tty line discipline). The driver waits for the
PS1 marker, types the setup line, and then for each reply: writes `reply + "\\n"`, waits for
the PS1 marker, writes the exit-code probe (`"\\necho EXITCODESTART$?EXITCODEEND\\n"`), and
reads the status from its echo, exactly as `swerex.runtime.local.BashSession` does with
pexpect. Every byte reaches bash through the pty, so tabs complete, control characters act,
and a command that reads stdin reads what is typed next.

Request keys: replies, reply_timeout, output_bytes, payload (see _driverlib), shell (argv),
env (added to the environment), ps1, setup (one line), exit_probe, exit_pattern, echo
(bool), rows, cols, startup_timeout.

Memory stays bounded whatever a reply prints: of the text since the reply was sent the
driver keeps the first `output_bytes` (what it reports) and the last `WINDOW` bytes (where
the marker may still come), and drops what lies between.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NOTE(h6): run as a script, the driver imports its sibling directly
    from boundary_audit.transports.inside._driverlib import (
        STALLED,
        Deadline,
        Reporter,
        StallWatch,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        status_of,
    )
else:
    from _driverlib import (
        STALLED,
        Deadline,
        Reporter,
        StallWatch,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        status_of,
    )


READ = 64 * 1024
"""Bytes read from the pty at a time."""
WINDOW = 2 * READ
"""Bytes kept at the end of the buffer for marker searches once a reply's output passed the
cap: a match is never longer than one read, so one straddling two reads survives a trim."""


class SessionGone(Exception):
    """The shell closed the pty (it exited or was killed)."""


class Stalled(Exception):
    """The shell waits for more input and the awaited text has not come."""


class PtyShell:
    """An interactive shell on a pty, with pexpect-like send and expect over raw bytes."""

    def __init__(self, req: dict[str, Any]) -> None:
        env = dict(os.environ)
        env.update(req.get("env") or {})
        argv = list(req["shell"])
        pid, fd = pty.fork()
        if pid == 0:  # child: the pty slave is stdin/stdout/stderr and the controlling tty
            try:
                if not req.get("echo", False):
                    attrs = termios.tcgetattr(0)
                    attrs[3] &= ~termios.ECHO
                    termios.tcsetattr(0, termios.TCSANOW, attrs)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        size = struct.pack("HHHH", int(req.get("rows", 24)), int(req.get("cols", 80)), 0, 0)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
        os.set_blocking(fd, False)
        self.buf = bytearray()
        self.pos = 0
        self.wait_status: int | None = None
        self.cap = int(req["output_bytes"])
        self.mark = 0
        """Where the current reply's output starts in `buf`."""
        self.dropped = False
        """True when output of the current reply was dropped (it passed the cap)."""

    def begin(self) -> int:
        """Start a reply's output at the current position; returns that position."""
        self.mark, self.dropped = self.pos, False
        return self.pos

    def _trim(self) -> None:
        """Drop what lies between the reply's first `cap` bytes and the last WINDOW bytes."""
        cut = self.mark + self.cap
        excess = len(self.buf) - WINDOW - cut
        if excess < WINDOW:  # trim in large steps: each one moves the tail
            return
        del self.buf[cut : cut + excess]
        self.dropped = True
        self.pos = cut if self.pos <= cut + excess else self.pos - excess

    def _read_some(self, timeout: float) -> bool:
        """Append what the shell wrote within `timeout`; False if nothing came."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, READ)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return False
            raise SessionGone() from exc
        if not chunk:
            raise SessionGone()
        self.buf += chunk
        self._trim()
        return True

    def send(self, data: bytes, deadline: Deadline) -> None:
        """Write `data` to the pty, draining output meanwhile so neither side blocks."""
        view = memoryview(data)
        while view:
            if deadline.expired():
                raise TimeoutError
            _, writable, _ = select.select([], [self.fd], [], 0.05)
            if writable:
                try:
                    view = view[os.write(self.fd, view) :]
                except BlockingIOError:
                    pass
                except OSError as exc:
                    raise SessionGone() from exc
            self._read_some(0)

    def expect(
        self, pattern: re.Pattern[bytes], deadline: Deadline, watch: StallWatch | None = None
    ) -> re.Match[bytes]:
        """Wait until `pattern` appears after the last match; move past it."""
        scan = self.pos
        while True:
            match = pattern.search(self.buf, max(scan, self.pos))
            if match:
                self.pos = match.end()
                return match
            if deadline.expired():
                raise TimeoutError
            scan = max(self.pos, len(self.buf) - WINDOW)  # searched already, but for a tail
            before = len(self.buf)
            got = self._read_some(min(0.05, deadline.remaining()))
            if len(self.buf) < before:  # trimmed: the kept tail starts at pos
                scan = self.pos
            if watch is not None and watch.stalled(quiet=not got):
                raise Stalled

    def exit_status(self) -> int | None:
        """Reap the shell if it has ended; its status (minus the signal for a kill), else None."""
        if self.wait_status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.wait_status = status
        return None if self.wait_status is None else status_of(self.wait_status)

    def close(self) -> None:
        """Hang up the terminal and make sure the shell is gone."""
        try:
            os.close(self.fd)
        except OSError:
            pass


def run_reply(shell: PtyShell, reply: str, req: dict[str, Any]) -> dict[str, Any]:
    """Send one reply, wait for the prompt marker, then probe and parse the exit status."""
    started = time.monotonic()
    deadline = Deadline(float(req["reply_timeout"]))
    ps1 = re.compile(re.escape(req["ps1"].encode()))
    start = shell.begin()
    watch = StallWatch(shell.pid)
    try:
        shell.send(reply.encode("utf-8") + b"\n", deadline)
        before = shell.buf[start : shell.expect(ps1, deadline, watch).start()]
        shell.send(req["exit_probe"].encode("utf-8") + b"\n", deadline)
        probe = shell.expect(re.compile(req["exit_pattern"].encode()), deadline, watch)
        shell.expect(ps1, deadline, watch)
    except (TimeoutError, Stalled) as exc:
        note = STALLED if isinstance(exc, Stalled) else "no prompt marker before the timeout"
        return result(
            "timeout",
            None,
            bytes(shell.buf[start:]),
            note=note,
            elapsed_s=time.monotonic() - started,
            truncated=shell.dropped,
        )
    except SessionGone:
        return _gone(shell, start, started)
    code = int(probe.group(1)) if probe.groups() else None
    return result(
        "ok", code, bytes(before), elapsed_s=time.monotonic() - started, truncated=shell.dropped
    )


def _gone(shell: PtyShell, start: int, started: float) -> dict[str, Any]:
    status = None
    for _ in range(200):
        status = shell.exit_status()
        if status is not None:
            break
        time.sleep(0.005)
    note = f"the reply ended the session (shell exit status {status})"
    return result(
        "exited",
        status,
        bytes(shell.buf[start:]),
        note=note,
        elapsed_s=time.monotonic() - started,
        truncated=shell.dropped,
    )


def start_shell(req: dict[str, Any]) -> PtyShell:
    """Spawn the shell, wait for its first prompt, type the setup line, wait for the marker."""
    shell = PtyShell(req)
    deadline = Deadline(float(req.get("startup_timeout", 5.0)))
    ps1 = re.compile(re.escape(req["ps1"].encode()))
    try:
        # NOTE(h6): /etc/bash.bashrc may replace PS1, so the first prompt is any output at all
        # (SWE-ReX sleeps 0.3 s instead); the setup line then sets the marker for good.
        shell.expect(re.compile(rb"."), deadline)
        if req.get("setup"):
            shell.send(req["setup"].encode("utf-8") + b"\n", deadline)
            shell.expect(ps1, deadline)
    except TimeoutError:
        raise RuntimeError(
            f"no prompt marker {req['ps1']!r} within {req.get('startup_timeout', 5.0)}s; "
            f"the shell printed {bytes(shell.buf[-200:])!r}"
        ) from None
    except SessionGone:
        raise RuntimeError(f"the shell exited at start: {bytes(shell.buf[-200:])!r}") from None
    return shell


def main() -> int:
    req = read_request()
    replies: list[str] = req["replies"]
    reporter = Reporter(req)
    become_subreaper()
    try:
        shell = start_shell(req)
    except (RuntimeError, OSError) as exc:
        kill_descendants()
        reporter.fail(str(exc))
        return 1
    reporter.ready()
    for index, reply in enumerate(replies):
        outcome = run_reply(shell, reply, req)
        reporter.report(outcome)
        if outcome["status"] != "ok":
            for entry in not_run(len(replies) - index - 1, "not run: the session is gone"):
                reporter.report(entry)
            break
    shell.close()
    reporter.done([f"killed {kill_descendants()} leftover process(es)"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
