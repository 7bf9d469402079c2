"""Driver: a persistent non-interactive bash fed through a pipe, LangChain style (in the sandbox).

Mirrors `langchain.agents.middleware.shell_tool.ShellSession` (langchain 1.5.2): bash is
started with stdin, stdout and stderr as pipes in its own session; for each reply the driver
writes `R` (plus a newline if R lacks one), then `printf '<marker><uuid> %s\\n' $?` and a
newline, and reads stdout and stderr line by line until a stdout line *starts with* the
marker; the text after the space is the exit status. Output that does not end in a newline
therefore hides the marker, a command that reads stdin eats the marker line, and `exit` ends
the session (stdout reaches EOF).

Request keys: replies, reply_timeout, output_bytes, payload (see _driverlib), shell (argv),
env (null: inherit; an object: the whole environment), marker_prefix.

Memory stays bounded whatever a reply prints: each stream keeps its first `output_bytes`, and
a line longer than `LONG_LINE` is taken in pieces (only a piece that starts a line can start
with the marker).
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
        STALLED,
        Capped,
        Deadline,
        Reporter,
        StallWatch,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        returncode_status,
    )
else:
    from _driverlib import (
        STALLED,
        Capped,
        Deadline,
        Reporter,
        StallWatch,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        returncode_status,
    )


LONG_LINE = 64 * 1024
"""A line still unterminated at this length is handed on in pieces."""


class PipeShell:
    """bash on three pipes, read line by line on both output streams."""

    def __init__(self, req: dict[str, Any]) -> None:
        env = req.get("env")
        self.proc = subprocess.Popen(
            list(req["shell"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
        assert self.proc.stdout and self.proc.stderr and self.proc.stdin
        self.streams = {
            self.proc.stdout.fileno(): bytearray(),
            self.proc.stderr.fileno(): bytearray(),
        }
        for fd in self.streams:
            os.set_blocking(fd, False)
        self.out_fd = self.proc.stdout.fileno()
        self.open = set(self.streams)
        self.at_start = dict.fromkeys(self.streams, True)
        """Per stream: whether the next `take_line` begins a line."""

    def write(self, data: bytes) -> bool:
        """Write and flush; False when bash has closed its stdin (it is gone)."""
        assert self.proc.stdin
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def pump(self, timeout: float) -> bool:
        """Move whatever bash wrote into the per-stream buffers; False if nothing came."""
        if not self.open:
            time.sleep(min(timeout, 0.01))
            return False
        got = False
        ready, _, _ = select.select(list(self.open), [], [], timeout)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            got = True
            if chunk:
                self.streams[fd] += chunk
            else:
                self.open.discard(fd)
        return got

    def take_line(self, fd: int) -> bytes | None:
        """The next complete line of stream `fd`, its unterminated rest at EOF, or a piece of
        a line that reached LONG_LINE without ending (`at_start` says whether it begins one)."""
        buf = self.streams[fd]
        nl = buf.find(b"\n")
        if nl < 0:
            if (fd in self.open and len(buf) < LONG_LINE) or not buf:
                return None
            nl = len(buf) - 1
        line = bytes(buf[: nl + 1])
        del buf[: nl + 1]
        self.at_start[fd] = line.endswith(b"\n")
        return line


def run_reply(shell: PipeShell, reply: str, req: dict[str, Any]) -> dict[str, Any]:
    """Send one reply and the done marker; collect lines until the marker starts a line."""
    started = time.monotonic()
    deadline = Deadline(float(req["reply_timeout"]))
    marker = f"{req['marker_prefix']}{os.urandom(16).hex()}".encode()  # a uuid4's worth
    body = reply if reply.endswith("\n") else reply + "\n"
    payload = body.encode("utf-8") + b"printf '" + marker + b" %s\\n' $?\n"
    cap = int(req["output_bytes"])
    out, err = Capped(cap), Capped(cap)
    err_fd = shell.proc.stderr.fileno() if shell.proc.stderr else -1
    if not shell.write(payload):
        return _ended(shell, out, err, started)
    watch, quiet = StallWatch(shell.proc.pid), False
    while True:
        _drain(shell, err_fd, err)
        at_start = shell.at_start[shell.out_fd]
        line = shell.take_line(shell.out_fd)
        while line is not None:
            if at_start and line.startswith(marker):
                code = line[len(marker) :].strip()
                status = int(code) if code.lstrip(b"-").isdigit() else None
                # bash wrote the reply's stderr before it ran the marker's printf, so it sits
                # in the pipe now even when the marker's line was read first: collect it.
                while shell.pump(0):
                    _drain(shell, err_fd, err)
                _drain(shell, err_fd, err)
                return _done("ok", status, out, err, started)
            out.add(line)
            at_start = shell.at_start[shell.out_fd]
            line = shell.take_line(shell.out_fd)
        if shell.out_fd not in shell.open:
            return _ended(shell, out, err, started)
        stalled = watch.stalled(quiet)
        if deadline.expired() or stalled:
            out.add(bytes(shell.streams[shell.out_fd]))  # an unterminated last line
            shell.streams[shell.out_fd].clear()
            why = STALLED if stalled else "no line starting with the done marker before the timeout"
            return _done("timeout", None, out, err, started, note=why)
        quiet = not shell.pump(min(0.05, deadline.remaining()))


def _done(
    status: str, code: int | None, out: Capped, err: Capped, started: float, note: str = ""
) -> dict[str, Any]:
    return result(
        status, code, bytes(out.data), bytes(err.data), note=note,
        elapsed_s=time.monotonic() - started, truncated=out.truncated or err.truncated,
    )  # fmt: skip


def _drain(shell: PipeShell, fd: int, into: Capped) -> None:
    line = shell.take_line(fd) if fd in shell.streams else None
    while line is not None:
        into.add(line)
        line = shell.take_line(fd)


def _ended(shell: PipeShell, out: Capped, err: Capped, started: float) -> dict[str, Any]:
    try:
        status: int | None = returncode_status(shell.proc.wait(timeout=2))
    except subprocess.TimeoutExpired:
        status = None
    if shell.proc.stderr:
        err.add(bytes(shell.streams[shell.proc.stderr.fileno()]))
    out.add(bytes(shell.streams[shell.out_fd]))
    note = f"the reply ended the session (shell exit status {status})"
    return _done("exited", status, out, err, started, note=note)


def main() -> int:
    req = read_request()
    replies: list[str] = req["replies"]
    reporter = Reporter(req)
    become_subreaper()
    try:
        shell = PipeShell(req)
    except OSError as exc:
        reporter.fail(f"cannot start {req['shell'][0]}: {exc.strerror}")
        return 1
    reporter.ready()
    for index, reply in enumerate(replies):
        outcome = run_reply(shell, reply, req)
        reporter.report(outcome)
        if outcome["status"] != "ok":
            for entry in not_run(len(replies) - index - 1, "not run: the session is gone"):
                reporter.report(entry)
            break
    reporter.done([f"killed {kill_descendants()} leftover process(es)"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
