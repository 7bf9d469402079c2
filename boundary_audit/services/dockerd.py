"""A Docker engine on a private socket: reuse the one running there, or start and own one.

No engine runs by default on the machines boundary-audit targets, and the system socket
(/var/run/docker.sock) may belong to someone else. So the engine lives in a state directory
of its own (default `<user cache>/boundary-audit/dockerd`, or `BOUNDARY_AUDIT_DOCKERD_DIR`):

    docker.sock   the API socket          data/   --data-root (images, containers)
    dockerd.pid   --pidfile               exec/   --exec-root (containerd state)
    daemon.json   an empty --config-file  dockerd.log

(the socket and the exec root move to a private `/tmp/ba-dockerd-<hash>/` when the state
directory is too long for a unix socket path under them; it is removed when the engine stops),

started as `dockerd --iptables=false --ip-forward=false --bridge=none` (containers run with
`--network none` anyway, and the host's firewall and its `net.ipv4.ip_forward` are left alone:
without `--ip-forward=false` the engine turns on the host's packet forwarding). One engine
serves every boundary-audit process of the user, reference-counted (`supervisor.Shared`):
`Dockerd.start()` takes a lease (starting the engine first if none answers, under the
directory's lock, so two processes never start two), `stop()` drops it, and the process that
drops the last lease of an engine boundary-audit started stops it (SIGTERM, then SIGKILL of its
process group). An engine that was already answering and that boundary-audit did not start is
never stopped. The lease is registered with the supervisor, so a killed process's lease is
dropped by its guardian; an engine we start is recorded and leased before we wait for it to
answer, so a process killed during that wait does not leave it running unrecorded, and a
recorded engine that no live lease holds is stopped before another one starts.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from boundary_audit import supervisor
from boundary_audit.errors import EnvironmentUnavailable
from boundary_audit.services import DaemonProcess

ENV_DIR = "BOUNDARY_AUDIT_DOCKERD_DIR"
MAX_SOCKET_PATH = 100
MAX_EXEC_ROOT = 70
"""containerd's sockets go under `--exec-root`, the longest `containerd/containerd.sock.ttrpc`
(33 bytes) beside it; past sun_path's 108 bytes containerd cannot listen and dockerd gives up
after 15 s with "timeout waiting for containerd to start". A longer exec root moves to /tmp."""


@dataclass(frozen=True)
class DockerEngine:
    """An engine that answers on `socket`."""

    socket: Path

    @property
    def url(self) -> str:
        """The base URL for the docker SDK and DOCKER_HOST."""
        return f"unix://{self.socket}"


def default_state_dir() -> Path:
    """Where the private engine keeps its socket and data unless told otherwise."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override)
    return platformdirs.user_cache_path("boundary-audit") / "dockerd"


def ping(sock: Path, timeout: float = 2.0) -> bool:
    """True if a Docker engine answers `GET /_ping` with OK on the unix socket `sock`."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock))
            s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
    except OSError:
        return False
    return reply.startswith(b"HTTP/1.") and reply.rstrip().endswith(b"OK")


class Dockerd:
    """The private engine of one state directory."""

    def __init__(self, state_dir: Path | None = None, *, die_with_parent: bool = False) -> None:
        self.state_dir = (state_dir or default_state_dir()).absolute()
        self.socket = _socket_path(self.state_dir)
        self.exec_root = _exec_root(self.state_dir)
        self.die_with_parent = die_with_parent
        """Have the kernel SIGTERM an engine we start when this process dies (util-linux
        `setpriv --pdeathsig`): for test fixtures, whose teardown a killed run never reaches."""
        self._daemon: DaemonProcess | None = None
        self._lease: Path | None = None
        self._token: int | None = None

    @property
    def engine(self) -> DockerEngine:
        """The engine's address (valid once `start` returned)."""
        return DockerEngine(self.socket)

    @property
    def owned(self) -> bool:
        """True when this object started the engine (it may outlive us: others may lease it)."""
        return self._daemon is not None

    def start(self, timeout: float = 60.0) -> DockerEngine:
        """Lease the engine answering on the private socket, or start one and wait for it."""
        if self._lease is not None:
            return self.engine
        self.state_dir.mkdir(parents=True, exist_ok=True)
        shared = supervisor.Shared(self.state_dir)
        with shared.locked():
            spawned = False
            if not ping(self.socket):
                program = shutil.which("dockerd") or _sbin("dockerd")
                if program is None:
                    raise EnvironmentUnavailable(
                        "dockerd is not installed", hint="apt-get install docker.io"
                    )
                shared.stop_leftover()
                self._spawn(program)
                assert self._daemon is not None
                shared.set_owner(
                    self._daemon.pid, mounts_under=self._roots(), scratch=self._scratch()
                )
                spawned = True
            # NOTE: the engine is ours and leased before we wait for it: a run killed while
            # the engine starts leaves a lease whose drop (the guardian's) stops the engine
            self._lease = shared.take()
            self._token = supervisor.ledger().register(
                "lease", dir=str(self.state_dir), lease=str(self._lease)
            )
            if spawned:
                self._await(shared, timeout)
        return self.engine

    def _await(self, shared: supervisor.Shared, timeout: float) -> None:
        """Wait for the engine we spawned to answer; if it dies or does not answer in time,
        stop it, take back our lease and its record, and raise (under `shared.locked`)."""
        assert self._daemon is not None
        deadline = time.monotonic() + timeout
        while not ping(self.socket, timeout=1.0):
            if not self._daemon.running() or time.monotonic() > deadline:
                why = self._daemon.log_tail() or "no answer on its socket"
                self._daemon.stop()
                self._daemon = None
                shared.stop_owner()  # NOTE: a daemon that died leaves its mounts
                self._let_go(lambda lease: lease.unlink(missing_ok=True))  # already locked
                raise EnvironmentUnavailable(
                    f"dockerd did not start: {why}", hint=f"see {self.state_dir / 'dockerd.log'}"
                )
            time.sleep(0.1)

    def _scratch(self) -> list[str]:
        """The directories outside the state directory made for the engine (the short
        `/tmp/ba-dockerd-<hash>/` of a long one), removed when it stops."""
        return sorted(
            str(d) for d in {self.socket.parent, self.exec_root.parent} - {self.state_dir}
        )

    def _spawn(self, program: str) -> None:
        self._clear_stale_pidfile()
        for d in self._scratch():
            _private_dir(Path(d))
        config = self.state_dir / "daemon.json"
        config.write_text("{}\n")
        setpriv = shutil.which("setpriv") if self.die_with_parent else None
        self._daemon = DaemonProcess(
            [
                *([setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []),
                program,
                f"--host=unix://{self.socket}",
                f"--data-root={self.state_dir / 'data'}",
                f"--exec-root={self.exec_root}",
                f"--pidfile={self.state_dir / 'dockerd.pid'}",
                f"--config-file={config}",
                "--iptables=false",
                "--ip-forward=false",
                "--bridge=none",
            ],
            log=self.state_dir / "dockerd.log",
            supervised=False,
        )

    def _roots(self) -> list[str]:
        """The directories the engine mounts under (its data and exec roots)."""
        return sorted({str(self.state_dir), str(self.exec_root)})

    def _clear_stale_pidfile(self) -> None:
        pidfile = self.state_dir / "dockerd.pid"
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            comm = ""
        if comm != "dockerd":
            pidfile.unlink(missing_ok=True)

    def stop(self) -> None:
        """Drop this object's lease; the engine stops with the last lease (see the module)."""
        self._let_go(supervisor.Shared(self.state_dir).drop)
        if self._daemon is not None and not self._daemon.running():
            self._daemon.stop()  # reaps our child; a running one belongs to the other leases
            self._daemon = None

    def _let_go(self, drop: Callable[[Path], object]) -> None:
        """Give up this object's lease (`drop` removes it) and then its ledger entry."""
        lease, token, self._lease, self._token = self._lease, self._token, None, None
        if lease is not None:
            drop(lease)
        if token is not None:
            supervisor.ledger().release(token)

    def __enter__(self) -> Dockerd:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _short_dir(state_dir: Path) -> Path:
    """The /tmp directory that holds what cannot live under a long `state_dir`."""
    digest = hashlib.sha256(str(state_dir).encode()).hexdigest()[:12]
    return Path("/tmp") / f"ba-dockerd-{digest}"


def _socket_path(state_dir: Path) -> Path:
    """`state_dir/docker.sock`, or a short path under /tmp when that exceeds sun_path."""
    sock = state_dir / "docker.sock"
    if len(str(sock)) <= MAX_SOCKET_PATH:
        return sock
    return _short_dir(state_dir) / "docker.sock"


def _exec_root(state_dir: Path) -> Path:
    """`state_dir/exec`, or a short path under /tmp when containerd's sockets would not fit."""
    root = state_dir / "exec"
    if len(str(root)) <= MAX_EXEC_ROOT:
        return root
    return _short_dir(state_dir) / "exec"


def _private_dir(path: Path) -> None:
    """Create `path` mode 0700, or accept an existing one only if it is a directory of ours
    that no one else can write: a name under /tmp can be taken first by anyone."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise EnvironmentUnavailable(f"cannot create {path}: {exc.strerror}") from exc
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise EnvironmentUnavailable(
            f"{path} exists and is not a private directory of this user",
            hint=f"remove {path} if it is not in use",
        )


def _sbin(name: str) -> str | None:
    for d in ("/usr/sbin", "/sbin", "/usr/local/sbin"):
        if os.access(f"{d}/{name}", os.X_OK):
            return f"{d}/{name}"
    return None
