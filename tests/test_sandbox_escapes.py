"""The escapes an attacker found in the sandbox, each run for real and asserted contained.

One test per hole (issue 13): the kernel settings a root reply could write (core_pattern made
the host kernel run a command as root), root-only files it could read, limits that bound each
process but not the run (memory, disk, /dev and /root as host-RAM tmpfs), a reaper it could
ptrace, and everything a killed boundary-audit left running. Each test fails if its hole
reopens: it looks at the host, not at what the sandbox says about itself.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit import supervisor
from boundary_audit.sandbox import Limits, Sandbox, identity, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.services.dockerd import Dockerd, DockerEngine, ping
from boundary_audit.tasks import load_tasks, run_task
from boundary_audit.transports import TRANSPORTS, make_transport

ISOLATING = [
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]
SYSCTLS = tuple(
    name
    for name in (
        "kernel/core_pattern",
        "kernel/modprobe",
        "kernel/sysrq",
        "vm/overcommit_memory",
        "kernel/panic",
    )
    if Path("/proc/sys", name).exists()
)
"""Host settings a reply tries to change (those this kernel has), compared byte for byte."""


@pytest.fixture
def token() -> str:
    return f"{random.randrange(10**9):09d}"


@pytest.fixture
def backend_box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    backend = request.param
    limits = Limits(timeout_s=5.0, grace_s=2.0, memory_bytes=256 << 20)
    if backend == "docker":
        box = make_sandbox("docker", limits, engine=request.getfixturevalue("docker_engine"))
    else:
        box = make_sandbox(backend, limits)
    try:
        yield box
    finally:
        box.close()


def _sysctls() -> dict[str, bytes]:
    return {name: Path("/proc/sys", name).read_bytes() for name in SYSCTLS}


def _run(box: Sandbox, script: str, **limits: object) -> ExecResult:
    if limits:
        box.limits = Limits(**{**box.limits.__dict__, **limits})  # type: ignore[arg-type]
    with box.workspace() as ws:
        return box.run(ws, ["bash", "-c", script])


CORE_PATTERN_ATTACK = (
    "echo '|/bin/sh -c id>/var/tmp/pwned-{token}' > /proc/sys/kernel/core_pattern; "
    "echo /tmp/pwned-modprobe-{token} > /proc/sys/kernel/modprobe; "
    "echo 1 > /proc/sys/kernel/sysrq; echo 2 > /proc/sys/vm/overcommit_memory; "
    "echo 30 > /proc/sys/kernel/panic; echo c > /proc/sysrq-trigger; "
    "ulimit -c unlimited; sh -c 'kill -SEGV $$'; sleep 0.3; cat /proc/sys/kernel/core_pattern"
)


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_kernel_settings_cannot_be_written(backend_box: Sandbox, token: str) -> None:
    before = _sysctls()
    r = _run(backend_box, CORE_PATTERN_ATTACK.replace("{token}", token))
    time.sleep(0.5)  # a core pattern pipe would have run by now
    assert _sysctls() == before
    assert not Path(f"/var/tmp/pwned-{token}").exists()
    assert r.stdout == before["kernel/core_pattern"]  # the reply reads the host's, unchanged
    assert b"Read-only file system" in r.stderr


@pytest.mark.bwrap
@pytest.mark.sshd
@pytest.mark.tmux
@pytest.mark.docker
def test_the_core_pattern_attack_fails_through_every_transport(
    ssh_service: object, docker_engine: DockerEngine, token: str
) -> None:
    """The attack worked through 15 of 17 transports before: through none of them now."""
    before = _sysctls()
    reply = CORE_PATTERN_ATTACK.replace("{token}", token)
    ran = []
    with make_sandbox("bwrap", Limits(timeout_s=10.0)) as box:
        for name in TRANSPORTS:
            params = {"docker_host": docker_engine.url} if name == "docker" else {}
            transport = make_transport(name, **params)
            try:
                with box.workspace() as ws:
                    transport.execute(reply, ws, box)
                    ran.append(name)
            finally:
                transport.close()
    time.sleep(0.5)
    assert _sysctls() == before
    assert not Path(f"/var/tmp/pwned-{token}").exists()
    assert ran == list(TRANSPORTS) and len(ran) == 17


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_root_only_files_are_unreadable(backend_box: Sandbox, token: str) -> None:
    secret = Path(f"/var/cache/ba-root-only-{token}")
    secret.write_text(f"root-secret-{token}\n")
    secret.chmod(0o600)
    try:
        r = _run(
            backend_box,
            f"cat {secret} /etc/shadow- /etc/gshadow- /etc/shadow /etc/docker/key.json 2>&1; "
            f"grep -rs root-secret-{token} /var/cache /etc 2>/dev/null; true",
        )
    finally:
        secret.unlink()
    assert f"root-secret-{token}".encode() not in r.stdout
    assert b"root:" not in r.stdout  # no line of a shadow file


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_the_run_is_not_root_on_the_host(backend_box: Sandbox) -> None:
    with backend_box.workspace() as ws:
        r = backend_box.run(ws, ["sh", "-c", "echo x > f; cat /proc/self/status | grep CapEff"])
        owner = os.stat(ws.work / "f").st_uid
    assert r.stdout == b"CapEff:\t0000000000000000\n"
    assert owner == ws.uid and ws.uid in identity.uid_range()


@pytest.mark.bwrap
def test_the_reaper_cannot_be_traced_so_its_count_stands() -> None:
    script = (
        "setsid sleep 77.77 & "
        'python3 -c "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); '
        "r=l.ptrace(16,1,0,0); print('attach', r, os.strerror(ctypes.get_errno()))\"; "
        "echo x > /proc/1/mem 2>&1 || echo mem-refused; "
        "strace -p 1 -o /dev/null 2>&1 | head -1; true"
    )
    with make_sandbox("bwrap", Limits(timeout_s=5.0)) as box:
        r = _run(box, script)
    assert r.stdout.startswith(b"attach -1 Operation not permitted\n")
    assert b"mem-refused" in r.stdout
    assert r.escaped_killed == 1  # the setsid sleep, counted by the untouched reaper


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_the_reapers_memory_and_environment_are_out_of_reach(backend_box: Sandbox) -> None:
    """The reaper runs from an execute-only bash: non-dumpable, so /proc/1/mem cannot be opened
    for writing (a write there could forge its `escaped N` count) nor its environ read."""
    script = (
        "setsid sleep 77.78 & "
        "(exec 3<>/proc/1/mem) 2>/dev/null && echo mem-opened || echo mem-refused; "
        "(cat /proc/1/environ) >/dev/null 2>&1 && echo environ-read || echo environ-refused; "
        'echo "$BA_RUN_ID" | wc -c'
    )
    r = _run(backend_box, script)
    assert r.stdout == b"mem-refused\nenviron-refused\n33\n"
    assert r.escaped_killed == 1


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_memory_binds_the_run_as_a_whole(backend_box: Sandbox) -> None:
    # Three processes of 90 MB each stay under every per-process limit and over the run's.
    hog = "x=$(head -c 90000000 /dev/zero | tr '\\0' a); sleep 2"
    r = _run(backend_box, f"for i in 1 2 3; do ( {hog} ) & done; wait; echo waited")
    assert r.limits_hit == ("memory",)
    # The kernel kills a hog (bash reports it) or, under the group's pressure, the shell
    # itself (then nothing reports and the shell never gets past its wait).
    assert b" Killed " in r.stderr or b"waited" not in r.stdout


@pytest.mark.bwrap
def test_a_limit_hit_is_the_replys_failure_with_its_reason() -> None:
    task = next(t for t in load_tasks("write-file-t0"))
    hog = "( x=$(head -c 60000000 /dev/zero | tr '\\0' a); sleep 1 ) &"
    reply = f"{task.oracle}; {hog} {hog} {hog} wait"
    with make_sandbox("bwrap", Limits(timeout_s=5.0, memory_bytes=128 << 20)) as box:
        verdict, result = run_task(task, reply, make_transport("raw"), box)
    assert result.limits_hit == ("memory",)
    assert (verdict.passed, verdict.reason) == (
        False,
        "the run hit its memory limit (the kernel killed a process of it)",
    )


@pytest.mark.parametrize("backend_box", ISOLATING, indirect=True)
def test_workspace_writes_are_bounded_by_the_run(backend_box: Sandbox) -> None:
    with backend_box.workspace() as ws:
        r = backend_box.run(ws, ["sh", "-c", "head -c 600000000 /dev/zero > big; echo done"])
        size = os.stat(ws.work / "big").st_size
    assert r.limits_hit == ("memory",), (r.timed_out, r.exit_code, r.stdout, r.stderr[-300:])
    assert b"done" not in r.stdout
    assert size <= 256 << 20


@pytest.mark.bwrap
def test_dev_root_run_and_kernel_files_are_read_only_and_shm_is_small() -> None:
    script = (
        "for f in /dev/x /root/x /run/x /home/x /var/tmp/x /sys/x /proc/sys/x /etc/x /usr/x; do "
        "touch $f 2>/dev/null && echo wrote $f; done; "
        "head -c 100000000 /dev/zero > /dev/shm/big 2>/dev/null || echo shm-full; "
        "echo > /dev/null && echo devnull-ok"
    )
    with make_sandbox("bwrap", Limits(timeout_s=5.0)) as box:
        r = _run(box, script)
    assert r.stdout == b"shm-full\ndevnull-ok\n"


# -- the tool itself killed: nothing it started may survive ------------------------------------


def _ledger_of(pid: int) -> Path | None:
    owners = supervisor.state_dir() / "owners"
    found = sorted(owners.glob(f"{pid}.*.jsonl"))
    return found[0] if found else None


def _uid_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _descendants_uids(root: int) -> set[int]:
    """Sandbox uids of the processes below `root` (the CLI under test), by parent links."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(stat[1]), []).append(int(name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            uid = _uid_of(child)
            if uid is not None and uid in identity.uid_range():
                found.add(uid)
            todo.append(child)
    return found


def _wait_for(predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


@pytest.mark.bwrap
@pytest.mark.sshd
@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=str)
def test_nothing_survives_the_tool(
    sig: signal.Signals, dockerd_service: Dockerd, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "BOUNDARY_AUDIT_DOCKERD_DIR": str(dockerd_service.state_dir),
        supervisor.ENV_STATE: str(supervisor.state_dir()),
    }
    argv = [
        sys.executable, "-m", "boundary_audit", "probe", "--replies", "naive",
        "--transport", "ssh", "--transport", "tmux-keys", "--transport", "docker",
        "--sandbox", "bwrap", "--jobs", "2", "--timeout", "5",
    ]  # fmt: skip
    err = tmp_path / "stderr"
    with open(err, "wb") as sink:
        cli = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True
        )
    try:
        records: list[dict[str, object]] = []
        uids: set[int] = set()

        def busy() -> bool:
            ledger = _ledger_of(cli.pid)
            if ledger is not None:
                records[:] = [json.loads(x) for x in ledger.read_text().splitlines() if x]
            uids.update(_descendants_uids(cli.pid))
            kinds = {str(r["kind"]) for r in records}
            return {"mount", "process", "lease"} <= kinds and len(uids) >= 1

        assert _wait_for(busy, 90), f"the probe never got busy: {err.read_text()[-500:]}"
        time.sleep(1.0)
        uids.update(_descendants_uids(cli.pid))
        cli.send_signal(sig)
        code = cli.wait(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    last = err.read_text().strip().splitlines()[-1] if err.read_text().strip() else ""
    if sig == signal.SIGTERM:
        assert (code, last) == (143, "boundary-audit: terminated (SIGTERM)")
    elif sig == signal.SIGINT:
        assert (code, last) == (130, "boundary-audit: interrupted")
    else:
        assert code == -signal.SIGKILL

    processes = [r for r in records if r["kind"] == "process"]
    mounts = [r for r in records if r["kind"] in ("mount", "tree")]
    containers = [r for r in records if r["kind"] == "container"]

    def clean() -> bool:
        alive = [r for r in processes if supervisor.alive(int(r["pid"]), r.get("start"))]  # type: ignore[arg-type]
        kept = [r for r in mounts if Path(str(r["path"])).exists()]
        running = [u for u in uids if supervisor.uid_pids(u)]
        cgroups = [
            p
            for c in ("pids", "memory", "cpu")
            for p in Path(f"/sys/fs/cgroup/{c}/boundary-audit").glob(f"{cli.pid}.*")
        ]
        left[:] = [
            *alive,
            *kept,
            *running,
            *cgroups,
            *([_ledger_of(cli.pid)] if _ledger_of(cli.pid) else []),
        ]
        return not left

    left: list[object] = []
    # The guardian stops daemons with a grace each; under a loaded machine that takes a while.
    assert _wait_for(clean, 90), f"something the killed probe started is still there: {left}"
    sock = str(dockerd_service.socket)
    for rec in containers:
        assert supervisor.engine_request(sock, "GET", f"/containers/{rec['id']}/json") == 404
    assert ping(dockerd_service.socket)  # the engine itself is the fixture's: still leased


@pytest.mark.docker
@pytest.mark.slow
def test_two_probes_share_one_private_engine_and_the_last_stops_it() -> None:
    state = Path(f"/tmp/ba-de-{random.randrange(10**6):06d}")
    env = {**os.environ, "BOUNDARY_AUDIT_DOCKERD_DIR": str(state)}
    argv = [
        sys.executable, "-m", "boundary_audit", "probe", "--replies", "oracle",
        "--select", "write-file", "--select", "json-write",
        "--sandbox", "docker", "--format", "json",
    ]  # fmt: skip
    try:
        runs = [
            subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)
        ]
        outs = [r.communicate(timeout=600) for r in runs]
        for r, (out, err) in zip(runs, outs, strict=True):
            assert r.returncode == 0, err.decode()[-800:]
            assert json.loads(out)["summary"]["errors"] == 0
        assert not ping(Dockerd(state).socket)
        assert not (state / "owner.json").exists()
        assert list((state / "leases").iterdir()) == []
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=False)


def test_the_guardian_reaps_a_killed_owner(tmp_path: Path) -> None:
    """What a process registered is reaped by its guardian when the process is SIGKILLed."""
    tree = tmp_path / "left-behind"
    code = (
        "import subprocess, sys, time\n"
        "from pathlib import Path\n"
        "from boundary_audit import supervisor\n"
        "book = supervisor.ledger()\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "book.register('process', pid=p.pid, start=supervisor.start_time(p.pid))\n"
        f"Path({str(tree)!r}).mkdir()\n"
        f"book.register('tree', path={str(tree)!r})\n"
        "print(p.pid, book.guardian_pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, supervisor.ENV_STATE: str(tmp_path / "state")}
    owner = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE)
    assert owner.stdout is not None
    sleeper, guardian = map(int, owner.stdout.readline().split())
    start = supervisor.start_time(sleeper)
    owner.kill()
    owner.wait()
    assert _wait_for(lambda: not supervisor.alive(sleeper, start) and not tree.exists(), 15)
    assert _wait_for(lambda: supervisor.start_time(guardian) is None, 10)
    assert list((tmp_path / "state" / "owners").glob("*.jsonl")) == []


@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "unguarded"])
def test_an_owner_killed_between_a_childs_start_and_its_pid_record_leaves_no_child(
    tmp_path: Path, guarded: bool
) -> None:
    """The owner dies after the child exists but before its pid is written down: the
    child is still found (by the marker the `spawn` record put in its environment) and
    killed, by the guardian or, unguarded, by the next run's reap of stale ledgers."""
    code = (
        "import os, signal, sys\n"
        "from boundary_audit import _subprocess, supervisor\n"
        "real = supervisor.Ledger.register\n"
        "def register(self, kind, **fields):\n"
        "    if kind == 'process':\n"
        "        print(fields['pid'], flush=True)\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(self, kind, **fields)\n"
        "supervisor.Ledger.register = register\n"
        f"_subprocess.run(['sleep', '300'], timeout=None, guarded={guarded})\n"
    )
    env = {**os.environ, supervisor.ENV_STATE: str(tmp_path / "state")}
    owner = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
    assert owner.returncode == -signal.SIGKILL, owner.stderr.decode()
    sleeper = int(owner.stdout)
    if not guarded:
        time.sleep(0.5)  # nothing reaps it until the next run
        assert Path(f"/proc/{sleeper}/cmdline").read_bytes() == b"sleep\x00300\x00"
        reap = "from boundary_audit import supervisor; supervisor.ledger()"
        subprocess.run([sys.executable, "-c", reap], env=env, check=True)
    owners = tmp_path / "state" / "owners"
    assert _wait_for(lambda: not supervisor.alive(sleeper, None), 15)
    assert _wait_for(lambda: list(owners.glob("*.jsonl")) == [], 10)


def test_the_guardian_starts_with_the_first_guarded_registration(tmp_path: Path) -> None:
    code = (
        "from boundary_audit import supervisor\n"
        "book = supervisor.ledger()\n"
        f"book.register('tree', guarded=False, path={str(tmp_path / 'a')!r})\n"
        "print(book.guardian_pid, flush=True)\n"
        f"book.register('tree', path={str(tmp_path / 'b')!r})\n"
        "print(book.guardian_pid is not None, flush=True)\n"
    )
    env = {**os.environ, supervisor.ENV_STATE: str(tmp_path / "state")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    assert out.stdout == b"None\nTrue\n"
    assert list((tmp_path / "state" / "owners").iterdir()) == []


@pytest.mark.bwrap
def test_auto_refuses_to_run_replies_without_isolation(tmp_path: Path) -> None:
    """Where bwrap cannot run, `probe` exits 5 and names the alternatives; nothing runs."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2; exit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    r = subprocess.run(
        [sys.executable, "-m", "boundary_audit", "probe", "--select", "write-file"],
        env=env,
        capture_output=True,
    )
    assert r.returncode == 5
    lines = r.stderr.decode().splitlines()
    assert lines[0].startswith("boundary-audit: error: sandbox 'auto': bwrap cannot start: ")
    assert lines[1] == (
        "  hint: use --sandbox docker, or --sandbox tempdir to run replies with no isolation"
    )
    assert r.stdout == b""


def test_tempdir_says_so_on_stderr_and_in_the_report() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "boundary_audit", "probe", "--select", "write-file-t0",
         "--sandbox", "tempdir", "--format", "json"],
        capture_output=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    err = r.stderr.decode().splitlines()
    assert err[0] == "boundary-audit: replies run in: tempdir (NO isolation)"
    assert err[1].startswith("boundary-audit: warning: sandbox 'tempdir' gives NO isolation")
    assert json.loads(r.stdout)["sandbox"] == "tempdir"
