"""In-sandbox: install the default seccomp filter, run the harness, end what it leaves behind.

Usage (inside an observation run, as the first program strace starts):
    python -E -s -S seal.py HEX -- ARGV...

HEX is `seccomp.program_here()` (the default filter every other run gets) in hex. The run's
outer filter lets ptrace through for the tracer (`seccomp.TRACING`); this stacks the default
filter on top, and a seccomp filter is never removed, so ARGV and everything it starts cannot
call ptrace or read another process's memory through process_vm_readv. `no_new_privs` is
already set (bwrap sets it), which is what lets an unprivileged process install a filter.

Then it forks: the child executes ARGV (the harness's root image, whose parent is this
process), and this process waits for it. When the harness has exited, whatever it left
running (a tmux server, a daemon, a `setsid` child) is given `GRACE_S` to end and is then
killed: strace waits for every process it traces, so without this an observation would last
until the sandbox's timeout whenever a harness leaves something behind. Every process of the
run but pid 1 (the reaper), our parent (strace) and ourselves is such a leftover once the
harness is gone (and the model endpoint's relay, strace's parent when there is one: every
ancestor is spared). The exit status is the harness's (128+N for a death by signal N).

Stdlib only: it runs with `-E -s -S`, before anything of the harness. Exit 125 with one line
on stderr when the filter cannot be installed (a machinery failure, never the harness's); 127
when ARGV cannot be executed, as a shell says.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

GRACE_S = 0.5
"""How long what the harness left running may take to end once the harness has exited."""
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SEAL_FAILED = "boundary-audit: cannot seal the observed harness"
"""The first words of the line on stderr when the filter cannot be installed."""
EXEC_FAILED = "boundary-audit: cannot execute the harness"
"""The first words of the line on stderr when ARGV cannot be executed."""


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seal(program: bytes) -> None:
    """Install `program` (struct sock_filter[] bytes) as a seccomp filter of this process."""
    if not program or len(program) % 8:
        raise ValueError(f"a filter program is a multiple of 8 bytes, not {len(program)}")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print(f"{SEAL_FAILED}: usage: seal.py HEX -- ARGV...", file=sys.stderr)
        return 125
    try:
        seal(bytes.fromhex(args[0]))
    except (ValueError, OSError) as exc:
        print(f"{SEAL_FAILED}: {exc}", file=sys.stderr)
        return 125
    argv = args[2:]
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"{EXEC_FAILED}: {argv[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    status = _wait(child)
    _end_leftovers()
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def ancestors() -> set[int]:
    """This process's ancestors up to the reaper: strace, and what started it (the model
    endpoint's relay, `netrelay.py`), which outlive the harness on purpose."""
    found: set[int] = set()
    pid = os.getppid()
    while pid > 1 and pid not in found and len(found) < 64:
        found.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(f.read().rsplit(b") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return found


def leftovers() -> list[int]:
    """Live processes of the run that are neither the reaper, our ancestors, nor this one."""
    mine = {1, os.getpid(), *ancestors()}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in mine:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _end_leftovers() -> None:
    deadline = time.monotonic() + GRACE_S
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in leftovers():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
