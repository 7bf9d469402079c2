"""A real OpenSSH server on 127.0.0.1 for the `ssh` transport, whose sessions run in the sandbox.

Why this shape: an sshd cannot run inside the bwrap sandbox (uid 0 there, so privilege
separation needs chroot(2), setgroups(2) and setuid(2), and bwrap drops every capability; the
kernel also refuses an unprivileged nested user namespace there). So one sshd per process runs
on the host, with keys generated for the process, unprivileged in a user namespace of its own
(`unprivileged`), and its one job is to hand each remote command back to the sandbox:

- `ForceCommand` runs `sshd_forced.py` (shipped beside this module, found through the
  package's data API), which takes the client's command string from
  `SSH_ORIGINAL_COMMAND` (set by sshd; never parsed on the host) and the run's token from
  `BA_SSH_TOKEN` (sent by the client, `AcceptEnv`), and asks this process over a unix control
  socket to run `[$SHELL, "-c", command]` through `sandbox.run` in that run's workspace. The
  remote side is a second confined run over the same files, as a remote host would be, and R
  is parsed there exactly once, like `bash -c R` under any sshd.
- The client runs inside the sandbox, where the host's loopback is out of reach (bwrap has its
  own network namespace); its `ProxyCommand` (`inside/unix_relay.py`) carries the SSH stream
  over a unix socket in the workspace, which `transports/_relay.py` forwards to the sshd's
  TCP port.

Tokens are random per transport call, so one run cannot reach another run's workspace.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import shlex
import shutil
import socket
import socketserver
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from boundary_audit import _subprocess, supervisor
from boundary_audit._subprocess import BASE_PATH
from boundary_audit.errors import EnvironmentUnavailable
from boundary_audit.services import DaemonProcess

PROGRAMS = ("sshd", "ssh", "ssh-keygen", "unshare", "mount")
LOGIN_UID = 1000
FORCED = Path(str(resources.files("boundary_audit.services") / "sshd_forced.py"))
"""The forced command: a stand-alone script (stdlib only) that sshd runs on the host."""


@dataclass(frozen=True)
class SshKeys:
    """Private keys in OpenSSH format and the client's public key line."""

    host_private: str
    client_private: str
    client_public: str


@dataclass(frozen=True)
class RemoteCommand:
    """What sshd's session asked for: the command string and the session's variables."""

    command: str
    shell: str
    env: dict[str, str]


@dataclass(frozen=True)
class RemoteResult:
    """What the sandboxed remote command did."""

    exit_code: int
    stdout: bytes
    stderr: bytes


Handler = Callable[[RemoteCommand], RemoteResult]


def program(name: str) -> str | None:
    """Absolute path of `name` on the base PATH (sshd lives in /usr/sbin)."""
    return shutil.which(name, path=BASE_PATH)


def unavailable() -> str | None:
    """Why an sshd cannot be served here, or None."""
    missing = [name for name in PROGRAMS if program(name) is None]
    if missing:
        return (
            f"needs {', '.join(missing)} "
            "(apt-get install openssh-server openssh-client util-linux mount)"
        )
    if os.geteuid() != 0:
        return "needs root on the host (sshd runs in a user namespace mapped to it)"
    return None


def generate_keys() -> SshKeys:
    """A fresh ed25519 host key and client key pair (ssh-keygen)."""
    with tempfile.TemporaryDirectory(prefix="ba-sshkeys-") as tmp:
        for name in ("host", "client"):
            _subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"boundary-audit-{name}",
                 "-f", f"{tmp}/{name}"],
                check=True, error=EnvironmentUnavailable, what="ssh-keygen", timeout=30,
            )  # fmt: skip
        files = {n: (Path(tmp) / n).read_text("ascii") for n in ("host", "client", "client.pub")}
    return SshKeys(files["host"], files["client"], files["client.pub"])


def unprivileged(state: Path, argv: list[str]) -> list[str]:
    """`argv` run as uid 1000 in a private user and mount namespace, with our own passwd.

    An unprivileged sshd skips privilege separation's chroot and setuid (its handshake is
    about twice as fast, and it needs no /run/sshd), and can log in only its own uid: the one
    user of the generated passwd, `root` (so USER and LOGNAME read as in the sandbox), home
    `/`, shell /bin/bash. The outer namespace maps root so the bind mounts are allowed; the
    inner one maps uid 1000 to it. Files keep their host owner (root).
    """
    _write(state / "passwd", f"root:x:{LOGIN_UID}:{LOGIN_UID}:boundary-audit:/:/bin/bash\n", 0o644)
    _write(state / "group", f"root:x:{LOGIN_UID}:\n", 0o644)
    q = shlex.quote
    inner = (
        f"mount --bind {q(str(state / 'passwd'))} /etc/passwd && "
        f"mount --bind {q(str(state / 'group'))} /etc/group && "
        f"exec unshare --user --map-user={LOGIN_UID} --map-group={LOGIN_UID} -- "
        + " ".join(q(a) for a in argv)
    )
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
            "--", "/bin/sh", "-c", inner]  # fmt: skip


class SshService:
    """One sshd on 127.0.0.1, its control socket, and the registry of live runs."""

    def __init__(self) -> None:
        self.keys = generate_keys()
        self.dir = Path(tempfile.mkdtemp(prefix="ba-sshd-"))
        self._dir_token = supervisor.ledger().register("tree", path=str(self.dir))
        self.port = 0
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self._control: _ControlServer | None = None
        self._daemon: DaemonProcess | None = None

    def start(self) -> None:
        """Start the control socket and sshd; wait until sshd accepts connections."""
        self._control = _ControlServer(str(self.dir / "ctl.sock"), self)
        threading.Thread(target=self._control.serve_forever, daemon=True).start()
        self.port = _free_port()
        config = self._write_config()
        argv = unprivileged(
            self.dir, [program("sshd") or "/usr/sbin/sshd", "-D", "-e", "-f", str(config)]
        )
        self._daemon = DaemonProcess(argv, log=self.dir / "sshd.log")
        deadline = time.monotonic() + 10
        while not _accepts(self.port):
            if not self._daemon.running() or time.monotonic() > deadline:
                why = self._daemon.log_tail() or "no answer on its port"
                self.stop()
                raise EnvironmentUnavailable(f"sshd did not start: {why}")
            time.sleep(0.01)

    def _write_config(self) -> Path:
        _write(self.dir / "host_key", self.keys.host_private, 0o600)
        _write(self.dir / "authorized_keys", self.keys.client_public, 0o644)
        words = [sys.executable, "-E", "-s", "-S", str(FORCED), str(self.dir / "ctl.sock")]
        forced = " ".join(shlex.quote(w) for w in words)
        lines = [
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.dir / 'host_key'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
            f"PidFile {self.dir / 'sshd.pid'}",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "StrictModes no", "UseDNS no", "PrintMotd no",
            "PrintLastLog no", "AcceptEnv BA_SSH_TOKEN", "PermitTTY no", "X11Forwarding no",
            "AllowTcpForwarding no", "AllowAgentForwarding no", f"ForceCommand {forced}",
            "KexAlgorithms curve25519-sha256", "Ciphers aes128-gcm@openssh.com",
        ]  # fmt: skip
        config = self.dir / "sshd_config"
        _write(config, "\n".join(lines) + "\n", 0o600)
        return config

    @property
    def sshd_pid(self) -> int | None:
        """The pid of the sshd wrapper process (its process group holds sshd), or None."""
        return self._daemon.pid if self._daemon is not None else None

    def register(self, token: str, handler: Handler) -> None:
        """Route remote commands carrying `token` to `handler` until `unregister`."""
        with self._lock:
            self._handlers[token] = handler

    def unregister(self, token: str) -> None:
        """Forget `token`; later commands with it are refused."""
        with self._lock:
            self._handlers.pop(token, None)

    def handle(self, token: str, request: RemoteCommand) -> RemoteResult:
        """Run one remote command for the run that owns `token`."""
        with self._lock:
            handler = self._handlers.get(token)
        if handler is None:
            return RemoteResult(255, b"", b"boundary-audit sshd: unknown or expired run token\n")
        return handler(request)

    def stop(self) -> None:
        """Stop sshd and the control socket, remove the state dir. Idempotent."""
        if self._daemon is not None:
            self._daemon.stop(timeout=5)
            self._daemon = None
        if self._control is not None:
            self._control.shutdown()
            self._control.server_close()
            self._control = None
        shutil.rmtree(self.dir, ignore_errors=True)
        supervisor.ledger().release(self._dir_token)


class _ControlServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 64  # one connection per remote command; runs in parallel

    def __init__(self, path: str, service: SshService) -> None:
        self.service = service
        super().__init__(path, _ControlHandler)
        os.chmod(path, 0o600)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per request; where none can be started, serve it here rather than drop it.

        socketserver closes a request whose thread fails to start with the request unread,
        which the forced command sees as "Connection reset by peer".
        """
        try:
            super().process_request(request, client_address)
        except RuntimeError:
            self.process_request_thread(request, client_address)


class _ControlHandler(socketserver.StreamRequestHandler):
    """One line of JSON in (token, command, shell, env), one line of JSON out."""

    def handle(self) -> None:
        try:
            msg: dict[str, Any] = json.loads(self.rfile.readline().decode("utf-8"))
            req = RemoteCommand(str(msg["command"]), str(msg["shell"]), dict(msg["env"]))
            res = self.server.service.handle(str(msg["token"]), req)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - answer the helper whatever went wrong
            res = RemoteResult(255, b"", f"boundary-audit sshd: {exc}\n".encode())
        out = {"exit_code": res.exit_code, "stdout": base64.b64encode(res.stdout).decode(),
               "stderr": base64.b64encode(res.stderr).decode()}  # fmt: skip
        self.wfile.write(json.dumps(out).encode() + b"\n")


def _write(path: Path, text: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            return sock.recv(4).startswith(b"SSH-")
    except OSError:
        return False


_shared: SshService | None = None
_shared_lock = threading.Lock()


def shared_service() -> SshService:
    """The process-wide sshd, started on first use and stopped at interpreter exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            why = unavailable()
            if why:
                raise EnvironmentUnavailable(f"ssh transport: {why}")
            service = SshService()
            service.start()
            atexit.register(service.stop)
            _shared = service
        return _shared


def running_service() -> SshService | None:
    """The process-wide sshd if it has been started (benchmarks read its pid), else None."""
    with _shared_lock:
        return _shared


def stop_shared() -> None:
    """Stop the process-wide sshd now (tests; otherwise it stops at exit). Idempotent."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.stop()
            atexit.unregister(_shared.stop)
            _shared = None
