"""A private Docker engine for the session: started on a socket in a temp dir, stopped at the end.

`docker_engine` is session-scoped, so each pytest-xdist worker starts (at most) one engine of
its own (separate data-root, exec-root and socket; two engines coexist with `--bridge=none`),
and only when a test asks for it. The state directory, images included, is removed afterwards;
a worker killed before its teardown takes its engine with it (`die_with_parent`).
Used by the docker sandbox tests and by the docker transport.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox.docker import DockerSandbox
from boundary_audit.services.dockerd import Dockerd, DockerEngine


@pytest.fixture(scope="session")
def dockerd_service() -> Iterator[Dockerd]:
    """The running private engine (owned by this fixture)."""
    # NOTE(tests): a short state dir under /tmp keeps the socket path below sun_path's limit.
    state = Path(tempfile.mkdtemp(prefix="ba-dockerd-"))
    service = Dockerd(state, die_with_parent=True)
    service.start()
    try:
        yield service
    finally:
        service.stop()
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="session")
def docker_engine(dockerd_service: Dockerd) -> DockerEngine:
    """The engine's address (`.url` for the docker SDK or DOCKER_HOST)."""
    return dockerd_service.engine


@pytest.fixture(scope="session")
def docker_sandbox(docker_engine: DockerEngine) -> Iterator[DockerSandbox]:
    """A started docker sandbox (image imported) on the session's engine, default limits."""
    sandbox = make_sandbox("docker", Limits(timeout_s=10), engine=docker_engine)
    assert isinstance(sandbox, DockerSandbox)
    try:
        yield sandbox
    finally:
        sandbox.close()
