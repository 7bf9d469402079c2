"""ssh's ProxyCommand inside the sandbox: relay stdin/stdout to the unix socket in argv[1].

The sandbox has no route to the host's loopback; boundary-audit listens on a unix socket in
the run's workspace and forwards the stream to its sshd. Stdlib only.
"""

from __future__ import annotations

import os
import select
import socket
import sys


def relay(path: str) -> None:
    """Copy bytes both ways until both directions have ended."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    inputs = {0: "stdin", sock.fileno(): "sock"}
    while inputs:
        ready, _, _ = select.select(list(inputs), [], [])
        for fd in ready:
            data = os.read(fd, 65536) if fd == 0 else sock.recv(65536)
            if not data:
                del inputs[fd]
                if fd == 0:
                    sock.shutdown(socket.SHUT_WR)
                else:
                    return
                continue
            if fd == 0:
                sock.sendall(data)
            else:
                _write_all(1, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":
    relay(sys.argv[1])
