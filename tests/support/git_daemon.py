"""A real `git daemon` on 127.0.0.1, and a TCP proxy in front of it that can hold, slow or cut
the stream (to clone "mid-way" on purpose). Both are started by fixtures and stopped after.

    def test_clone(git_daemon, tmp_path):
        make_repo(git_daemon.base / "r.git", {...}, bare=True)
        url = git_daemon.url("r.git")            # git://127.0.0.1:PORT/r.git

    def test_slow(git_daemon, git_proxy):
        git_proxy.rate = 64 * 1024               # bytes/s from server to client
        url = git_proxy.url("r.git")             # same repository, through the proxy
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit._subprocess import kill_group
from tests.support.gitrepos import git_env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(
    port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 10.0
) -> None:
    """Return once 127.0.0.1:port accepts a connection; raise if `proc` dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {proc.returncode} before listening")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.5),
        ):
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


class GitDaemon:
    """`git daemon --export-all` serving every repository under `base`."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start on a free port (a few attempts, since the port is picked before binding)."""
        self.base.mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):
            self.port = free_port()
            argv = [
                "git",
                "daemon",
                "--reuseaddr",
                f"--base-path={self.base}",
                "--export-all",
                "--listen=127.0.0.1",
                f"--port={self.port}",
                str(self.base),
            ]
            self._proc = subprocess.Popen(
                argv,
                env=git_env(),
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_for_port(self.port, self._proc)
                return
            except RuntimeError:
                self.stop()
        raise RuntimeError("git daemon did not start")

    def url(self, name: str) -> str:
        """git:// URL of the repository `base/name`."""
        return f"git://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        """Kill the daemon and the upload-pack children in its process group."""
        if self._proc is not None:
            kill_group(self._proc.pid)
            self._proc.wait(timeout=10)
            self._proc = None


class TcpProxy:
    """Forwards 127.0.0.1:port to 127.0.0.1:target; counts connections and downstream bytes.

    `gate` (set = flowing) holds the server-to-client stream; `rate` limits it (bytes/s);
    `freeze()` stalls the connections open now (new ones flow); `drop_all()` cuts every open
    connection.
    """

    def __init__(self, target: int) -> None:
        self.target = target
        self.connections = 0
        self.bytes_down = 0
        self.rate: float | None = None
        self.gate = threading.Event()
        self.gate.set()
        self._open: list[tuple[socket.socket, socket.socket, list[threading.Thread]]] = []
        self._frozen: dict[int, threading.Event] = {}
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def url(self, name: str) -> str:
        """git:// URL of `name` through the proxy."""
        return f"git://127.0.0.1:{self.port}/{name}"

    def freeze(self) -> None:
        """Stall every connection open now: it stays open, but no more data flows down it."""
        with self._lock:
            for _, server, _ in self._open:
                self._frozen.setdefault(id(server), threading.Event())

    def drop_all(self) -> None:
        """Cut every forwarded connection: shut both ends, wait for the pumps, then close.

        NOTE: a socket is closed only after the threads using it have returned; closing it
        under a blocked thread would let its descriptor number be reused by a new socket
        that the stale thread then reads or writes.
        """
        with self._lock:
            conns, self._open = self._open, []
            frozen, self._frozen = self._frozen, {}
        for released in frozen.values():
            released.set()
        for client, server, pumps in conns:
            for s in (client, server):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            for t in pumps:
                t.join(timeout=10)
            client.close()
            server.close()

    def close(self) -> None:
        """Stop accepting (waking the blocked accept first) and cut everything."""
        self.gate.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._acceptor.join(timeout=10)
        self._listener.close()
        self.drop_all()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            pumps = [
                threading.Thread(target=self._pump, args=(client, server, False), daemon=True),
                threading.Thread(target=self._pump, args=(server, client, True), daemon=True),
            ]
            with self._lock:
                self.connections += 1
                self._open.append((client, server, pumps))
            for t in pumps:
                t.start()

    def _pump(self, src: socket.socket, dst: socket.socket, down: bool) -> None:
        try:
            while True:
                chunk = src.recv(4096 if down else 65536)
                if not chunk:
                    break
                if down:
                    self.gate.wait()
                    stalled = self._frozen.get(id(src))
                    if stalled is not None:
                        stalled.wait()
                        break
                    if self.rate:
                        time.sleep(len(chunk) / self.rate)
                dst.sendall(chunk)
                if down:
                    self.bytes_down += len(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)


@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[GitDaemon]:
    """A git daemon serving tmp_path/served (build repositories there with make_repo)."""
    daemon = GitDaemon(tmp_path / "served")
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def git_proxy(git_daemon: GitDaemon) -> Iterator[TcpProxy]:
    """A TcpProxy in front of `git_daemon`."""
    proxy = TcpProxy(git_daemon.port)
    try:
        yield proxy
    finally:
        proxy.close()
