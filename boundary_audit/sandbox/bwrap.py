"""bubblewrap backend (the default): each run in fresh namespaces over a read-only root.

One `bwrap` per run with:

- `--unshare-all` (user, mount, pid, net, ipc, uts, cgroup namespaces): no network but a
  private loopback, and a pid namespace whose pid 1 is our reaper (`--as-pid-1`), so the whole
  run dies with it and a reply's `kill -9 -1` reaches only the run itself;
- `--cap-drop ALL`, `--new-session` (no TIOCSTI into the caller's terminal; pty-based drivers
  open their own terminal inside), `--die-with-parent`, hostname `sandbox`;
- the host root read-only, built one top-level entry at a time (`--ro-bind /usr /usr`,
  `--symlink usr/bin /bin`, ...; `--remount-ro /` at the end) rather than by one recursive
  `--ro-bind / /`: bwrap remounts every submount it copies read-only and fails when one
  vanishes meanwhile, and the mounts that come and go (Docker engines' overlays under
  ~/.cache or /tmp, /run) are exactly those under the entries left out or hidden. A set-up
  that fails anyway (the reaper never reported, stderr says `bwrap: ...`) is retried, then
  raised as SandboxError;
- a fresh /dev and /proc, and the workspace root bound read-write at `/tmp` with `bin/`
  re-bound read-only (see `layout` for the fixed inner paths);
- secrets hidden: empty tmpfs over /root, /home, the caller's $HOME, /run (Docker and other
  daemons' sockets), /var/tmp; /dev/null over /etc/shadow, /etc/gshadow and the SSH host keys.
  The Python installation running boundary-audit is re-exposed read-only when it lives in a
  hidden directory, so in-sandbox drivers (`sys.executable -m ...`) keep working; so are the
  paths given to `Sandbox.expose` (a real harness's venv and its interpreter).

Limits: prlimit rlimits and a pids cgroup per run (host side, see `_launch`). Teardown: the
reaper counts and kills what outlived the reply; on a timeout the process group, the namespace
(pid 1 dies) and the cgroup are killed.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.errors import EnvironmentUnavailable, SandboxError
from boundary_audit.sandbox import _exec, _procfs, layout
from boundary_audit.sandbox._cgroup import PidsCgroup, cgroup_parent
from boundary_audit.sandbox._launch import (
    REAPER,
    injected,
    limit_prefix,
    parse_escaped,
    prlimit_path,
)
from boundary_audit.sandbox.interface import ExecResult, Limits, Sandbox, Workspace

HIDDEN_DIRS = ("/root", "/home", "/run", "/var/tmp")
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key")
NOT_BOUND = {"proc", "dev", "tmp", "lost+found"}
SETUP_ATTEMPTS = 3
"""bwrap set-up can fail when a host mount vanishes while it is copied; such a run is retried."""


def hidden_dirs() -> list[str]:
    """Existing directories that get an empty tmpfs inside: secrets and daemons' sockets."""
    home = os.environ.get("HOME", "")
    wanted = [*HIDDEN_DIRS, home] if home.startswith("/") else list(HIDDEN_DIRS)
    found = sorted({os.path.realpath(d) for d in wanted if os.path.isdir(d)})
    return [d for d in found if d != "/" and not any(_under(d, o) for o in found if o != d)]


def reexposed_paths(hidden: list[str]) -> list[str]:
    """The Python installation and package paths that fall inside a hidden directory."""
    import boundary_audit

    needed = {sys.prefix, sys.base_prefix, str(Path(boundary_audit.__file__).parent.parent)}
    real = sorted({os.path.realpath(p) for p in needed})
    inside = [p for p in real if any(_under(p, h) for h in hidden)]
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
            args += ["--ro-bind", path, path]
    return args


@functools.cache
def static_args() -> tuple[str, ...]:
    """The bwrap options shared by every run (computed once per process)."""
    hidden = hidden_dirs()
    args = [
        "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
        "--cap-drop", "ALL", "--hostname", "sandbox",
        *root_args(hidden), "--dev", "/dev", "--proc", "/proc",
    ]  # fmt: skip
    for d in hidden:
        if os.path.dirname(d) != "/":
            args += ["--tmpfs", d]
    for p in reexposed_paths(hidden):
        args += ["--ro-bind", p, p]
    for pattern in SECRET_FILES:
        for f in sorted(glob.glob(pattern)):
            args += ["--ro-bind", "/dev/null", f]
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
            r = sandbox.run(ws, ["/bin/sh", "-c", "echo ok > ok && cat ok"])
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot run here"
        return f"bwrap cannot start: {exc}"
    if r.exit_code != 0 or r.stdout != b"ok\n":
        detail = r.stderr.decode("utf-8", "replace").strip().splitlines()
        return "bwrap cannot start: " + (detail[-1] if detail else f"exit {r.exit_code}")
    return None


class BwrapSandbox(Sandbox):
    """Runs each argv under bubblewrap with the workspace at fixed paths under /tmp."""

    name = "bwrap"
    isolated = True

    _runs = itertools.count()

    def describe(self) -> str:
        return bwrap_version(shutil.which("bwrap") or "bwrap") or self.name

    def notices(self) -> tuple[str, ...]:
        found = []
        if cgroup_parent() is None:
            found.append("no writable pids cgroup: the process-count limit does not bind root")
        if prlimit_path() is None:
            found.append("prlimit not found: CPU, memory and file-size limits are not applied")
        return tuple(found)

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        ws = layout.new_workspace(fixed_inner=True)
        try:
            yield ws
        finally:
            layout.remove_workspace(ws)

    def bwrap_argv(self, ws: Workspace) -> list[str]:
        """The bwrap command line up to (and including) `--`, for workspace `ws`."""
        # NOTE(h8): exposed paths go last, so one under /tmp (a Docker engine's socket dir) is
        # bound over the workspace's /tmp instead of being hidden by it.
        exposed = [a for p in self.exposed for a in ("--ro-bind", p, p)]
        return [
            shutil.which("bwrap") or "bwrap",
            *static_args(),
            "--bind", str(ws.root), layout.INNER_ROOT,
            *(a for t in layout.bin_targets(ws) for a in ("--ro-bind", str(ws.bin), t)),
            *exposed,
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
        full_env = {**self.base_env(ws), **(env or {})}
        for _ in range(SETUP_ATTEMPTS):
            done = self._spawn(ws, argv, stdin, timeout, full_env)
            if done.timed_out or done.status or not done.stderr.startswith(b"bwrap: "):
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
        )

    def _spawn(
        self,
        ws: Workspace,
        argv: Sequence[str],
        stdin: bytes | None,
        timeout: float | None,
        full_env: dict[str, str],
    ) -> _exec.Spawned:
        """One bwrap process for `argv`; its status is empty if the reaper never started."""
        cgroup = PidsCgroup.create(f"{ws.run_id}-{next(self._runs)}", self.limits.max_procs)
        status = _exec.StatusPipe()
        command = [
            *limit_prefix(self.limits, cgroup),
            *self.bwrap_argv(ws),
            "/bin/bash", "-c", REAPER, "ba-reap", str(status.write_fd), "-",
            injected(("PWD",), full_env), *argv,
        ]  # fmt: skip
        try:
            return _exec.spawn(
                command,
                env=full_env,
                cwd=ws.work,
                stdin=stdin,
                timeout=timeout or self.limits.timeout_s,
                output_cap=self.limits.output_bytes,
                grace_s=self.limits.grace_s,
                sweep=lambda pid, timed_out: self._sweep(pid, timed_out, cgroup),
                status=status,
            )
        finally:
            status.close()
            if cgroup is not None:
                cgroup.remove(time.monotonic() + self.limits.grace_s)

    def _sweep(self, main_pid: int, timed_out: bool, cgroup: PidsCgroup | None) -> int:
        """Kill bwrap's group and the run's cgroup; on a timeout count who left the session."""
        escaped = 0
        if timed_out and cgroup is not None:
            members = _procfs.live(cgroup.members())
            own = {main_pid} | {p.pid for p in members if p.ppid == main_pid}
            escaped = sum(1 for p in members if p.pid not in own and p.session not in own)
        _subprocess.kill_group(main_pid)
        if cgroup is not None:
            cgroup.kill_all(time.monotonic() + self.limits.grace_s)
        return escaped
