# mypy: disable-error-code="import-not-found"
"""In-sandbox: the harness's way to its model, a TCP listener on 127.0.0.1 relayed to a socket.

Usage (inside a run, as the program the sandbox's reaper starts):
    python -E -s -S netrelay.py HEX|- SOCKET PORT -- ARGV...

The sandbox has a network namespace of its own, with nothing but its loopback: the host's
model endpoint (the mock server) is reachable only through the unix socket SOCKET, which the
host relays to it (`transports._relay.UnixRelay`, as for the ssh transport's sshd). This
program binds 127.0.0.1:PORT first, so the endpoint is there before the harness starts, then
forks: the child executes ARGV (strace and the seal, in an observation run; the harness
itself otherwise), and this process relays every connection to PORT to a fresh connection to
SOCKET, both ways, until ARGV has exited. Its exit status is ARGV's (128+N for a death by
signal N). Nothing else is reachable: the listener is the namespace's only way out.

Being outside ARGV, it is not traced (an observation's trace shows the harness and its
children only) and not ended by the seal, which spares its ancestors. Before it serves, it
makes itself non-dumpable (no process of the run can open its /proc/PID/mem) and, given HEX
(`seccomp.program_here()` in hex: an observation run's outer filter lets ptrace through for
the tracer), stacks the default filter on itself as the seal does, so it holds nothing the
harness lacks. `-` skips that (a run whose filter is already the default one).

Stdlib only. Exit 125 with one line on stderr when the listener cannot be set up.
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
import threading

from seal import SEAL_FAILED, seal  # this folder is sys.path[0] when run as a script

PR_SET_DUMPABLE = 4
RELAY_FAILED = "boundary-audit: cannot relay the model endpoint"


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def main(args: list[str]) -> int:
    if len(args) < 5 or args[3] != "--":
        print(f"{RELAY_FAILED}: usage: netrelay.py HEX|- SOCKET PORT -- ARGV...", file=sys.stderr)
        return 125
    program, path, port, argv = args[0], args[1], args[2], args[4:]
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
    except (OSError, ValueError) as exc:
        print(f"{RELAY_FAILED}: 127.0.0.1:{port}: {exc}", file=sys.stderr)
        return 125
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        listener.close()
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"{RELAY_FAILED}: cannot execute {argv[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if program != "-":
        try:
            seal(bytes.fromhex(program))
        except (ValueError, OSError) as exc:
            print(f"{SEAL_FAILED}: the relay: {exc}", file=sys.stderr)
            os.kill(child, 9)
            _wait(child)
            return 125
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    status = _wait(child)
    listener.close()
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
