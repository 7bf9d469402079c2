"""Limits on every backend: timeout, output caps, CPU, memory, file size, process count.

Each test sets one limit low and shows the exact effect: which exit status (128 + the signal
the kernel sends), how many bytes survive, whether the run was marked timed out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.errors import SandboxError
from boundary_audit.sandbox import Limits, Sandbox, _cgroup, make_sandbox

ALL = [
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
    "tempdir",
]
HOST = [pytest.param("bwrap", marks=pytest.mark.bwrap), "tempdir"]
SIGXCPU, SIGXFSZ = 24, 25
SLACK_S = 3.0
"""Scheduling slack on top of timeout + grace: the suite shares two cores with others."""


@pytest.fixture
def make(request: pytest.FixtureRequest) -> Iterator[object]:
    """A factory: `make(**limits)` -> a sandbox of the parametrized backend with those limits."""
    made: list[Sandbox] = []

    def build(**limits: object) -> Sandbox:
        lim = Limits(**limits)  # type: ignore[arg-type]
        if request.param == "docker":
            engine = request.getfixturevalue("docker_engine")
            box = make_sandbox("docker", lim, engine=engine)
        else:
            box = make_sandbox(request.param, lim)
        made.append(box)
        return box

    yield build
    for box in made:
        box.close()


def run(box: Sandbox, script: str, **kw: object):  # type: ignore[no-untyped-def]
    with box.workspace() as ws:
        return box.run(ws, ["/bin/sh", "-c", script], **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_timeout_kills_the_run_and_reports_it(make) -> None:  # type: ignore[no-untyped-def]
    box = make(timeout_s=1.0, grace_s=2.0)
    start = time.monotonic()
    r = run(box, "echo before; sleep 30; echo after")
    took = time.monotonic() - start
    assert (r.exit_code, r.timed_out, r.stdout) == (None, True, b"before\n")
    assert 1.0 <= took < 1.0 + 2.0 + SLACK_S


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_per_call_timeout_overrides_the_limit(make) -> None:  # type: ignore[no-untyped-def]
    box = make(timeout_s=30.0)
    r = run(box, "sleep 30", timeout=0.5)
    assert r.timed_out and r.exit_code is None and r.duration_s < 5


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_output_is_capped_per_stream(make) -> None:  # type: ignore[no-untyped-def]
    box = make(output_bytes=1000)
    r = run(box, "head -c 5000 /dev/zero | tr '\\0' o; head -c 10 /dev/zero | tr '\\0' e >&2")
    assert r.stdout == b"o" * 1000 and r.stderr == b"e" * 10
    assert r.truncated and r.exit_code == 0


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_exact_output_below_the_cap_is_not_truncated(make) -> None:  # type: ignore[no-untyped-def]
    box = make(output_bytes=1000)
    r = run(box, "head -c 1000 /dev/zero | tr '\\0' o")
    assert r.stdout == b"o" * 1000 and not r.truncated


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_cpu_limit_stops_a_busy_loop_with_sigxcpu(make) -> None:  # type: ignore[no-untyped-def]
    # One CPU second can take many wall seconds on a loaded machine: the timeout is generous.
    box = make(cpu_s=1, timeout_s=120)
    r = run(box, "while :; do :; done")
    assert (r.exit_code, r.timed_out) == (128 + SIGXCPU, False)


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_file_size_limit_cuts_a_large_write(make) -> None:  # type: ignore[no-untyped-def]
    box = make(file_bytes=4096)
    with box.workspace() as ws:
        r = box.run(ws, ["/bin/sh", "-c", "head -c 100000 /dev/zero > big"])
        assert r.exit_code == 128 + SIGXFSZ
        assert (ws.work / "big").stat().st_size == 4096


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_memory_limit_makes_a_large_allocation_fail(make, request) -> None:  # type: ignore[no-untyped-def]
    box = make(memory_bytes=64 << 20)
    with box.workspace() as ws:
        script = "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}"
        r = box.run(ws, ["bash", "-c", script])
    if request.node.callspec.params["make"] == "docker":
        # The engine's memory cgroup: the OOM killer SIGKILLs the shell.
        assert (r.exit_code, r.stdout, r.stderr) == (128 + 9, b"", b"")
    else:
        # RLIMIT_AS: the allocation fails and bash says so.
        assert (r.exit_code, r.stdout) == (2, b"")
        assert r.stderr.startswith(b"bash: xrealloc: cannot allocate ")


@pytest.mark.parametrize("make", ALL, indirect=True)
def test_process_count_limit_binds_root(make, request) -> None:  # type: ignore[no-untyped-def]
    if request.node.callspec.params["make"] != "docker" and "pids" in _cgroup.missing():
        pytest.fail("no writable pids cgroup on this machine: the limit cannot bind root here")
    box = make(max_procs=24)
    # dash gives up at the first fork that fails; the sleeps it started are left behind.
    r = run(box, "for i in $(seq 60); do sleep 5 & done; echo unreachable")
    assert r.exit_code == 2 and b"Cannot fork" in r.stderr and r.stdout == b""
    assert 0 < r.escaped_killed < 24


@pytest.mark.parametrize("make", HOST, indirect=True)
def test_no_cgroup_is_left_behind(make) -> None:  # type: ignore[no-untyped-def]
    hier = _cgroup.hierarchy()
    assert hier is not None and _cgroup.missing() == ()
    box = make(timeout_s=1)
    mine = f"{os.getpid()}."

    def ours() -> set[Path]:
        return {p for d in hier.dirs for p in d.iterdir() if p.name.startswith(mine)}

    before = ours()  # workspaces other tests of this worker still hold
    for script in ("setsid sleep 100 & sleep 100", "sleep 100 &", "exit 3"):
        with box.workspace() as ws:
            box.run(ws, ["/bin/sh", "-c", script])
            assert ws.cgroup is not None  # the workspace's group, with one run child each
    assert ours() - before == set()


@pytest.mark.parametrize("make", HOST, indirect=True)
def test_a_run_whose_cgroup_cannot_be_made_is_an_error_not_an_unconfined_run(  # type: ignore[no-untyped-def]
    make, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a failed mkdir of the run's child group used to yield no group at all: the run then
    # joined none and went without the memory (and so disk), process and CPU limits
    assert _cgroup.hierarchy() is not None
    box = make(timeout_s=5)
    real_mkdir = Path.mkdir

    def full(self: Path, *args: object, **kwargs: object) -> None:
        if self.parent.name.startswith(f"{os.getpid()}.") and self.name.startswith(
            f"{os.getpid()}."
        ):
            raise OSError(28, "No space left on device", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    with box.workspace() as ws:
        monkeypatch.setattr(Path, "mkdir", full)
        with pytest.raises(SandboxError) as err:
            box.run(ws, ["/bin/sh", "-c", "echo ran > ran"])
        monkeypatch.undo()
        assert err.value.message.startswith("cannot create the run's cgroup /")
        assert err.value.message.endswith(": No space left on device")
        assert ws.cgroup is not None  # the workspace's own group was made, its run's was not
        assert not any(p.is_dir() for d in ws.cgroup.dirs.values() for p in d.iterdir())
        done = box.run(ws, ["/bin/sh", "-c", "echo ran"])  # the next run gets its group
        assert (done.exit_code, done.stdout) == (0, b"ran\n")
