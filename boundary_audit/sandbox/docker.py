"""Docker backend: each run in a fresh container of a locally built image, via the SDK.

The engine is the private one of `services.dockerd` (reused if it answers, started otherwise,
stopped on `close()` if we started it); the image is built from the host's binaries by
`services.images` (`docker import`, content-hash tag). Per run, one container:

- entry point: the same bash reaper as bwrap, as the container's pid 1, writing its status to
  `/.ba/status` and reading stdin from `/.ba/stdin` (a per-run control dir bound at /.ba);
- the workspace root bound at /tmp, bin/ read-only at /usr/local/sbin and /tmp/bin (the fixed
  inner paths of `layout`), cwd /tmp/work, the scrubbed environment;
- the workspace's own unprivileged uid (`identity`; never root: the engine has no user
  namespace remapping, so container root would be host root), `network_mode=none`, read-only
  root filesystem, all capabilities dropped, no-new-privileges, the seccomp deny list of
  `seccomp` as the container's profile, logging driver `none` (output is streamed by attach,
  capped here);
- limits through the API: `mem_limit` (= memswap; the workspace's tmpfs pages count, see
  `store`), `pids_limit`, `nano_cpus` (one CPU), rlimits cpu/fsize/core;
- every container registered with the supervisor while it exists, so that a killed
  boundary-audit leaves none running.

On timeout the processes that left the reaper's session are counted from the container's pids
cgroup, then the container is killed; it is always removed. The image holds no Python, so
`host_programs` is False: transports that need an in-sandbox driver say they cannot run here.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from boundary_audit import supervisor
from boundary_audit.errors import SandboxError
from boundary_audit.sandbox import _procfs, layout, seccomp
from boundary_audit.sandbox._launch import REAPER, env_bytes, parse_escaped
from boundary_audit.sandbox.interface import ExecResult, Limits, Sandbox, Workspace
from boundary_audit.services.dockerd import Dockerd, DockerEngine
from boundary_audit.services.images import ensure_image

CTL = "/.ba"
DOCKER_REAPER = "/usr/libexec/ba-reaper"
"""The image's execute-only bash the reaper runs from (`services.images`)."""
KILLED = 128 + 9
"""The container's status when pid 1 (or the command whose status it passes on) died of
SIGKILL."""
OOM_SETTLE_S = 1.0
"""How long a SIGKILLed run waits for the engine's OOM flag (see `_oom_killed`)."""


class DockerSandbox(Sandbox):
    """Runs each argv in its own container, with the workspace bind-mounted at /tmp."""

    name = "docker"
    isolated = True
    host_programs = False

    def __init__(self, limits: Limits | None = None, *, engine: DockerEngine | None = None) -> None:
        super().__init__(limits)
        self._engine = engine
        self._dockerd: Dockerd | None = None
        self._client: Any = None
        self.image = ""
        self._lock = threading.Lock()

    def start(self) -> None:
        """Connect to (or start) the engine and make sure the image exists. Idempotent."""
        with self._lock:
            if self._client is not None:
                return
            import docker

            if self._engine is None:
                self._dockerd = Dockerd()
                self._engine = self._dockerd.start()
            try:
                client = docker.DockerClient(
                    base_url=self._engine.url, timeout=120, max_pool_size=16
                )
                client.ping()
            except docker.errors.DockerException as exc:
                raise SandboxError(
                    f"docker: engine at {self._engine.url} does not answer: {exc}"
                ) from exc
            self.image = ensure_image(client)
            self._client = client

    def describe(self) -> str:
        return f"docker ({self.image})" if self.image else self.name

    def confined_by(self) -> tuple[str, ...]:
        return ("a container per run, read-only root, no network", "a uid of its own",
                "seccomp", "memory/pids/cpu limits")  # fmt: skip

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._dockerd is not None:
                self._dockerd.stop()
                self._dockerd = None

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        self.start()
        ws = layout.new_workspace(fixed_inner=True)
        try:
            yield ws
        finally:
            layout.remove_workspace(ws)

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        self.start()
        layout.adopt_workspace(ws)
        ctl = Path(tempfile.mkdtemp(prefix="ba-ctl-", dir=ws.root.parent))
        try:
            full_env = {**self.base_env(ws), **(env or {})}
            if stdin is not None:
                (ctl / "stdin").write_bytes(stdin)
            (ctl / "env").write_bytes(env_bytes(full_env))
            for path in [ctl, *ctl.iterdir()]:
                layout.give(ws, path)
            container = self._create(ws, ctl, argv, stdin is not None, full_env)
            assert self._engine is not None
            book = supervisor.ledger()
            token = book.register("container", socket=str(self._engine.socket), id=container.id)
            try:
                return self._execute(container, ctl, timeout or self.limits.timeout_s)
            finally:
                _remove(container)
                book.release(token)
        finally:
            shutil.rmtree(ctl, ignore_errors=True)

    def _create(
        self, ws: Workspace, ctl: Path, argv: Sequence[str], has_stdin: bool, env: dict[str, str]
    ) -> Any:
        import docker
        from docker.types import LogConfig, Mount, Ulimit

        lim = self.limits
        # NOTE(sandbox): the engine always sets HOSTNAME; the reaper hands the argv exactly
        # the run's environment (read from /.ba/env), as bwrap and tempdir give it.
        command = [DOCKER_REAPER, "-c", REAPER, "ba-reap", f"{CTL}/status",
                   f"{CTL}/stdin" if has_stdin else "-", f"{CTL}/env", *argv]  # fmt: skip
        try:
            return self._client.containers.create(
                self.image,
                command=command,
                environment=env,
                working_dir=ws.inner_work,
                hostname="sandbox",
                user=run_user(ws),
                network_mode="none",
                read_only=True,
                cap_drop=["ALL"],
                security_opt=security_options(),
                mounts=[
                    Mount(layout.INNER_ROOT, str(ws.root), type="bind"),
                    *(
                        Mount(t, str(ws.bin), type="bind", read_only=True)
                        for t in layout.bin_targets(ws)
                    ),
                    Mount(CTL, str(ctl), type="bind"),
                ],
                mem_limit=lim.memory_bytes,
                memswap_limit=lim.memory_bytes,
                pids_limit=lim.max_procs,
                nano_cpus=1_000_000_000,
                ulimits=[
                    Ulimit(name="cpu", soft=lim.cpu_s, hard=lim.cpu_s + 1),
                    Ulimit(name="fsize", soft=lim.file_bytes, hard=lim.file_bytes),
                    Ulimit(name="core", soft=0, hard=0),
                ],
                log_config=LogConfig(type="none"),
                labels={"boundary-audit.run": ws.run_id},
            )
        except docker.errors.DockerException as exc:
            raise SandboxError(f"docker: cannot create a container: {exc}") from exc

    def _execute(self, container: Any, ctl: Path, timeout: float) -> ExecResult:
        import docker

        start = time.monotonic()
        started_at = time.time()
        out = _AttachReader(container, self.limits.output_bytes)
        try:
            container.start()
        except docker.errors.DockerException as exc:
            raise SandboxError(f"docker: cannot start a container: {exc}") from exc
        timed_out, code, escaped = False, None, 0
        try:
            code = container.wait(timeout=timeout)["StatusCode"]
        except Exception:  # noqa: BLE001 - requests' ReadTimeout/ConnectionError: the timeout
            timed_out = True
            escaped = _escapees(container)
            _kill(container, self.limits.grace_s)
        out.thread.join(timeout=self.limits.grace_s)
        if not timed_out:
            escaped = parse_escaped(_read_status(ctl))
        oom = _oom_killed(
            container,
            settle_s=0.0 if timed_out or code != KILLED else OOM_SETTLE_S,
            since=started_at,
        )
        return ExecResult(
            exit_code=code,
            stdout=bytes(out.stdout),
            stderr=bytes(out.stderr),
            timed_out=timed_out,
            truncated=out.truncated,
            duration_s=time.monotonic() - start,
            escaped_killed=escaped,
            limits_hit=("memory",) if oom else (),
        )


def _oom_killed(container: Any, settle_s: float = 0.0, since: float | None = None) -> bool:
    """True if the memory limit killed a process of the container (the engine's OOM flag, or
    the container cgroup's own `oom_kill` count, which also counts processes below pid 1).

    The engine learns of an OOM kill and of the container's exit by two separate events, so
    right after `wait` the flag may not be set yet, and the exit may even clear it again
    once set (seen in CI: status 137, no flag after a second). `settle_s` > 0 (the run
    ended with status 137 before our timeout: pid 1 or its command died of SIGKILL, which is
    what the kernel's OOM killer sends) waits that long for the flag, and asks the engine's
    event log too: the `oom` event it logs for the container (since `since`, epoch seconds)
    stays there whatever becomes of the flag. A reply that SIGKILLs its own shell only makes
    its run wait that long."""
    deadline = time.monotonic() + settle_s
    while True:
        try:
            container.reload()
            state = container.attrs["State"]
            if state.get("OOMKilled"):
                return True
            init = int(state["Pid"] or 0)
        except Exception:  # noqa: BLE001 - gone already: no evidence either way
            return False
        if init > 0 and _cgroup_oom_kills(init) > 0:
            return True
        if settle_s > 0 and since is not None and _oom_event(container, since):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _oom_event(container: Any, since: float) -> bool:
    """True if the engine's event log holds an `oom` event of `container` since `since`."""
    try:
        events = container.client.events(
            since=int(since) - 1,
            until=f"{time.time():.6f}",
            filters={"container": container.id, "event": "oom"},
            decode=True,
        )
        try:
            return any(e.get("status") == "oom" or e.get("Action") == "oom" for e in events)
        finally:
            events.close()
    except Exception:  # noqa: BLE001 - the engine cannot say: no evidence either way
        return False


def _cgroup_oom_kills(pid: int) -> int:
    """`oom_kill` of the memory cgroup `pid` is in (v1 or v2), 0 where it cannot be read."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "memory":
            events = Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control"
        elif controllers == "":
            events = Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.events"
        else:
            continue
        try:
            for row in events.read_text().splitlines():
                key, _, value = row.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _read_status(ctl: Path, limit: int = 4096) -> str:
    """The reaper's status file, read as a hostile file: the control dir belongs to the run's
    uid, so `status` may have become a link, a FIFO or a huge file. Never followed, never
    blocking, at most `limit` bytes; "" when it is not a regular file."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        dir_fd = os.open(ctl, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        fd = os.open("status", flags, dir_fd=dir_fd)
    except OSError:
        return ""
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("ascii", "replace")
    finally:
        os.close(fd)


def run_user(ws: Workspace) -> str:
    """`uid:gid` for a container of workspace `ws`: its identity, never root."""
    uid, gid = (ws.uid, ws.gid) if ws.uid >= 0 else (os.geteuid(), os.getegid())
    if uid == 0:
        uid = gid = NOBODY
    return f"{uid}:{gid}"


NOBODY = 65534


def security_options() -> list[str]:
    """no-new-privileges and the seccomp deny list, for every container boundary-audit makes."""
    return ["no-new-privileges", f"seccomp={seccomp.docker_profile()}"]


class _AttachReader:
    """Streams a container's demultiplexed stdout/stderr on a thread, capped per stream."""

    def __init__(self, container: Any, cap: int) -> None:
        self.stdout, self.stderr = bytearray(), bytearray()
        self.truncated = False
        self._cap = cap
        self._stream = container.attach(
            stdout=True, stderr=True, stream=True, demux=True, logs=False
        )
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        try:
            for out, err in self._stream:
                self._keep(self.stdout, out)
                self._keep(self.stderr, err)
        except Exception:  # noqa: BLE001 - the connection closes when the container is killed
            pass

    def _keep(self, sink: bytearray, chunk: bytes | None) -> None:
        if not chunk:
            return
        room = self._cap - len(sink)
        if room > 0:
            sink += chunk[:room]
        if len(chunk) > room:
            self.truncated = True


def _escapees(container: Any) -> int:
    """Processes in the container's pids cgroup that left its pid 1's session."""
    try:
        container.reload()
        init = int(container.attrs["State"]["Pid"])
        line = next(ln for ln in Path(f"/proc/{init}/cgroup").read_text().splitlines()
                    if ln.split(":")[1] == "pids")  # fmt: skip
        procs = Path("/sys/fs/cgroup/pids") / line.split(":", 2)[2].lstrip("/") / "cgroup.procs"
        members = _procfs.live([int(p) for p in procs.read_text().split()])
    except (OSError, StopIteration, ValueError, KeyError, IndexError):
        return 0
    info = _procfs.read_proc(init)
    own = {init, info.session if info else init}
    return sum(1 for p in members if p.pid != init and p.session not in own)


def _kill(container: Any, grace_s: float) -> None:
    try:
        container.kill()
        container.wait(timeout=grace_s)
    except Exception:  # noqa: BLE001 - already dead, or removed below anyway
        pass


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception as exc:  # noqa: BLE001
        import docker

        if not isinstance(exc, docker.errors.NotFound):
            raise SandboxError(
                f"docker: cannot remove container {container.id[:12]}: {exc}"
            ) from exc
