"""The host side of a harness that runs replies in Docker containers (AutoGen's docker executor).

`DockerSide.connect` reaches the engine (the private one of `services.dockerd`, started if it is
not running, or the one at a given URL), makes sure the image exists (`services.images` builds
the local boundary-audit image by `docker import`; no registry is reachable) and keeps a docker
SDK client for removing each run's container afterwards, whatever state the driver left it in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit.errors import HarnessError
from boundary_audit.services.dockerd import Dockerd
from boundary_audit.services.images import ensure_image


@dataclass
class DockerSide:
    """An engine connection shared by all runs of one transport."""

    url: str
    socket: Path
    image: str
    client: Any
    dockerd: Dockerd | None
    """The private engine, when this object connected to it (stopped on close if we started it)."""

    @classmethod
    def connect(cls, docker_host: str, image: str) -> DockerSide:
        """Reach the engine and make sure `image` (or the local default image) is present."""
        import docker
        from docker.errors import DockerException

        dockerd = None
        if docker_host:
            if not docker_host.startswith("unix://"):
                raise HarnessError(
                    f"docker_host {docker_host!r}: only unix:// sockets are supported"
                )
            url = docker_host
        else:
            dockerd = Dockerd()
            url = dockerd.start().url
        try:
            client = docker.DockerClient(base_url=url)
            tag = image or ensure_image(client)
            client.images.get(tag)
        except DockerException as exc:
            raise HarnessError(f"docker engine at {url}: {exc}") from None
        return cls(url, Path(url.removeprefix("unix://")), tag, client, dockerd)

    def remove(self, name: str) -> None:
        """Force-remove container `name` if it exists."""
        from docker.errors import DockerException, NotFound

        try:
            self.client.containers.get(name).remove(force=True)
        except NotFound:
            pass
        except DockerException as exc:
            raise HarnessError(f"cannot remove container {name}: {exc}") from None

    def close(self) -> None:
        """Drop the client; stop the private engine if this process started it."""
        self.client.close()
        if self.dockerd is not None:
            self.dockerd.stop()
