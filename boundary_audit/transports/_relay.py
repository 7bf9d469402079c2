"""The host half of the ssh client's way out of the sandbox: a unix socket relayed to sshd.

The sandbox has its own network namespace, so the in-sandbox ssh client cannot reach the
host's 127.0.0.1. Its `ProxyCommand` (`inside/unix_relay.py`) connects to a unix socket in
the run's workspace instead; `UnixRelay` listens there and pumps each connection to the
sshd's TCP port, one thread per direction.
"""

from __future__ import annotations

import socket
import threading


class UnixRelay:
    """Listens on a unix socket (in a run's workspace) and relays each stream to sshd's port."""

    def __init__(self, path: str, port: int) -> None:
        self.path = path
        self.port = port
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(8)
        self._open: list[socket.socket] = [self._listener]
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError:
                return
            upstream.settimeout(None)
            with self._lock:
                self._open += [client, upstream]
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()

    def close(self) -> None:
        """Stop listening and cut every relayed connection."""
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._open = []


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
