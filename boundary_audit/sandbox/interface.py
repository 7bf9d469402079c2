"""The sandbox interface: a fresh workspace per run, and a way to run an argv inside it.

A transport never spawns a process itself; it asks the sandbox to run an argv (a plain
`bash -c R`, or an in-sandbox driver program for sessions, tmux and ssh), so that everything a
reply starts is confined and killed by the sandbox. The validator then inspects the
workspace's host paths.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from boundary_audit._subprocess import BASE_PATH


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every run."""

    timeout_s: float = 10.0
    """Wall-clock limit for one run; the whole sandbox is killed when it expires."""
    grace_s: float = 2.0
    """How long teardown may take after the timeout before it counts as a sandbox failure."""
    cpu_s: int = 30
    """CPU seconds per process (RLIMIT_CPU)."""
    memory_bytes: int = 1 << 30
    """Memory of the run as a whole, its tmpfs pages (the workspace) included, where a memory
    cgroup binds it; per process (RLIMIT_AS) besides, unless `address_space_bytes` says."""
    address_space_bytes: int | None = None
    """Per-process address space (RLIMIT_AS) when it must differ from `memory_bytes`: a
    JavaScript runtime reserves gigabytes of address space for WebAssembly (node's fetch)
    that it never touches; the cgroup still bounds what is used. None: `memory_bytes`."""
    cpus: float = 1.0
    """CPUs' worth of time the run as a whole may use per period (a cgroup CPU quota)."""
    max_procs: int = 256
    output_bytes: int = 1 << 20
    """Cap on captured stdout and on stderr, each."""
    file_bytes: int = 512 << 20
    """Largest file a run may write."""


@dataclass
class Workspace:
    """One run's private directories, as the host sees them and as the sandboxed process does.

    `work` is the directory the reply runs in and the validator inspects. `obs` is where fixture
    recorders (the argv recorder, the env dumper) write, outside `work` so that they never count
    as collateral files. `bin` holds helper programs and comes first on PATH.
    """

    run_id: str
    root: Path
    work: Path
    home: Path
    obs: Path
    bin: Path
    tmp: Path
    inner_work: str
    inner_home: str
    inner_obs: str
    inner_bin: str
    inner_tmp: str
    env: dict[str, str] = field(default_factory=dict)
    """Task-specific environment added on top of the scrubbed base environment."""
    work_fd: int = -1
    """A directory descriptor of `work`, opened when the workspace was created (before any
    reply ran). Host-side readers (validators, recorders) go through it, never through the
    path: a reply that replaces its work dir by a link cannot point them elsewhere. -1 for a
    workspace made by hand (tests); `layout.remove_workspace` closes it."""
    obs_fd: int = -1
    """The same for `obs`."""
    uid: int = -1
    """The host uid every process of this workspace runs as (`identity`); -1 means the
    invoking user (a workspace made by hand)."""
    gid: int = -1
    cgroup: object | None = None
    """The workspace's limits group (`_cgroup.workspace_group`): every run of the workspace
    is a child of it, so its limits bind the workspace's runs as a whole."""
    adopted: bool = False
    """True once the workspace's files were given to `uid` (`layout.adopt_workspace`)."""


@dataclass(frozen=True)
class ExecResult:
    """The outcome of running one argv in a sandbox."""

    exit_code: int | None
    """Exit status; None if the run was killed on timeout. A death by signal N is reported as
    128+N on every backend (the shell convention: the in-sandbox reaper cannot tell them apart)."""
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0
    escaped_killed: int = 0
    """Processes that outlived the run (setsid, double fork) and were killed by teardown."""
    limits_hit: tuple[str, ...] = ()
    """The run-wide limits the reply ran into (`"memory"`: the cgroup OOM-killed in the run):
    the reply's own failure, reported in its reason."""


class Sandbox(ABC):
    """A backend that creates workspaces and runs argvs confined to them."""

    name: ClassVar[str]
    isolated: ClassVar[bool]
    """False for the plain-directory backend, which only pretends (and warns)."""
    host_programs: ClassVar[bool] = True
    """True when host binaries and this Python (sys.executable) are usable inside."""

    _exposed: frozenset[str] = frozenset()

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()

    def expose(self, paths: Iterable[str | Path]) -> None:
        """Make host paths readable (never writable) inside this backend's later runs.

        For drivers that run a program installed outside the tool's own Python, e.g. a real
        harness's virtual environment and its base interpreter. Backends that hide parts of the
        host file system bind these paths back read-only; the others see them anyway.
        """
        self._exposed = self._exposed | {os.path.realpath(p) for p in paths}

    @property
    def exposed(self) -> tuple[str, ...]:
        """The host paths passed to `expose`, resolved and sorted."""
        return tuple(sorted(self._exposed))

    _granted: frozenset[int] = frozenset()

    def grant(self, sockets: Iterable[str | Path]) -> None:
        """Let later runs connect to these unix sockets of the host (a harness's own Docker
        engine): each is given to the access group (`identity.access_gid`), mode 0660, its
        directory made searchable by that group, and runs get that group. Only for a socket
        boundary-audit itself serves; a reply that reaches it has what the harness has."""
        from boundary_audit.sandbox import identity

        gid = identity.access_gid()
        for sock in sockets:
            if os.geteuid() == 0:
                os.chown(sock, -1, gid)
                os.chmod(sock, 0o660)
                parent = os.path.dirname(os.path.realpath(sock))
                st = os.stat(parent)
                if st.st_gid != gid or not st.st_mode & 0o010:
                    os.chown(parent, -1, gid)
                    os.chmod(parent, (st.st_mode & 0o7777) | 0o010)
            self._granted = self._granted | {gid}

    @property
    def granted_groups(self) -> tuple[int, ...]:
        """The supplementary groups runs get (see `grant`), sorted."""
        return tuple(sorted(self._granted)) if os.geteuid() == 0 else ()

    @abstractmethod
    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        """A fresh workspace, removed (and every process in it killed) on exit."""

    @abstractmethod
    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `argv` inside the sandbox with cwd = work dir and the scrubbed environment.

        `stdin` None means /dev/null. `env` is added on top of `base_env(ws)`. Never raises for
        what the program does (exit codes, timeouts, output floods); raises SandboxError only
        when the sandbox itself fails.
        """

    def base_env(self, ws: Workspace) -> dict[str, str]:
        """The scrubbed environment every run starts from, plus the task's own variables."""
        env = {
            "PATH": f"{ws.inner_bin}:{BASE_PATH}",
            "HOME": ws.inner_home,
            "TMPDIR": ws.inner_tmp,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "USER": "root",
            "LOGNAME": "root",
            "SHELL": "/bin/bash",
            "TERM": "dumb",
            "BA_OBS": ws.inner_obs,
            "BA_RUN_ID": ws.run_id,
        }
        env.update(ws.env)
        return env

    def notices(self) -> tuple[str, ...]:
        """Warnings to show the user when this backend is selected: missing isolation, limits
        that could not be applied. Library code returns them; only the CLI prints them."""
        return ()

    def describe(self) -> str:
        """A short label for reports, e.g. `bwrap 0.8.0` or `docker (image ...)`."""
        return self.name

    def confinement(self) -> str:
        """One line for the user: this backend and what confines a run in it here."""
        return f"{self.describe()} ({', '.join(self.confined_by()) or 'NO isolation'})"

    def confined_by(self) -> tuple[str, ...]:
        """What confines a run in this backend here (empty: nothing does)."""
        return ()

    def close(self) -> None:
        """Release backend-wide resources (a Docker engine, a container). Idempotent."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
