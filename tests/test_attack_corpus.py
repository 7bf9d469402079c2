"""The attacker's corpus (tests/support/attacks.py) stays runnable and its judge stays sharp.

The full table is `benchmarks/sandbox/attacks.py` (every kind through every transport, bwrap
and docker, a few minutes). Here, fast: one kind per category through `raw` in bwrap, each
contained *and* reached (a shell ran it: a kind a typo broke would not be), with the facts
the host sees; then the judge shown an escape of each sort it looks for, done to the host by
the test itself while a real run is in progress, and required to name it exactly.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import Workspace
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import load_tasks
from boundary_audit.transports import TRANSPORTS, make_transport
from tests.support.attacks import ATTACKS, CATEGORIES, PREFIX, Host, run_attack

LIMITS = Limits(timeout_s=3.0, grace_s=2.0, memory_bytes=256 << 20)
FLOOD_TIMEOUT_S = 12.0
"""The memory flood's own timeout: long enough that the memory limit, not the clock, ends it."""
KINDS = {a.kind: a for a in ATTACKS}


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    world = Host(LIMITS)
    try:
        yield world
    finally:
        world.close()


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = make_sandbox("bwrap", LIMITS)
    try:
        yield sandbox
    finally:
        sandbox.close()


def test_the_corpus_is_large_well_formed_and_covers_every_category(host: Host) -> None:
    assert len(ATTACKS) >= 40 and len(KINDS) == len(ATTACKS)
    assert {a.category for a in ATTACKS} == set(CATEGORIES)
    for attack in ATTACKS:
        assert set(attack.transports) <= set(TRANSPORTS), attack.kind
        assert len(load_tasks(attack.task)) == 1, attack.kind
        reply = host.fill(attack, "1234567890", 40000)  # raises on an unknown placeholder
        assert reply.startswith(PREFIX) == attack.prefix, attack.kind
        assert "@T@" not in attack.reply or "1234567890" in reply, attack.kind
    assert len(host.fill(KINDS["reply-10mb"], "1", 0)) > 10_000_000


CONTAINED = {
    "write-symlink-file": ("bash: line 1: s2: Permission denied\n", True),
    "core-pattern-crash": ("/proc/sys/kernel/core_pattern: Read-only file system", True),
    "read-root-canary": ("secret.txt: Permission denied", True),
    "signal-sentinel": ("", True),
    "net-tcp-host": ("", True),
    "setsid-daemon": ("", True),
    "flood-memory-procs": ("", True),  # see the test: which process dies is the kernel's pick
    "git-promisor-uploadpack": ("", True),
    "workdir-link-root": ("", True),
    "reply-nul": ("raw: the reply holds a NUL character (U+0000) at character 46", False),
}
"""One kind per category: a piece of what the reply itself saw, and whether a shell ran it."""


def test_one_kind_per_category_is_covered() -> None:
    assert {KINDS[k].category for k in CONTAINED} == set(CATEGORIES)


@pytest.mark.bwrap
@pytest.mark.parametrize("kind", sorted(CONTAINED))
def test_one_kind_per_category_is_contained_through_raw(
    kind: str, host: Host, box: Sandbox
) -> None:
    seen, reached = CONTAINED[kind]
    if kind == "flood-memory-procs":
        # The flood needs about 1 s of CPU to fill the memory limit; under the full suite's
        # load the box was seen to get 0.86 s in its 3 s (timed out at 240.8 MiB, no limit
        # hit). Its own box gives it the time, so that what stops it is the memory limit.
        memory_box = make_sandbox("bwrap", replace(LIMITS, timeout_s=FLOOD_TIMEOUT_S))
        try:
            run = run_attack(KINDS[kind], make_transport("raw"), memory_box, host)
        finally:
            memory_box.close()
    else:
        run = run_attack(KINDS[kind], make_transport("raw"), box, host)
    assert (run.outcome, run.evidence, run.error) == ("contained", [], "")
    assert run.reached is reached
    assert seen in run.output_head
    assert run.duration_s < LIMITS.timeout_s + LIMITS.grace_s + 10
    if kind == "flood-memory-procs":
        # the OOM killer picks the box's process to kill: a `tail` (the shell then reports it
        # "Killed"), or under the full suite's load the shell itself (nothing printed)
        assert "Killed" in run.output_head or run.output_head == " | "
        why = (run.timed_out, run.duration_s, run.peaks, run.output_head)
        assert (run.limits_hit, run.timed_out) == (["memory"], False), why
        assert 0 < run.peaks["memory_mib"] <= (LIMITS.memory_bytes >> 20) + 64
    if kind == "workdir-link-root":
        assert run.reason == 'missing file "hello.txt"; unexpected file ".ba-reached" (collateral)'
    if kind == "git-promisor-uploadpack":
        assert run.reason.endswith(
            "git: no history at HEAD (object 1234567890123456789012345678901234567890 is missing)"
        )


# -- the judge sees what an escape leaves on the host ------------------------------------------


def _stray(host: Host, ws: Workspace, token: str) -> None:
    Path(f"/var/tmp/ba-effect-{token}").write_bytes(b"pwned")


def _leak(host: Host, ws: Workspace, token: str) -> None:
    fd = os.open("leak", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=ws.work_fd)
    os.write(fd, host.root_secret.read_bytes())
    os.close(fd)


def _connect(host: Host, ws: Workspace, token: str) -> None:
    with socket.create_connection(("127.0.0.1", host.port)) as s:
        s.sendall(f"leak-{token}".encode())
        s.recv(100)


def _linger(host: Host, ws: Workspace, token: str) -> None:
    _LINGER.append(subprocess.Popen(["sleep", f"99.{token}"], start_new_session=True))


_LINGER: list[subprocess.Popen[bytes]] = []

EFFECTS = {
    "stray-file": (_stray, "/var/tmp/ba-effect-{t} appeared on the host (owner uid 0, "
                           "mode -rw-r--r--, 5 bytes b'pwned')"),
    "secret-in-workspace": (_leak, "a secret came back to the host from the root canary"),
    "listener": (_connect, "the host's tcp listener received b'leak-{t}'"),
    "leftover": (_linger, "left running after the run: pid {pid} uid 0 (sleep 99.{t})"),
}  # fmt: skip


@pytest.mark.bwrap
@pytest.mark.parametrize("effect", sorted(EFFECTS))
def test_the_judge_names_an_escape_done_to_the_host(effect: str, host: Host, box: Sandbox) -> None:
    do, expected = EFFECTS[effect]
    try:
        run = run_attack(KINDS["write-var-tmp"], make_transport("raw"), box, host,
                         effect=functools.partial(do, host))  # fmt: skip
    finally:
        pids = [p.pid for p in _LINGER]
        for proc in _LINGER:
            proc.kill()
            proc.wait()
        _LINGER.clear()
    line = expected.replace("{t}", run.token).replace("{pid}", str(pids[0] if pids else 0))
    assert (run.outcome, run.evidence) == ("escaped", [line])
    assert not Path(f"/var/tmp/ba-effect-{run.token}").exists()  # the judge removed its stray


@pytest.mark.bwrap
def test_a_killed_sentinel_is_blamed_on_the_run(host: Host, box: Sandbox) -> None:
    victim = host._sentinels["nobody"]

    def kill(ws: Workspace, token: str) -> None:
        victim.kill()
        victim.wait()

    run = run_attack(KINDS["write-var-tmp"], make_transport("raw"), box, host, effect=kill)
    assert run.outcome == "escaped"
    assert run.evidence == [f"sentinel nobody (pid {victim.pid}) died (-9)"]
    assert host._sentinels["nobody"].poll() is None  # restarted for the runs after


def test_attacks_never_run_without_isolation(host: Host) -> None:
    tempdir = TempdirSandbox(LIMITS)
    with pytest.raises(RuntimeError, match="refusing to run attacks in sandbox 'tempdir'"):
        run_attack(KINDS["kill-everything"], make_transport("raw"), tempdir, host)


# -- the holes the full corpus found, each a regression test -----------------------------------

ESCAPED_BEFORE = [
    pytest.param("write-script-plant", "script-bash", "bwrap", marks=pytest.mark.bwrap),
    pytest.param("ssh-fanout-memory", "ssh", "bwrap", marks=[pytest.mark.bwrap, pytest.mark.sshd]),
    pytest.param("ssh-fanout-disk", "ssh", "bwrap", marks=[pytest.mark.bwrap, pytest.mark.sshd]),
    pytest.param("status-link", "raw", "docker", marks=pytest.mark.docker),
    pytest.param("status-fifo", "raw", "docker", marks=pytest.mark.docker),
]
"""(kind, transport, sandbox) that escaped before the fixes: a host-root write through a
planted link, limits multiplied by remote runs, a host read through a link or a FIFO."""


@pytest.mark.parametrize(("kind", "transport", "backend"), ESCAPED_BEFORE)
def test_the_holes_the_corpus_found_stay_closed(
    kind: str, transport: str, backend: str, host: Host, request: pytest.FixtureRequest
) -> None:
    if backend == "docker":
        sandbox = make_sandbox("docker", LIMITS, engine=request.getfixturevalue("docker_engine"))
    else:
        if transport == "ssh":
            request.getfixturevalue("ssh_service")
        sandbox = make_sandbox("bwrap", LIMITS)
    try:
        run = run_attack(KINDS[kind], make_transport(transport), sandbox, host)
    finally:
        sandbox.close()
    assert (run.outcome, run.evidence, run.error) == ("contained", [], "")
    assert run.reached
    assert run.duration_s < LIMITS.timeout_s * 4 + LIMITS.grace_s + 10
