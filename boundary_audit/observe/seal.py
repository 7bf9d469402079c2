"""In-sandbox: install the default seccomp filter on this process, then execute the harness.

Usage (inside an observation run, as the first program strace starts):
    python -E -s -S seal.py HEX -- ARGV...

HEX is `seccomp.program_here()` (the default filter every other run gets) in hex. The run's
outer filter lets ptrace through for the tracer (`seccomp.TRACING`); this stacks the default
filter on top, and a seccomp filter is never removed, so ARGV and everything it starts cannot
call ptrace or read another process's memory: the reaper and strace cannot be attached to.
`no_new_privs` is already set (bwrap sets it), which is what lets an unprivileged process
install a filter. Stdlib only: it runs with `-E -s -S`, before anything of the harness.

Exit 125 with one line on stderr when the filter cannot be installed (the observation is then
a machinery failure, never the harness's); 127 when ARGV cannot be executed, as a shell says.
"""

from __future__ import annotations

import ctypes
import os
import sys

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
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"{EXEC_FAILED}: {argv[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
