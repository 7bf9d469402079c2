"""Shared plumbing of the in-sandbox drivers: the JSON protocol, deadlines, and cleanup.

Stdlib only: drivers run as plain scripts inside the sandbox (see drivers/__init__.py).

Protocol: the request is one JSON object on stdin with at least `replies` (list of str) and
`reply_timeout` (seconds per reply). The response is one JSON object on stdout:
`{"results": [...], "log": [...]}`, one result per reply, each
`{"status": "ok"|"timeout"|"exited"|"not-run"|"error", "exit_code": int|null,
"stdout": base64, "stderr": base64, "note": str, "elapsed_s": float}`.

Cleanup: a driver makes itself a child subreaper, so every process a reply starts (including
daemons that double-fork or setsid away, and the tmux server) stays its descendant, and
`kill_descendants()` kills them all before the driver exits.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import signal
import sys
import time
from typing import Any

PR_SET_CHILD_SUBREAPER = 36


def read_request() -> dict[str, Any]:
    """The JSON request from stdin."""
    data: dict[str, Any] = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    return data


def emit(results: list[dict[str, Any]], log: list[str]) -> None:
    """Write the JSON response to stdout."""
    sys.stdout.write(json.dumps({"results": results, "log": log}) + "\n")
    sys.stdout.flush()


def result(
    status: str,
    exit_code: int | None = None,
    stdout: bytes = b"",
    stderr: bytes = b"",
    note: str = "",
    elapsed_s: float = 0.0,
) -> dict[str, Any]:
    """One reply's entry in the response."""
    return {
        "status": status,
        "exit_code": exit_code,
        "elapsed_s": round(elapsed_s, 6),
        "stdout": base64.b64encode(stdout).decode("ascii"),
        "stderr": base64.b64encode(stderr).decode("ascii"),
        "note": note,
    }


def not_run(count: int, why: str) -> list[dict[str, Any]]:
    """Entries for replies that were never sent because the session was gone."""
    return [result("not-run", note=why) for _ in range(count)]


def status_of(wait_status: int) -> int:
    """An exit status the way every sandbox reports it: the code, or 128+N for signal N."""
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def returncode_status(code: int) -> int:
    """subprocess's returncode (minus N for signal N) in the 128+N convention."""
    return 128 - code if code < 0 else code


class Deadline:
    """A point in monotonic time."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        """True once the deadline has passed."""
        return time.monotonic() >= self.at


def become_subreaper() -> None:
    """Adopt every orphaned descendant (Linux prctl), so cleanup can find daemons."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # NOTE(h6): the command name may contain spaces and parentheses; fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        kids.setdefault(int(fields[1]), []).append(int(entry))
    return kids


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` in the process tree."""
    kids = _children_map()
    found: list[int] = []
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(kids.get(p, []))
    return found


_STDIN_WAITS = {"x86_64": {0: 0, 23: 1, 270: 1}, "aarch64": {63: 0, 72: 1}}
"""Per architecture, syscall number -> first argument meaning "stdin only": read(0, ...),
select(1, ...) and pselect6(1, ...) (readline waits in pselect6 on fd 0)."""
_CHILD_WAITS = {"x86_64": {61, 247}, "aarch64": {260, 95}}
"""wait4 and waitid: a shell waiting for its foreground command."""


def _syscall(pid: int) -> tuple[int, int] | None:
    """(number, first argument) of the syscall `pid` is blocked in, or None if running/gone."""
    try:
        with open(f"/proc/{pid}/syscall") as fh:
            fields = fh.read().split()
    except OSError:
        return None
    if len(fields) < 2 or not fields[0].isdigit():
        return None
    return int(fields[0]), int(fields[1], 16)


def sleeping(pid: int) -> bool:
    """True when `pid` is asleep (state S): blocked, and not merely waiting for a CPU."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"S"


def _stdin(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/0")
    except OSError:
        return None


def waiting_for_input(pid: int) -> bool:
    """True when shell `pid` and everything below it can only wait for more input.

    Each process sleeps, either blocked reading the shell's own stdin (the pipe or terminal
    the driver feeds) or waiting for a child, and at least one is reading. For a shell fed by a
    driver this means everything sent has been consumed and the shell (or a command such as
    `cat`) wants more: the reply left an unfinished construct (an open quote, a heredoc
    without its end line) or swallowed the completion signal. Reads /proc/PID/syscall.
    """
    machine = os.uname().machine
    reads, waits = _STDIN_WAITS.get(machine), _CHILD_WAITS.get(machine, set())
    source = _stdin(pid)
    if not reads or source is None:
        return False
    readers = 0
    for proc in [pid, *descendants(pid)]:
        # NOTE(h6): a process woken by new input stays "in" its syscall until it gets a CPU,
        # so only a sleeping one counts; on a loaded machine that wake-up can take a while.
        if not sleeping(proc):
            return False
        call = _syscall(proc)
        if call is not None and reads.get(call[0]) == call[1] and _stdin(proc) == source:
            readers += 1
        elif call is None or call[0] not in waits:
            return False
    return readers > 0


class StallWatch:
    """Declares a shell stalled once `waiting_for_input` holds on two looks 50 ms apart."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.since: float | None = None

    def stalled(self, quiet: bool) -> bool:
        """Check again; `quiet` says no output arrived since the previous check."""
        if self.pid is None or not quiet or not waiting_for_input(self.pid):
            self.since = None
            return False
        now = time.monotonic()
        if self.since is None:
            self.since = now
        return now - self.since >= 0.05


STALLED = (
    "stalled: the shell consumed everything and waits for more input, so the completion "
    "signal can never come (a real harness would wait for its timeout)"
)


def kill_descendants(rounds: int = 50) -> int:
    """SIGKILL and reap every descendant of this process; return how many were killed."""
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(rounds):
        victims = descendants(me)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        _reap()
        if not victims:
            break
        time.sleep(0.002)
    return len(killed)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def fail(message: str, count: int, log: list[str]) -> None:
    """Report that the machinery could not start: every reply gets status `error`."""
    emit([result("error", note=message) for _ in range(count)], log)
