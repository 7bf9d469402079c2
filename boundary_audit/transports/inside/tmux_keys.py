"""Driver: replies typed into an interactive bash through a real tmux server (in the sandbox).

Starts `tmux -S <private socket> -f /dev/null new-session -d -s ba -x W -y H [shell argv]`
(no argv: tmux's default, a login shell), waits for the first prompt, then for each reply
builds the key list as Terminal-Bench's `TmuxSession._prepare_keys` does: `[R, "Enter"]`; in
`wait` completion mode trailing Enter keys and newlines are stripped and
`"; tmux wait -S done"`, `"Enter"` appended, then it runs `tmux wait done`. Without `literal`
the keys go in one `send-keys -t ba k1 k2 ...` (tmux parses that argv as a command sequence:
an argument ending in `;` ends the command; each argument is first looked up as a key name);
with `literal` each text key is sent by `send-keys -l` and each Enter by its own `send-keys`
(OpenHands). In `marker` mode the prompt carries the exit status (`PS1` set by a setup line)
and completion is a new marker in `capture-pane`.

Request keys: replies, reply_timeout, output_bytes, payload (see _driverlib), literal,
completion ("wait"|"marker"), shell (argv or empty for a login shell), width, height,
history_limit, setup (lines), ps1, ps1_pattern, append_enter, startup_timeout.

Every wait and capture is a new tmux client process. A reply that fills the run's process
limit (a fork bomb) leaves the driver unable to start one: that reply's result is `broken`
(the session cannot be driven any more), not a driver failure.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NOTE(h6): run as a script, the driver imports its sibling directly
    from boundary_audit.transports.inside._driverlib import (
        STALLED,
        Deadline,
        Reporter,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        sleeping,
        waiting_for_input,
    )
else:
    from _driverlib import (
        STALLED,
        Deadline,
        Reporter,
        become_subreaper,
        kill_descendants,
        not_run,
        read_request,
        result,
        sleeping,
        waiting_for_input,
    )

ENTER_KEYS = {"Enter", "C-m", "KPEnter", "C-j", "^M", "^J"}
EXHAUSTED = frozenset({errno.EAGAIN, errno.ENOMEM, errno.EMFILE, errno.ENFILE})
"""fork/pipe errors that mean the run's process or file limits are full."""
COMPLETION = "; tmux wait -S done"
SESSION = "ba"


class Tmux:
    """A tmux server on a private socket, with one session running the shell."""

    def __init__(self, req: dict[str, Any]) -> None:
        self.dir = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"ba-tmux-{os.getpid()}")
        os.mkdir(self.dir, 0o700)  # NOTE(h6): not tempfile, whose import costs more than a run
        self.base = ["tmux", "-S", os.path.join(self.dir, "s")]
        self.seen = ""
        self.server = 0
        """The tmux server's pid (learned from the first `pane_state`)."""
        start = [
            *self.base,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            str(req["width"]),
            "-y",
            str(req["height"]),
            *req["shell"],
            ";",
            "set-option",
            "-t",
            SESSION,
            "history-limit",
            str(req["history_limit"]),
        ]
        self.cmd(start, check=True)

    def cmd(
        self, argv: list[str], check: bool = False, timeout: float = 5.0
    ) -> subprocess.CompletedProcess[bytes]:
        """Run one tmux client command (ArgvRefused when execve refuses its argv)."""
        try:
            done = subprocess.run(
                argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
            )
        except OSError as exc:
            if exc.errno == errno.E2BIG:
                raise ArgvRefused(f"tmux: cannot execute: {exc.strerror}\n".encode()) from exc
            raise
        if check and done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv[3:5])}: {done.stderr.decode(errors='replace').strip()}"
            )
        return done

    def pane_state(self) -> tuple[int, str] | None:
        """(pid of the pane's shell, cursor and history position), or None if gone.

        Also a round trip through the server: when it answers, it has handled the keys sent
        before (it writes them to the pane as soon as the pane can take them).
        """
        fmt = "#{pid} #{pane_pid} #{cursor_x},#{cursor_y},#{history_size}"
        out = self.cmd([*self.base, "display-message", "-p", "-t", SESSION, fmt])
        words = out.stdout.decode().split()
        if out.returncode != 0 or len(words) != 3 or not words[1].isdigit():
            return None
        self.server = int(words[0])
        return int(words[1]), words[2]

    def stall_watch(self) -> dict[str, Any]:
        """State for `stalled`, taken before the keys are sent: the pane's position then."""
        state = self.pane_state()
        return {"start": state[1] if state else None, "where": None, "since": 0.0}

    def stalled(self, watch: dict[str, Any]) -> bool:
        """True once the pane's shell waits for input and the screen holds still.

        tmux writes the keys to the pane asynchronously, so a screen that never moved from
        where it was before the keys were sent must hold still for a full second; one that
        moved (the typed line was echoed) for 100 ms.
        """
        server_idle = self.server > 0 and sleeping(self.server)  # looked at before we talk to it
        state = self.pane_state()
        now = time.monotonic()
        idle = state is not None and server_idle and waiting_for_input(state[0])
        if state is None or not idle or state[1] != watch["where"]:
            watch["where"], watch["since"] = (state[1] if state else None), now
            return False
        needed = 1.0 if state[1] == watch["start"] else 0.1
        return bool(now - watch["since"] >= needed)

    def alive(self) -> bool:
        """True while the session (and so the pane's shell) exists."""
        return self.cmd([*self.base, "has-session", "-t", SESSION]).returncode == 0

    def capture(self) -> str:
        """The whole pane history, wrapped lines joined."""
        out = self.cmd([*self.base, "capture-pane", "-p", "-J", "-S", "-", "-t", SESSION])
        return out.stdout.decode("utf-8", "replace")

    def delta(self) -> bytes:
        """Pane text added since the last call (the whole pane if history scrolled away)."""
        now = self.capture().rstrip("\n")
        new = now[len(self.seen) :] if now.startswith(self.seen) else now
        self.seen = now
        return new.lstrip("\n").encode("utf-8")

    def send(self, keys: list[tuple[str, bool]], literal: bool) -> bytes:
        """Type `keys`; return tmux's complaints (stderr), if any."""
        target = [*self.base, "send-keys", "-t", SESSION]
        if not literal:
            return self.cmd([*target, *(text for text, _ in keys)]).stderr
        errors = b""
        for text, is_text in keys:
            errors += self.cmd([*target, "-l", text] if is_text else [*target, text]).stderr
        return errors


class ArgvRefused(Exception):
    """execve refused a tmux client's argv (E2BIG); `stderr` is what to report."""

    def __init__(self, stderr: bytes) -> None:
        super().__init__(stderr.decode(errors="replace"))
        self.stderr = stderr


def prepare_keys(reply: str, req: dict[str, Any]) -> list[tuple[str, bool]]:
    """Keys to send as (text, is_reply_text) pairs.

    Terminal-Bench's `_prepare_keys` for `send_keys([R, "Enter"], block=True)`: trailing
    Enter keys and newlines are stripped from the end of the list (in keys mode the reply
    itself is popped when it *is* a key name such as `Enter`), then the completion command
    and Enter are appended. In literal mode the reply is text whatever it spells.
    """
    keys = [(reply, True), ("Enter", False)] if req["append_enter"] else [(reply, True)]
    literal = bool(req["literal"])
    if req["completion"] != "wait" or not _executes(keys[-1], literal):
        return keys
    while keys and _executes(keys[-1], literal):
        text, is_reply = keys[-1]
        if text in ENTER_KEYS and not (literal and is_reply):
            keys.pop()
        else:
            stripped = text.rstrip("\r\n")
            if stripped:
                keys[-1] = (stripped, is_reply)
            else:
                keys.pop()
    return [*keys, (COMPLETION, True), ("Enter", False)]


def _executes(key: tuple[str, bool], literal: bool) -> bool:
    text, is_reply = key
    return (text in ENTER_KEYS and not (literal and is_reply)) or text.endswith(("\r", "\n"))


def wait_done(tmux: Tmux, deadline: Deadline, watch: dict[str, Any]) -> str:
    """`tmux wait done`: 'ok', 'timeout', 'stalled', or 'exited' when the server went away."""
    waiter = subprocess.Popen(
        [*tmux.base, "wait", "done"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        while True:
            try:
                code = waiter.wait(timeout=min(0.1, max(0.01, deadline.remaining())))
            except subprocess.TimeoutExpired:
                if deadline.expired():
                    return "timeout"
                if tmux.stalled(watch):
                    # NOTE(h6): a shell back at its prompt may just have sent the signal our
                    # waiter has yet to wake up for; give it a moment before believing a stall.
                    try:
                        return "ok" if waiter.wait(timeout=1.0) == 0 else "exited"
                    except subprocess.TimeoutExpired:
                        return "stalled"
                continue
            return "ok" if code == 0 else "exited"
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()


def wait_marker(
    tmux: Tmux, pattern: re.Pattern[str], before: int, deadline: Deadline, watch: dict[str, Any]
) -> tuple[str, int | None]:
    """Wait for a new prompt marker with nothing after it; ('ok', status) or a failure."""
    while not deadline.expired():
        text = tmux.capture().rstrip()
        found = list(pattern.finditer(text))
        if len(found) > before and text[found[-1].end() :].strip() == "":
            return "ok", int(found[-1].group(1))
        if not tmux.alive():
            return "exited", None
        if tmux.stalled(watch):
            return "stalled", None
        time.sleep(0.01)
    return "timeout", None


def type_line(
    tmux: Tmux, line: str, req: dict[str, Any], deadline: Deadline
) -> tuple[str, int | None, bytes]:
    """Type one line and wait for completion the configured way."""
    pattern = re.compile(req["ps1_pattern"])
    before = len(pattern.findall(tmux.capture())) if req["completion"] == "marker" else 0
    watch = tmux.stall_watch()
    errors = tmux.send(prepare_keys(line, req), bool(req["literal"]))
    if req["completion"] == "marker":
        state, status = wait_marker(tmux, pattern, before, deadline, watch)
    else:
        state, status = wait_done(tmux, deadline, watch), None
    if state in ("timeout", "stalled"):
        return state, status, errors
    # NOTE(h6): completion only counts while the session lives. A waiter that was attached
    # when the pane's shell exited returns 0 too: on its way out the server releases every
    # `wait` client (cmd_wait_for_flush) as if the channel had been signalled. Whether the
    # waiter attached before the shell read `exit` was a race; the session's presence is not.
    return ("ok" if tmux.alive() else "exited"), status, errors


def run_reply(tmux: Tmux, reply: str, req: dict[str, Any]) -> dict[str, Any]:
    """Type one reply; report completion, the pane text it added, and tmux's complaints."""
    started = time.monotonic()
    try:
        return _run_reply(tmux, reply, req, started)
    except OSError as exc:
        if exc.errno not in EXHAUSTED:
            raise
        note = (
            f"the driver could not start a tmux client ({exc.strerror}): the reply exhausted "
            "the run's process or file limits"
        )
        return result("broken", None, note=note, elapsed_s=time.monotonic() - started)


def _run_reply(tmux: Tmux, reply: str, req: dict[str, Any], started: float) -> dict[str, Any]:
    try:
        state, status, errors = type_line(tmux, reply, req, Deadline(float(req["reply_timeout"])))
    except ArgvRefused as exc:
        # The keys are one argument of the tmux client: over 128 KiB execve refuses it
        # (E2BIG), as it does for a harness that sends them the same way. Nothing was typed;
        # the session goes on. 126, a shell's status for a failed exec.
        note = "the keys could not be sent: the kernel refused the tmux client's argv (E2BIG)"
        return result("ok", 126, b"", exc.stderr, note=note, elapsed_s=time.monotonic() - started)
    elapsed = time.monotonic() - started
    if state == "exited":
        return result(
            "exited",
            None,
            b"",
            errors,
            elapsed_s=elapsed,
            note="the reply ended the session (the pane's shell exited)",
        )
    out = tmux.delta()
    if state in ("timeout", "stalled"):
        why = STALLED if state == "stalled" else "no completion signal before the timeout"
        return result("timeout", None, out, errors, elapsed_s=elapsed, note=why)
    note = "" if req["completion"] == "marker" else "exit status not observable (tmux wait)"
    return result("ok", status, out, errors, note=note, elapsed_s=elapsed)


def start(req: dict[str, Any]) -> Tmux:
    """Start the server, wait for the first prompt, type the setup lines."""
    tmux = Tmux(req)
    deadline = Deadline(float(req["startup_timeout"]))
    while not tmux.capture().strip():
        if deadline.expired():
            raise RuntimeError("the pane showed no prompt")
        time.sleep(0.01)
    setup = list(req["setup"])
    if req["completion"] == "marker":  # the marker must exist before any line can complete
        setup.insert(0, f"export PS1='{req['ps1']}'")
    for line in setup:
        state, _, errors = type_line(tmux, line, req, deadline)
        if state != "ok":
            raise RuntimeError(f"setup line {line!r}: {state} {errors.decode(errors='replace')}")
    tmux.delta()
    return tmux


def main() -> int:
    req = read_request()
    replies: list[str] = req["replies"]
    reporter = Reporter(req)
    become_subreaper()
    try:
        tmux = start(req)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        kill_descendants()
        reporter.fail(f"tmux: {exc}")
        return 1
    reporter.ready()
    for index, reply in enumerate(replies):
        outcome = run_reply(tmux, reply, req)
        reporter.report(outcome)
        if outcome["status"] != "ok":
            for entry in not_run(len(replies) - index - 1, "not run: the session is gone"):
                reporter.report(entry)
            break
    reporter.done([f"killed {kill_descendants()} leftover process(es)"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
