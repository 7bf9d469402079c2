"""Shared plumbing of the in-sandbox drivers: the protocol, deadlines, output caps, cleanup.

Stdlib only: drivers run as plain scripts inside the sandbox (see inside/__init__.py).

Protocol. The request is one JSON object on stdin with at least `replies` (list of str),
`reply_timeout` (seconds per reply), `output_bytes` (the cap on each reply's stdout and on
its stderr) and `payload` (a path in the workspace's obs dir that does not exist yet). The
driver answers as it goes, one JSON line per event on stdout, so that what it said survives
its death:

    {"event": "ready"}                     the machinery is up; replies are about to be sent
    {"event": "result", "status": "ok"|"timeout"|"exited"|"broken"|"not-run",
     "exit_code": int|null, "elapsed_s": float, "note": str, "truncated": bool,
     "stdout": [offset, length, sha256], "stderr": [...]}        one per reply, in order
    {"event": "done", "log": [str, ...]}    everything is cleaned up
    {"event": "error", "note": str}         the machinery could not start (nothing was sent)

The output bytes themselves go to the payload file at the given offsets (with their SHA-256,
so that the host can tell bytes a reply changed there), each capped at `output_bytes`
(`truncated` says so): a reply may print far more than the sandbox lets a
driver's stdout carry, and events stay small. `broken` means the reply made the machinery
unusable (it exhausted the process limit, so no tmux client could start).

A reply can kill its driver (`kill -9 -1` reaches every process of the run but pid 1). The
driver then dies by that signal, never by an exception (SIGINT is reset to its default), and
the host reads the events that got out: the results before, and that the reply in progress
killed it.

Cleanup: a driver makes itself a child subreaper, so every process a reply starts (including
daemons that double-fork or setsid away, and the tmux server) stays its descendant, and
`kill_descendants()` kills them all before the driver exits.
"""

from __future__ import annotations

import ctypes
import hashlib
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


class Reporter:
    """The driver's half of the protocol: events on stdout, output bytes in the payload file."""

    def __init__(self, req: dict[str, Any]) -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a reply's SIGINT kills, like SIGTERM
        self.cap = int(req["output_bytes"])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(req["payload"], flags, 0o600)
        self.offset = 0

    def _event(self, event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    def _put(self, data: bytes) -> list[Any]:
        data = data[: self.cap]
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        start, self.offset = self.offset, self.offset + len(data)
        return [start, len(data), hashlib.sha256(data).hexdigest()]

    def ready(self) -> None:
        """The machinery is up."""
        self._event({"event": "ready"})

    def report(self, entry: dict[str, Any]) -> None:
        """One reply's result (from `result`), its output capped into the payload file."""
        out, err = entry["stdout"], entry["stderr"]
        truncated = bool(entry["truncated"]) or len(out) > self.cap or len(err) > self.cap
        self._event(
            {**entry, "event": "result", "truncated": truncated,
             "stdout": self._put(out), "stderr": self._put(err)}
        )  # fmt: skip

    def done(self, log: list[str]) -> None:
        """Everything was reported and cleaned up."""
        os.close(self.fd)
        self._event({"event": "done", "log": log})

    def fail(self, message: str) -> None:
        """The machinery could not start; no reply was sent."""
        self._event({"event": "error", "note": message})


def result(
    status: str,
    exit_code: int | None = None,
    stdout: bytes = b"",
    stderr: bytes = b"",
    note: str = "",
    elapsed_s: float = 0.0,
    truncated: bool = False,
) -> dict[str, Any]:
    """One reply's entry, for `Reporter.report`."""
    return {
        "status": status,
        "exit_code": exit_code,
        "elapsed_s": round(elapsed_s, 6),
        "stdout": bytes(stdout),
        "stderr": bytes(stderr),
        "note": note,
        "truncated": truncated,
    }


def not_run(count: int, why: str) -> list[dict[str, Any]]:
    """Entries for replies that were never sent because the session was gone."""
    return [result("not-run", note=why) for _ in range(count)]


class Capped:
    """The first `cap` bytes of a stream, and whether more came."""

    def __init__(self, cap: int) -> None:
        self.data = bytearray()
        self.cap = cap
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        """Keep what fits of `chunk`."""
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > max(room, 0):
            self.truncated = True


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
