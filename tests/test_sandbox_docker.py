"""The docker backend's own machinery: the private engine, the locally built image, cleanup."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import docker
import pytest

from boundary_audit import supervisor
from boundary_audit.errors import EnvironmentUnavailable, ExitCode
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox import docker as docker_backend
from boundary_audit.sandbox.docker import DockerSandbox
from boundary_audit.services import dockerd as dockerd_module
from boundary_audit.services import images
from boundary_audit.services.dockerd import (
    Dockerd,
    DockerEngine,
    _exec_root,
    _private_dir,
    _socket_path,
    ping,
)
from boundary_audit.services.images import Entry, rootfs_digest, rootfs_tar


def test_digest_covers_path_mode_and_content() -> None:
    base = [Entry("etc/a", 0o644, data=b"x"), Entry("bin", 0o777, link="usr/bin")]
    assert rootfs_digest(base) == rootfs_digest(list(base))
    assert len(rootfs_digest(base)) == 16
    changed = [
        [Entry("etc/a", 0o644, data=b"y"), base[1]],
        [Entry("etc/a", 0o600, data=b"x"), base[1]],
        [Entry("etc/b", 0o644, data=b"x"), base[1]],
        [base[0], Entry("bin", 0o777, link="usr/sbin")],
    ]
    assert len({rootfs_digest(e) for e in [base, *changed]}) == 5


def test_tarball_is_reproducible_and_root_owned() -> None:
    entries = [
        Entry("usr/bin/tool", 0o755, data=b"#!/bin/sh\n"),
        Entry("bin", 0o777, link="usr/bin"),
        Entry("tmp", 0o1777, is_dir=True),
    ]
    data = rootfs_tar(entries)
    assert data == rootfs_tar(entries)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["bin", "tmp", "usr", "usr/bin", "usr/bin/tool"]
    assert members["bin"].issym() and members["bin"].linkname == "usr/bin"
    assert members["usr/bin/tool"].mode == 0o755 and members["tmp"].mode == 0o1777
    assert {(m.uid, m.gid, m.mtime) for m in members.values()} == {(0, 0, 0)}


def test_host_rootfs_has_the_shells_and_their_libraries() -> None:
    paths = {e.path: e for e in images.rootfs_entries()}
    for needed in ("usr/bin/bash", "usr/bin/sh", "usr/bin/git", "usr/bin/env", "etc/passwd"):
        assert needed in paths
    assert paths["lib"].link == "usr/lib" and paths["bin"].link == "usr/bin"
    assert paths["usr/bin/sh"].source == Path(os.path.realpath("/usr/bin/dash"))
    assert any(p.startswith("usr/lib") and "libc.so" in p for p in paths)


def test_long_state_dirs_get_a_short_socket() -> None:
    long_dir = Path("/x" * 60)
    sock = _socket_path(long_dir)
    assert sock.parent.parent == Path("/tmp") and sock.name == "docker.sock"
    assert sock.parent.name.startswith("ba-dockerd-") and len(str(sock)) < 100
    assert _socket_path(Path("/tmp/s")) == Path("/tmp/s/docker.sock")


def test_long_state_dirs_get_a_short_exec_root_beside_the_socket() -> None:
    # containerd listens on <exec root>/containerd/containerd.sock.ttrpc: past sun_path's 108
    # bytes it cannot, and dockerd gives up after 15 s ("timeout waiting for containerd")
    long_dir = Path("/tmp/" + "x" * 70)
    root = _exec_root(long_dir)
    assert root.parent.name.startswith("ba-dockerd-") and root.name == "exec"
    assert _socket_path(long_dir) == long_dir / "docker.sock"  # that one still fits
    longer = Path("/tmp/" + "x" * 95)
    assert _exec_root(longer) == _socket_path(longer).parent / "exec"  # beside the socket
    assert len(str(root / "containerd" / "containerd.sock.ttrpc")) < 108
    assert _exec_root(Path("/tmp/s")) == Path("/tmp/s/exec")
    assert _exec_root(Path("/tmp/" + "x" * 60)) == Path("/tmp/" + "x" * 60 + "/exec")  # 70
    assert _exec_root(Path("/tmp/" + "x" * 61)).parent.name.startswith("ba-dockerd-")


def test_a_short_dir_under_tmp_is_ours_and_private_or_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    _private_dir(mine)
    assert mine.stat().st_mode & 0o777 == 0o700
    _private_dir(mine)  # ours already: accepted
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    (tmp_path / "link").symlink_to(mine)
    (tmp_path / "file").write_text("")
    for taken in ("open", "link", "file"):
        with pytest.raises(EnvironmentUnavailable) as err:
            _private_dir(tmp_path / taken)
        assert err.value.message == (
            f"{tmp_path / taken} exists and is not a private directory of this user"
        )
        assert err.value.exit_code == ExitCode.ENVIRONMENT


def _mounts_under(root: Path) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [p for p in (line.split()[4] for line in lines) if p.startswith(str(root))]


@pytest.mark.skipif(os.geteuid() != 0, reason="bind mounts need root")
def test_a_dockerd_that_dies_leaves_no_mount_under_its_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dockerd bind-mounts its data root on itself as it starts; one that fails after that and
    # exits leaves the mount behind, and the state directory can then not be removed
    fake = tmp_path / "dockerd"
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --data-root=*) root="${a#--data-root=}";; esac; done\n'
        'mkdir -p "$root/sub" && mount --bind "$root" "$root" && mount -t tmpfs t "$root/sub"\n'
        "echo 'failed to start containerd: timeout' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(dockerd_module.shutil, "which", lambda _: str(fake))
    state = tmp_path / "state"
    with pytest.raises(EnvironmentUnavailable) as err:
        Dockerd(state).start(timeout=10)
    assert err.value.message == "dockerd did not start: failed to start containerd: timeout"
    assert (state / "data" / "sub").is_dir()
    assert _mounts_under(state) == []


def test_ping_is_false_without_an_engine(tmp_path: Path) -> None:
    assert ping(tmp_path / "none.sock") is False
    (tmp_path / "file.sock").write_text("")
    assert ping(tmp_path / "file.sock") is False


def test_missing_dockerd_is_an_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dockerd_module.shutil, "which", lambda _: None)
    monkeypatch.setattr(dockerd_module, "_sbin", lambda _: None)
    with pytest.raises(EnvironmentUnavailable) as err:
        Dockerd(tmp_path).start()
    assert err.value.exit_code == ExitCode.ENVIRONMENT
    assert (err.value.message, err.value.hint) == (
        "dockerd is not installed",
        "apt-get install docker.io",
    )


def test_a_dockerd_that_dies_is_reported_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "dockerd"
    fake.write_text("#!/bin/sh\necho 'failed to start daemon: boom' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(dockerd_module.shutil, "which", lambda _: str(fake))
    with pytest.raises(EnvironmentUnavailable) as err:
        Dockerd(tmp_path / "state").start(timeout=10)
    assert err.value.message == "dockerd did not start: failed to start daemon: boom"
    assert err.value.hint == f"see {tmp_path / 'state' / 'dockerd.log'}"


def test_an_engine_whose_starter_is_killed_while_it_starts_is_stopped(tmp_path: Path) -> None:
    # the engine is recorded as ours and leased before the wait for its socket (up to a
    # minute), so the killed starter's guardian drops the lease and stops it; before, it was
    # left running unrecorded and every later run leased it as someone else's engine
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    fake = bin_dir / "dockerd"
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'pid'}\nexec sleep 300\n")
    fake.chmod(0o755)
    script = (
        "from pathlib import Path\n"
        "from boundary_audit.services.dockerd import Dockerd\n"
        f"Dockerd(Path({str(state)!r})).start(timeout=120)\n"
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    starter = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int((tmp_path / "pid").read_text())
        record = json.loads((state / "owner.json").read_text())
        assert record["pid"] == pid and len(list((state / "leases").iterdir())) == 1
    finally:
        starter.kill()
        starter.wait()

    # the guardian reaps the engine first, then removes its record: wait for both (under
    # load the record outlived the pid for a moment and the old check, done at the pid's
    # death, saw it)
    def stopped() -> bool:
        return not _alive(pid) and not (state / "owner.json").exists()

    deadline = time.monotonic() + 30
    while not stopped() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)
    assert not (state / "owner.json").exists() and list((state / "leases").iterdir()) == []


def test_a_leftover_engine_of_ours_that_no_lease_holds_is_stopped_before_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    leftover = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        shared = supervisor.Shared(state)
        with shared.locked():
            shared.set_owner(leftover.pid)
        fake = tmp_path / "dockerd"
        fake.write_text("#!/bin/sh\necho 'failed to start daemon: boom' >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setattr(dockerd_module.shutil, "which", lambda _: str(fake))
        with pytest.raises(EnvironmentUnavailable) as err:
            Dockerd(state).start(timeout=10)
        assert err.value.message == "dockerd did not start: failed to start daemon: boom"
        assert leftover.wait(timeout=5) == -signal.SIGTERM
        assert not (state / "owner.json").exists() and list((state / "leases").iterdir()) == []
    finally:
        leftover.kill()
        leftover.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount needs root")
def test_a_stopped_daemons_scratch_dirs_are_removed_unless_a_mount_is_below(
    tmp_path: Path,
) -> None:
    # the short /tmp/ba-dockerd-<hash>/ of a long state dir outlived every engine stopped
    state, empty, busy = tmp_path / "state", tmp_path / "empty", tmp_path / "busy"
    for d in (state, empty / "exec" / "x", busy / "m"):
        d.mkdir(parents=True)
    (empty / "exec" / "x" / "f").write_text("left by the engine")
    daemon = subprocess.Popen(["sleep", "300"], start_new_session=True)
    subprocess.run(["mount", "-t", "tmpfs", "ba-scratch-test", str(busy / "m")], check=True)
    try:
        shared = supervisor.Shared(state)
        with shared.locked():
            shared.set_owner(daemon.pid, scratch=[str(empty), str(busy)])
            assert shared.stop_owner()
        assert daemon.wait(timeout=5) == -signal.SIGTERM
        assert not empty.exists()
        assert (busy / "m").is_dir() and _mounts_under(busy) == [str(busy / "m")]
    finally:
        daemon.kill()
        daemon.wait()
        supervisor.unmount(busy / "m")


def test_stale_pidfile_is_cleared(tmp_path: Path) -> None:
    (tmp_path / "dockerd.pid").write_text(str(os.getpid()))  # a live pid that is not dockerd
    Dockerd(tmp_path)._clear_stale_pidfile()
    assert not (tmp_path / "dockerd.pid").exists()


@pytest.mark.docker
def test_a_running_engine_is_reused_and_left_running(dockerd_service: Dockerd) -> None:
    again = Dockerd(dockerd_service.state_dir)
    assert again.start() == DockerEngine(dockerd_service.socket)
    assert not again.owned
    again.stop()
    assert ping(dockerd_service.socket)


IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")


@pytest.mark.docker
def test_an_engine_we_start_leaves_the_hosts_packet_forwarding_off() -> None:
    # dockerd turns net.ipv4.ip_forward on as it starts unless told not to (a fresh machine
    # boots with it off: the attack corpus's judge saw the knob change under every docker run)
    if IP_FORWARD.read_bytes() != b"0\n":
        pytest.skip("the host forwards packets already: a change could not be seen")
    # NOTE(tests): a short state dir (not tmp_path) keeps containerd's socket path below
    # sun_path's limit, as the session's engine does (tests/support/dockerd.py)
    state = Path(tempfile.mkdtemp(prefix="ba-dockerd-"))
    service = Dockerd(state, die_with_parent=True)
    try:
        service.start()
        assert service.owned
        assert IP_FORWARD.read_bytes() == b"0\n"
    finally:
        service.stop()
        shutil.rmtree(state, ignore_errors=True)
        IP_FORWARD.write_bytes(b"0\n")  # as it was, should the engine have turned it on


@pytest.mark.docker
def test_an_engine_under_a_long_state_dir_starts_and_leaves_no_mount() -> None:
    state = Path(tempfile.mkdtemp(prefix="ba-dockerd-")) / ("s" * 70)
    service = Dockerd(state, die_with_parent=True)
    assert service.exec_root.parent == service.socket.parent != state
    try:
        assert ping(service.start().socket)
        assert service.owned
    finally:
        service.stop()
        shared = service.exec_root.parent
        assert _mounts_under(state) == [] and _mounts_under(shared) == []
        assert not shared.exists()  # the engine's short dir goes with it
        shutil.rmtree(state.parent, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.docker
def test_image_is_built_once_per_content(
    docker_sandbox: DockerSandbox, docker_engine: DockerEngine
) -> None:
    client = docker.DockerClient(base_url=docker_engine.url)
    try:
        assert docker_sandbox.image == images.image_tag()
        before = [i.id for i in client.images.list(name=images.IMAGE_REPO)]
        assert images.ensure_image(client) == docker_sandbox.image
        assert [i.id for i in client.images.list(name=images.IMAGE_REPO)] == before
        assert len(before) == 1
    finally:
        client.close()


@pytest.mark.docker
def test_containers_are_removed_after_every_run(
    docker_sandbox: DockerSandbox, docker_engine: DockerEngine
) -> None:
    client = docker.DockerClient(base_url=docker_engine.url)
    try:
        with docker_sandbox.workspace() as ws:
            docker_sandbox.run(ws, ["/bin/sh", "-c", "setsid sleep 100 & echo hi"])
            docker_sandbox.run(ws, ["/bin/sh", "-c", "sleep 100"], timeout=0.5)
            left = client.containers.list(
                all=True, filters={"label": f"boundary-audit.run={ws.run_id}"}
            )
        assert left == []
    finally:
        client.close()


@pytest.mark.docker
def test_docker_does_not_run_host_programs(docker_sandbox: DockerSandbox) -> None:
    assert DockerSandbox.host_programs is False
    with docker_sandbox.workspace() as ws:
        r = docker_sandbox.run(
            ws, ["/bin/sh", "-c", "command -v python3 || echo none; git --version | cut -c1-13"]
        )
    assert r.stdout == b"none\ngit version 2\n"


@pytest.mark.docker
def test_a_fixture_engine_dies_with_its_killed_parent(tmp_path: Path) -> None:
    state = Path(tempfile.mkdtemp(prefix="ba-dockerd-"))
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from boundary_audit.services.dockerd import Dockerd\n"
        f"d = Dockerd(Path({str(state)!r}), die_with_parent=True)\n"
        "d.start()\n"
        "print(d._daemon.pid, flush=True)\n"
        "os._exit(0)  # killed before any teardown\n"
    )
    try:
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
        pid = int(r.stdout)
        deadline = time.monotonic() + 20
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid)
        assert not ping(state / "docker.sock")
    finally:
        shutil.rmtree(state, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


class _LateOOMFlag:
    """A container the engine has seen exit but whose OOM event it handles `late` reloads on."""

    def __init__(self, late: int) -> None:
        self.late, self.reloads = late, 0
        self.attrs: dict[str, dict[str, object]] = {}

    def reload(self) -> None:
        self.reloads += 1
        self.attrs = {"State": {"Pid": 0, "OOMKilled": self.reloads > self.late}}


def test_a_sigkilled_run_waits_for_the_engines_late_oom_flag() -> None:
    late = _LateOOMFlag(late=3)
    assert docker_backend._oom_killed(late, settle_s=docker_backend.OOM_SETTLE_S) is True
    assert late.reloads == 4
    # Without the settling time (the run exited by itself, or timed out and we killed it) the
    # first look is the answer: one reload, no wait.
    early = _LateOOMFlag(late=3)
    assert docker_backend._oom_killed(early) is False
    assert early.reloads == 1


def test_a_sigkilled_run_without_an_oom_kill_gives_up_after_the_settling_time() -> None:
    never = _LateOOMFlag(late=10**6)
    start = time.monotonic()
    assert docker_backend._oom_killed(never, settle_s=0.2) is False
    assert time.monotonic() - start >= 0.2
    assert never.reloads > 1


class _FlaglessOOM(_LateOOMFlag):
    """A container whose OOM flag the exit cleared, but whose `oom` event the engine logged."""

    id = "c0ffee"

    def __init__(self, logged: bool) -> None:
        super().__init__(late=10**6)
        self.asked: list[dict[str, object]] = []
        self.client = self
        self.logged = logged

    def events(self, **query: object) -> _Events:
        self.asked.append(query)
        return _Events([{"status": "oom", "Action": "oom", "id": self.id}] if self.logged else [])


class _Events(list[dict[str, object]]):
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_sigkilled_run_reads_the_engines_oom_event_when_the_flag_is_gone() -> None:
    flagless = _FlaglessOOM(logged=True)
    assert docker_backend._oom_killed(flagless, settle_s=1.0, since=1000.9) is True
    assert flagless.reloads == 1  # the event log answered at once: no wait
    (query,) = flagless.asked
    assert (query["since"], query["filters"], query["decode"]) == (
        999,
        {"container": "c0ffee", "event": "oom"},
        True,
    )
    # The event log is asked only when the run died of SIGKILL before our timeout.
    quiet = _FlaglessOOM(logged=True)
    assert docker_backend._oom_killed(quiet, since=1000.0) is False
    assert quiet.asked == []
    none = _FlaglessOOM(logged=False)
    assert docker_backend._oom_killed(none, settle_s=0.1, since=1000.0) is False
    assert len(none.asked) > 1


@pytest.mark.docker
def test_the_engine_logs_an_oom_event_for_a_run_the_memory_limit_killed(
    docker_engine: DockerEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[object, float]] = []
    original = docker_backend._oom_killed

    def recording(container: object, settle_s: float = 0.0, since: float | None = None) -> bool:
        assert since is not None
        seen.append((container, since))
        return original(container, settle_s, since)

    monkeypatch.setattr(docker_backend, "_oom_killed", recording)
    box = make_sandbox(
        "docker", Limits(timeout_s=5.0, grace_s=2.0, memory_bytes=256 << 20), engine=docker_engine
    )  # the limits of the escape tests' 600 MB write
    try:
        with box.workspace() as ws:
            r = box.run(ws, ["sh", "-c", "head -c 600000000 /dev/zero > big"])
            calm = box.run(ws, ["sh", "-c", "echo fine"])
    finally:
        box.close()
    assert (r.exit_code, r.limits_hit) == (137, ("memory",))
    assert (calm.exit_code, calm.limits_hit) == (0, ())
    (oom_run, since), (calm_run, calm_since) = seen
    assert docker_backend._oom_event(oom_run, since) is True  # from the log, flag or not
    assert docker_backend._oom_event(calm_run, calm_since) is False
