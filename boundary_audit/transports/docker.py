"""`docker`: `docker exec` of `["sh", "-c", R]` in a container of the locally built image.

The boundary of harnesses that keep a container per task and push each command into it with
the Docker API (Terminal-Bench's `container.exec_run`, SWE-ReX's Docker deployment, AutoGen's
`DockerCommandLineCodeExecutor`): the argv goes to the engine as an array, so no client-side
shell parses it, and `sh` (dash in the image) parses R once inside the container. The
container is the confinement here, so this transport does not go through `sandbox.run`: per
run it creates a container of the image built by `services.images` (the host's own bash,
dash, coreutils...), with the workspace's directories bind-mounted at their inner paths (bin
read-only), no network, no capabilities, a read-only root and the sandbox's limits, whose
pid 1 is `sleep infinity`; then one exec with the sandbox's scrubbed environment and cwd =
the work dir; then the container is killed (so nothing R left running can touch the work dir
once `execute` returns) and removed in the background (`close` waits for the removals).

The engine is the private one of `services.dockerd` (reused when it answers, started and
owned otherwise), or `docker_host` when given.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from boundary_audit import supervisor
from boundary_audit.errors import EnvironmentUnavailable, TransportError
from boundary_audit.sandbox import identity, layout
from boundary_audit.sandbox.docker import NOBODY, run_user, security_options
from boundary_audit.sandbox.interface import BASE_PATH, ExecResult, Limits, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports._docker_slots import RESET, SlotPool, move_in, move_out, poolable
from boundary_audit.transports.interface import Transport, TransportResult, refusal, rejected


class DockerTransport(Transport):
    """`docker exec CONTAINER sh -c R` in a fresh container per run."""

    name = "docker"
    boundary_class = BoundaryClass.REMOTE_STRING
    defaults = {"shell": "sh", "flags": "-c", "docker_host": "", "timeout": 0.0}
    param_help = {
        "shell": "the container's shell that parses R (the image's sh is dash)",
        "flags": "its flags, space-separated",
        "docker_host": "engine URL (unix:///path/docker.sock); '' = the private engine",
        "timeout": "seconds per reply; 0 means the sandbox's timeout",
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._lock = threading.Lock()
        self._client: Any = None
        self._dockerd: Any = None
        self._remover = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ba-docker-rm")
        self._removals: list[Future[None]] = []
        self._slots = SlotPool(self._new_slot)
        self._socket = ""
        self.image = ""

    def supports(self, sandbox: Sandbox) -> str | None:
        if self.params["docker_host"]:
            return None
        from boundary_audit.services.dockerd import Dockerd, ping

        if ping(Dockerd().socket) or shutil.which("dockerd", path=BASE_PATH):
            return None
        return "needs a Docker engine: dockerd is not installed (apt-get install docker.io)"

    def _start(self) -> Any:
        with self._lock:
            if self._client is None:
                import docker

                from boundary_audit.services.dockerd import Dockerd
                from boundary_audit.services.images import ensure_image

                url = str(self.params["docker_host"])
                if not url:
                    self._dockerd = Dockerd()
                    url = self._dockerd.start().url
                try:
                    client = docker.DockerClient(base_url=url, timeout=120, max_pool_size=16)
                    client.ping()
                except docker.errors.DockerException as exc:
                    raise EnvironmentUnavailable(
                        f"docker: engine at {url} does not answer"
                    ) from exc
                self.image = ensure_image(client)
                self._socket = url.removeprefix("unix://")
                self._client = client
            return self._client

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        why = refusal(self.name, reply, argv=True)
        if why:
            return rejected(why)
        client = self._start()
        _give_to_container_user(ws)
        timeout = float(self.params["timeout"]) or float(sandbox.limits.timeout_s)
        argv = [str(self.params["shell"]), *str(self.params["flags"]).split(), reply]
        if not poolable(ws):
            return self._execute_fresh(client, argv, ws, sandbox, timeout)
        slot = self._slots.acquire(ws, sandbox.limits)
        healthy = False
        try:
            move_in(ws, slot)
            layout.give(ws, slot.dir)  # the container's /tmp is the run's for this run
            try:
                result = _exec(client, slot.container, argv, ws, sandbox, timeout)
                _reset(client, slot.container, ws)  # before the workspace leaves the container
                healthy = True
            finally:
                move_out(ws, slot)
            return result
        finally:
            if healthy:
                self._slots.release(ws, sandbox.limits, slot)
            else:
                self._slots.discard(slot)
                self._dispose(slot.container)

    def _execute_fresh(
        self, client: Any, argv: list[str], ws: Workspace, sandbox: Sandbox, timeout: float
    ) -> ExecResult:
        """A container of its own for this run (workspaces whose inner paths are host paths)."""
        container = _create(
            client, self.image, _mounts(ws), ws.inner_work, sandbox.limits, self._socket
        )
        try:
            return _exec(client, container, argv, ws, sandbox, timeout)
        finally:
            self._dispose(container)

    def _new_slot(self, ws: Workspace, slot_dir: Path, limits: Limits) -> Any:
        from docker.types import Mount

        mounts = [
            Mount(ws.inner_tmp, str(slot_dir), type="bind"),
            *(
                Mount(t, str(slot_dir / "bin"), type="bind", read_only=True)
                for t in layout.bin_targets(ws)
            ),
        ]
        client = self._start()
        return _create(client, self.image, mounts, ws.inner_work, limits, self._socket)

    def _dispose(self, container: Any) -> None:
        """Kill now (nothing may touch the workspace after `execute`), remove in the background."""
        _kill(container)
        with self._lock:
            self._removals.append(self._remover.submit(_remove, container))

    def close(self) -> None:
        for slot in self._slots.drain():
            self._dispose(slot.container)
        with self._lock:
            removals, self._removals = self._removals, []
        errors = [f.exception() for f in removals]
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._dockerd is not None:
                self._dockerd.stop()
                self._dockerd = None
        failed = [e for e in errors if e is not None]
        if failed:
            raise TransportError(f"docker: {len(failed)} container(s) not removed: {failed[0]}")


def _give_to_container_user(ws: Workspace) -> None:
    """The workspace's files belong to the uid the container runs the reply as.

    A workspace with an identity of its own is adopted once; one without (the plain-directory
    backend's, owned by whoever runs boundary-audit) belongs to root when that is root, and a
    container never runs as root, so its tree is given to `nobody` for the run.
    """
    if ws.uid >= 0 and ws.uid != 0:
        layout.adopt_workspace(ws)
        return
    if os.geteuid() == 0:
        identity.adopt(ws.root, identity.Identity(NOBODY, NOBODY))


def _mounts(ws: Workspace) -> list[Any]:
    from docker.types import Mount

    pairs = [(ws.tmp, ws.inner_tmp), (ws.work, ws.inner_work), (ws.home, ws.inner_home),
             (ws.obs, ws.inner_obs)]  # fmt: skip
    mounts = [Mount(inner, str(host), type="bind") for host, inner in pairs]
    mounts += [Mount(t, str(ws.bin), type="bind", read_only=True) for t in layout.bin_targets(ws)]
    return mounts


def _create(
    client: Any, image: str, mounts: list[Any], workdir: str, lim: Limits, socket: str
) -> Any:
    import docker
    from docker.types import Ulimit

    try:
        container = client.containers.create(
            image,
            command=["sleep", "infinity"],
            working_dir=workdir,
            hostname="sandbox",
            user=f"{NOBODY}:{NOBODY}",
            network_mode="none",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=security_options(),
            mounts=mounts,
            mem_limit=lim.memory_bytes,
            memswap_limit=lim.memory_bytes,
            pids_limit=lim.max_procs,
            nano_cpus=1_000_000_000,
            ulimits=[
                Ulimit(name="fsize", soft=lim.file_bytes, hard=lim.file_bytes),
                Ulimit(name="core", soft=0, hard=0),
            ],  # fmt: skip
            # the owner: one engine serves every boundary-audit process of a user
            labels={"boundary-audit.transport": "docker", "boundary-audit.owner": str(os.getpid())},
        )
        _OWNED[container.id] = supervisor.ledger().register(
            "container", socket=socket, id=container.id
        )
        container.start()
    except docker.errors.DockerException as exc:
        raise TransportError(f"docker: cannot start a container: {exc}") from exc
    return container


_OWNED: dict[str, int] = {}
"""Container id -> its supervisor registration (released once the container is removed)."""


def _exec(
    client: Any, container: Any, argv: list[str], ws: Workspace, sandbox: Sandbox, timeout: float
) -> TransportResult:
    api = client.api
    started = time.monotonic()
    exec_id = api.exec_create(
        container.id, argv, workdir=ws.inner_work, environment=sandbox.base_env(ws),
        user=run_user(ws), stdout=True, stderr=True, stdin=False, tty=False,
    )["Id"]  # fmt: skip
    out, err = bytearray(), bytearray()
    cap = sandbox.limits.output_bytes

    def drain() -> None:
        try:
            for chunk_out, chunk_err in api.exec_start(exec_id, stream=True, demux=True):
                if chunk_out and len(out) < cap:
                    out.extend(chunk_out[: cap - len(out)])
                if chunk_err and len(err) < cap:
                    err.extend(chunk_err[: cap - len(err)])
        except Exception:  # noqa: BLE001 - the stream breaks when the container is killed
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    reader.join(timeout)
    timed_out = reader.is_alive()
    if timed_out:
        _reset(client, container, ws)  # ends the exec; a failure here discards the container
        reader.join(5)
    code = None if timed_out else api.exec_inspect(exec_id).get("ExitCode")
    return TransportResult(
        exit_code=code, stdout=bytes(out), stderr=bytes(err), timed_out=timed_out,
        duration_s=time.monotonic() - started,
    )  # fmt: skip


def _reset(client: Any, container: Any, ws: Workspace) -> None:
    """Kill every process the reply left in `container` and empty its /dev/shm.

    As the run's own uid: with no capability, only that uid can signal the reply's processes.
    """
    import docker

    try:
        exec_id = client.api.exec_create(container.id, ["sh", "-c", RESET], user=run_user(ws))["Id"]
        client.api.exec_start(exec_id)
    except docker.errors.DockerException as exc:
        raise TransportError(f"docker: cannot reset container {container.id[:12]}: {exc}") from exc


def _kill(container: Any) -> None:
    try:
        container.kill()
    except Exception:  # noqa: BLE001 - already gone; removal follows anyway
        pass


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception as exc:  # noqa: BLE001
        import docker

        if not isinstance(exc, docker.errors.NotFound):
            raise TransportError(
                f"docker: cannot remove container {container.id[:12]}: {exc}"
            ) from exc
    token = _OWNED.pop(container.id, None)
    if token is not None:
        supervisor.ledger().release(token)
