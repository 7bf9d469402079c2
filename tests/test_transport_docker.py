"""`docker`: `docker exec C sh -c R` against a real engine (the session's private dockerd).

The container's `sh` is dash (one parse, no bash syntax); the workspace appears at the same
inner paths with the sandbox's environment; a hang is cut at the timeout; a warm container
shows each run only its own workspace and none of the previous run's processes; and no
container of the transport outlives `close`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker  # type: ignore[import-untyped]
import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.services.dockerd import DockerEngine
from boundary_audit.transports import make_transport
from boundary_audit.transports.docker import DockerTransport

pytestmark = [pytest.mark.docker, pytest.mark.bwrap]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


@pytest.fixture
def transport(docker_engine: DockerEngine) -> Iterator[DockerTransport]:
    """A fresh transport; the tests close it (close waits for the background removals)."""
    made = make_transport("docker", docker_host=docker_engine.url)
    assert isinstance(made, DockerTransport)
    yield made
    made.close()


def leftover_containers(engine: DockerEngine) -> list[str]:
    client = docker.DockerClient(base_url=engine.url)
    try:
        found = client.containers.list(
            all=True,
            filters={"label": ["boundary-audit.transport=docker",
                               f"boundary-audit.owner={os.getpid()}"]},
        )  # fmt: skip
        return [c.id for c in found]
    finally:
        client.close()


def test_dash_parses_r_in_the_work_dir_with_the_sandbox_environment(
    sandbox: Sandbox, transport: DockerTransport, docker_engine: DockerEngine
) -> None:
    reply = "echo $0; pwd; echo $HOME $BA_OBS; printf x > f; [[ 1 ]] && echo bash"
    with sandbox.workspace() as ws:
        res = transport.execute(reply, ws, sandbox)
        assert (ws.work / "f").read_bytes() == b"x"
    transport.close()
    assert res.exit_code == 127
    assert res.stdout == b"sh\n/tmp/work\n/tmp/home /tmp/obs\n"
    assert res.stderr == b"sh: 1: [[: not found\n"
    assert leftover_containers(docker_engine) == []


def test_a_hang_is_cut_and_background_processes_die_with_the_container(
    sandbox: Sandbox, transport: DockerTransport, docker_engine: DockerEngine
) -> None:
    hang_transport = make_transport("docker", docker_host=docker_engine.url, timeout=1.0)
    with sandbox.workspace() as ws:
        hang = hang_transport.execute("sleep 60", ws, sandbox)
        daemon = transport.execute("(sleep 300 &) ; echo started", ws, sandbox)
    hang_transport.close()
    transport.close()
    assert (hang.exit_code, hang.timed_out) == (None, True)
    assert (daemon.exit_code, daemon.stdout) == (0, b"started\n")
    assert leftover_containers(docker_engine) == []


def test_a_warm_container_gives_each_run_only_its_own_workspace(
    sandbox: Sandbox, transport: DockerTransport, docker_engine: DockerEngine
) -> None:
    with sandbox.workspace() as first:
        one = transport.execute("sleep 300 & printf a > a.txt; mktemp", first, sandbox)
        made = one.stdout.decode().strip().rsplit("/", 1)[-1]
        assert sorted(p.name for p in first.root.iterdir()) == sorted(
            ["bin", "home", "obs", "work", made]
        )  # the reply's mktemp file came back with the workspace
        assert (first.work / "a.txt").read_bytes() == b"a"
    listing = "ls /tmp /tmp/work; cat /proc/[0-9]*/cmdline | tr '\\0' ' '"
    with sandbox.workspace() as second:
        two = transport.execute(listing, second, sandbox)
    assert two.stdout.startswith(b"/tmp:\nbin\nhome\nobs\nwork\n\n/tmp/work:\n")
    assert b"sleep infinity" in two.stdout  # the same warm container...
    assert b"sleep 300" not in two.stdout  # ...without the first run's leftovers
    transport.close()
    assert leftover_containers(docker_engine) == []
