"""bubblewrap backend (the default): each run in fresh namespaces over a read-only root.

One unprivileged `bwrap` per run. The host side (`_launch.limit_prefix`) joins the run's
cgroup, applies the rlimits and then drops to the workspace's own uid (`identity`): bwrap never
runs as root, so the user namespace it makes maps the sandbox's uid 0 to that unprivileged uid
and nothing else. Inside, with:

- `--unshare-all` (user, mount, pid, net, ipc, uts, cgroup namespaces) and
  `--disable-userns`: no network but a private loopback, no further user namespace, and a pid
  namespace whose pid 1 is our reaper (`--as-pid-1`), so the whole run dies with it and a
  reply's `kill -9 -1` reaches only the run itself;
- no capabilities, `no_new_privs`, `--new-session` (no TIOCSTI into the caller's terminal;
  pty-based drivers open their own terminal inside), `--die-with-parent`, hostname `sandbox`,
  and the seccomp filter of `seccomp` (no ptrace, mount, bpf, perf, keyctl, kexec, modules...);
- the host root read-only, built one top-level entry at a time (`--ro-bind /usr /usr`,
  `--symlink usr/bin /bin`, ...; `--remount-ro /` at the end) rather than by one recursive
  `--ro-bind / /`: bwrap remounts every submount it copies read-only and fails when one
  vanishes meanwhile, and the mounts that come and go (Docker engines' overlays under
  ~/.cache or /tmp, /run) are exactly those under the entries left out or hidden. A set-up
  that fails anyway (the reaper never reported, stderr says `bwrap: ...`) is retried, then
  raised as SandboxError;
- every kernel interface read-only: /sys, and /proc/sys, /proc/sysrq-trigger, /proc/irq,
  /proc/bus and /proc/fs of the fresh /proc bound read-only over themselves (bwrap covers
  /proc/sys only when it is writable, which it is not, mode 0555, so a root reply could write
  kernel.core_pattern); a fresh /dev, read-only but for a 64 MiB /dev/shm;
- the workspace root bound read-write at `/tmp` with `bin/` re-bound read-only (see `layout`
  for the fixed inner paths);
- secrets hidden: empty read-only tmpfs over /root, /home, the caller's $HOME, /run (Docker
  and other daemons' sockets), /var/tmp; /dev/null over /etc/shadow, /etc/gshadow and the SSH
  host keys (and the rest of root's files are unreadable to the reply's uid anyway). The
  Python installation running boundary-audit is re-exposed read-only when it lives in a
  hidden directory or under /tmp, so in-sandbox drivers (`sys.executable -m ...`) keep
  working from any clone; so are the paths given to `Sandbox.expose` (a real harness's venv).

Limits: a cgroup per run (pids, memory with the workspace's tmpfs pages, CPU; `_cgroup`) and
prlimit rlimits (host side, see `_launch`). Teardown: the reaper counts and kills what
outlived the reply; on a timeout the process group, the namespace (pid 1 dies), the cgroup and
every process of the run's uid are killed.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.errors import EnvironmentUnavailable, SandboxError
from boundary_audit.sandbox import _cgroup, _exec, _procfs, identity, layout, seccomp, store
from boundary_audit.sandbox._cgroup import RunCgroup
from boundary_audit.sandbox._launch import (
    JOIN_FAILED,
    REAPER,
    REAPER_PROGRAM,
    env_fd,
    limit_prefix,
    parse_escaped,
    prlimit_path,
)
from boundary_audit.sandbox.interface import ExecResult, Limits, Sandbox, Workspace

HIDDEN_DIRS = ("/root", "/home", "/run", "/var/tmp")
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key")
NOT_BOUND = {"proc", "dev", "tmp", "lost+found"}
KERNEL_FILES = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""Parts of the fresh /proc bound read-only over themselves."""
SHM_BYTES = 64 << 20
SETUP_ATTEMPTS = 3
"""bwrap set-up can fail when a host mount vanishes while it is copied; such a run is retried."""


def hidden_dirs() -> list[str]:
    """Existing directories that get an empty tmpfs inside: secrets and daemons' sockets."""
    home = os.environ.get("HOME", "")
    wanted = [*HIDDEN_DIRS, home] if home.startswith("/") else list(HIDDEN_DIRS)
    found = sorted({os.path.realpath(d) for d in wanted if os.path.isdir(d)})
    return [d for d in found if d != "/" and not any(_under(d, o) for o in found if o != d)]


def reexposed_paths(hidden: list[str]) -> list[str]:
    """The Python installation and package paths that the sandbox would not show.

    Those inside a hidden directory, and those under /tmp, which is the workspace inside (a
    clone under /tmp and its venv): both are bound back read-only.
    """
    import boundary_audit

    needed = {sys.prefix, sys.base_prefix, str(Path(boundary_audit.__file__).parent.parent)}
    real = sorted({os.path.realpath(p) for p in needed})
    covered = [*hidden, *(f"/{entry}" for entry in NOT_BOUND)]
    inside = [p for p in real if any(_under(p, h) for h in covered)]
    return [p for p in inside if not any(_under(p, o) for o in inside if o != p)]


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def root_args(hidden: list[str]) -> list[str]:
    """The new root, one top-level entry at a time (see the module docstring)."""
    args: list[str] = []
    for entry in sorted(os.listdir("/")):
        path = "/" + entry
        if entry in NOT_BOUND:
            continue
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif path in hidden:
            args += ["--tmpfs", path]
        elif os.path.isdir(path):
            args += ["--ro-bind", store.host_view(path), path]
    return args


@functools.cache
def static_args() -> tuple[str, ...]:
    """The bwrap options shared by every run before the workspace (computed once)."""
    hidden = hidden_dirs()
    args = [
        "--unshare-all", "--unshare-user", "--uid", "0", "--gid", "0", "--disable-userns",
        "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL",
        "--hostname", "sandbox",
        *root_args(hidden),
        "--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
        "--proc", "/proc",
    ]  # fmt: skip
    for path in KERNEL_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for d in hidden:
        if os.path.dirname(d) != "/":
            args += ["--tmpfs", d]
    for p in reexposed_paths(hidden):
        if not any(_under(p, f"/{entry}") for entry in NOT_BOUND):
            args += ["--ro-bind", store.host_view(p), p]
    for pattern in SECRET_FILES:
        for f in sorted(glob.glob(pattern)):
            args += ["--ro-bind", "/dev/null", f]
    return tuple(args)


def late_args() -> tuple[str, ...]:
    """The options that must follow the workspace: re-exposed paths under /tmp, then the
    read-only remounts (a tmpfs is remounted once everything is bound into it)."""
    return _late_args(tuple(hidden_dirs()))


@functools.cache
def _late_args(hidden: tuple[str, ...]) -> tuple[str, ...]:
    args: list[str] = []
    for p in reexposed_paths(list(hidden)):
        if any(_under(p, f"/{entry}") for entry in NOT_BOUND):
            args += ["--ro-bind", store.host_view(p), p]
    for d in [*hidden, "/dev"]:
        args += ["--remount-ro", d]
    return tuple(args)


@functools.cache
def bwrap_version(program: str) -> str:
    """`bwrap --version` output, e.g. `bubblewrap 0.8.0`, or "" if it does not answer."""
    try:
        r = _subprocess.run([program, "--version"], timeout=10)
    except EnvironmentUnavailable:
        return ""
    return r.stdout.decode("utf-8", "replace").strip()


@functools.cache
def unusable_reason() -> str | None:
    """None if bwrap runs here with our options, else why not (checked once per process)."""
    program = shutil.which("bwrap")
    if program is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    sandbox = BwrapSandbox(Limits(timeout_s=20, grace_s=5))
    try:
        with sandbox.workspace() as ws:
            r = sandbox.run(ws, ["/bin/sh", "-c", SELF_CHECK])
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot run here"
        return f"bwrap cannot start: {exc}"
    if r.exit_code == 3:
        return "bwrap runs but does not confine here: " + r.stdout.decode("ascii", "replace")
    if r.exit_code != 0 or r.stdout != b"ok\n":
        detail = r.stderr.decode("utf-8", "replace").strip().splitlines()
        return "bwrap cannot start: " + (detail[-1] if detail else f"exit {r.exit_code}")
    return None


SELF_CHECK = (
    "echo ok > ok && cat ok || exit 1; "
    "for f in /proc/sys/kernel/core_pattern /etc /usr; do "
    'if [ -w $f ]; then echo "$f is writable"; exit 3; fi; done; '
    "if [ -r /etc/shadow- ] && [ -s /etc/shadow- ]; then "
    "echo '/etc/shadow- is readable'; exit 3; fi"
)
"""What `unusable_reason` runs in a fresh sandbox: it must work, and must not be able to
write the kernel's settings or the root, or read root's files (exit 3 says which)."""


class BwrapSandbox(Sandbox):
    """Runs each argv under bubblewrap with the workspace at fixed paths under /tmp."""

    name = "bwrap"
    isolated = True

    def __init__(self, limits: Limits | None = None, *, tracing: bool = False) -> None:
        """`tracing=True` is for observation runs only (`boundary_audit.observe`): the outer
        seccomp filter then lets the tracer use ptrace (`seccomp.TRACING`); the traced program
        re-installs the default filter before it runs anything of the harness."""
        super().__init__(limits)
        self.tracing = tracing

    def describe(self) -> str:
        return bwrap_version(shutil.which("bwrap") or "bwrap") or self.name

    def notices(self) -> tuple[str, ...]:
        return confinement_notices()

    def confined_by(self) -> tuple[str, ...]:
        traced = ("ptrace for the tracer only",) if self.tracing else ()
        return ("namespaces, read-only root, no network", *host_confinement(), *traced)

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        ws = layout.new_workspace(fixed_inner=True)
        try:
            yield ws
        finally:
            layout.remove_workspace(ws)

    def bwrap_argv(self, ws: Workspace, seccomp_fd: int | None = None) -> list[str]:
        """The bwrap command line up to (and including) `--`, for workspace `ws`."""
        # NOTE(h8): exposed paths go last, so one under /tmp (a Docker engine's socket dir) is
        # bound over the workspace's /tmp instead of being hidden by it.
        exposed = [a for p in self.exposed for a in ("--ro-bind", store.host_view(p), p)]
        return [
            shutil.which("bwrap") or "bwrap",
            *static_args(),
            "--bind", str(ws.root), layout.INNER_ROOT,
            *(a for t in layout.bin_targets(ws) for a in ("--ro-bind", str(ws.bin), t)),
            *exposed,
            "--ro-bind", store.reaper_program(), REAPER_PROGRAM,
            *late_args(),
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            "--remount-ro", "/",
            "--chdir", ws.inner_work,
            "--",
        ]  # fmt: skip

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        layout.adopt_workspace(ws)
        full_env = {**self.base_env(ws), **(env or {})}
        for _ in range(SETUP_ATTEMPTS):
            done, oom = self._spawn(ws, argv, stdin, timeout, full_env)
            if done.stderr.startswith(JOIN_FAILED):
                raise SandboxError(done.stderr.decode("utf-8", "replace").strip())
            if done.timed_out or done.status or oom or not done.stderr.startswith(b"bwrap: "):
                break
        else:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
            raise SandboxError(
                f"bwrap could not set up the sandbox ({SETUP_ATTEMPTS} tries): {why}"
            )
        escaped = done.escaped if done.timed_out else parse_escaped(done.status)
        return ExecResult(
            exit_code=_exec.signal_status(done.returncode),
            stdout=done.stdout,
            stderr=done.stderr,
            timed_out=done.timed_out,
            truncated=done.truncated,
            duration_s=done.duration_s,
            escaped_killed=escaped,
            limits_hit=("memory",) if oom else (),
        )

    def _spawn(
        self,
        ws: Workspace,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        full_env: dict[str, str],
    ) -> tuple[_exec.Spawned, bool]:
        """One bwrap process for `argv`, and whether the memory limit killed in it.

        The spawned status is empty if the reaper never started."""
        lim = self.limits
        group, cgroup = _cgroup.run_group(ws, lim)
        oom_before = group.oom_kills() if group is not None else 0
        ident = identity.Identity(ws.uid, ws.gid)
        status = _exec.StatusPipe()
        filter_fd = seccomp.program_fd(seccomp.TRACING if self.tracing else frozenset())
        environ_fd = env_fd(full_env)
        command = [
            *limit_prefix(lim, cgroup, ident=ident, groups=self.granted_groups),
            *self.bwrap_argv(ws, filter_fd),
            REAPER_PROGRAM, "-c", REAPER, "ba-reap", str(status.write_fd), "-",
            str(environ_fd), *argv,
        ]  # fmt: skip
        try:
            done = _exec.spawn(
                command,
                env=full_env,
                cwd=Path("/"),  # bwrap --chdir sets the run's own; never a path a reply swapped
                stdin=stdin,
                timeout=timeout or lim.timeout_s,
                output_cap=lim.output_bytes,
                grace_s=lim.grace_s,
                sweep=lambda pid, timed_out: self._sweep(pid, timed_out, cgroup, ident),
                status=status,
                extra_fds=(environ_fd, *([filter_fd] if filter_fd is not None else [])),
            )
            return done, group is not None and group.oom_kills() > oom_before
        finally:
            status.close()
            os.close(environ_fd)
            if filter_fd is not None:
                os.close(filter_fd)
            if cgroup is not None:
                cgroup.remove(time.monotonic() + lim.grace_s)

    def _sweep(
        self, main_pid: int, timed_out: bool, cgroup: RunCgroup | None, ident: identity.Identity
    ) -> int:
        """Kill bwrap's group, the run's cgroup and its uid; on a timeout count who left."""
        escaped = 0
        if timed_out and cgroup is not None:
            members = _procfs.live(cgroup.members())
            own = {main_pid} | {p.pid for p in members if p.ppid == main_pid}
            escaped = sum(1 for p in members if p.pid not in own and p.session not in own)
        _subprocess.kill_group(main_pid)
        if cgroup is not None:
            cgroup.kill_all(time.monotonic() + self.limits.grace_s)
        return escaped


def host_confinement() -> tuple[str, ...]:
    """What confines a run of a host backend here, beyond namespaces."""
    found = []
    if os.geteuid() == 0:
        found.append("a uid of its own")
    if seccomp.native_arch() is not None:
        found.append("seccomp")
    hier = _cgroup.hierarchy()
    if hier is not None:
        controllers = "/".join(c for c in _cgroup.CONTROLLERS if c in hier.parents)
        found.append(f"cgroup v{hier.version} ({controllers})")
    if store.store().tmpfs:
        found.append("tmpfs workspace")
    return tuple(found)


def confinement_notices() -> tuple[str, ...]:
    """What the isolating host backends cannot apply here, for the user to read."""
    found = []
    missing = _cgroup.missing()
    if missing:
        found.append(
            f"no writable cgroup controller for {', '.join(missing)}: those limits apply per "
            "process only (rlimits), not to the run as a whole"
        )
    if prlimit_path() is None:
        found.append("prlimit not found: CPU, memory and file-size rlimits are not applied")
    if seccomp.native_arch() is None:
        found.append("no seccomp filter for this architecture: only namespaces confine the run")
    if os.geteuid() != 0:
        found.append("not root: replies run as you (no uid of their own)")
    elif not store.store().tmpfs:
        found.append("the workspace store is not a tmpfs: the disk is not bounded per run")
    return tuple(found)
