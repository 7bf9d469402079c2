"""Plain-directory backend: a fresh temp dir per run, limits and a thorough kill, no isolation.

Used where bubblewrap cannot run. A hostile reply *can* write anywhere the user can (there is
no mount namespace), read the user's files and reach the network, so selecting this backend
yields a loud notice. What it does guarantee, like the isolating backends:

- a fresh workspace per run, the scrubbed environment of `Sandbox.base_env`, umask 022;
- CPU / memory / file-size rlimits (prlimit) and a process-count limit that binds root (a pids
  cgroup per run, where one can be created);
- nothing left running after `run` returns: the run's process group is killed, then every
  member of its cgroup (setsid and double-fork cannot leave it), then every process that still
  carries the run's `BA_RUN_ID` marker in its environment (catches a process that moved itself
  to another cgroup). `escaped_killed` counts what outlived the run's main process (or, on a
  timeout, what had left its session).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from boundary_audit import _subprocess
from boundary_audit.errors import SandboxError
from boundary_audit.sandbox import _cgroup, _exec, _procfs, layout
from boundary_audit.sandbox._cgroup import RunCgroup
from boundary_audit.sandbox._launch import JOIN_FAILED, limit_prefix, prlimit_path
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace

WARNING = (
    "sandbox 'tempdir' gives NO isolation: replies run as you, and a hostile reply can write "
    "outside its work dir, read your files and reach the network; use bwrap or docker for "
    "untrusted replies"
)


class TempdirSandbox(Sandbox):
    """Runs each argv in its own session with a scrubbed environment, in a fresh temp dir."""

    name = "tempdir"
    isolated = False

    def notices(self) -> tuple[str, ...]:
        found = [WARNING]
        if _cgroup.missing():
            found.append(
                f"no writable cgroup controller for {', '.join(_cgroup.missing())}: those "
                "limits apply per process only, and escaped processes are found only by "
                "their BA_RUN_ID environment marker"
            )
        if prlimit_path() is None:
            found.append("prlimit not found: CPU, memory and file-size limits are not applied")
        return tuple(found)

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        ws = layout.new_workspace(fixed_inner=False, own_identity=False)
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
        full_env = {**self.base_env(ws), **(env or {})}
        lim = self.limits
        group, cgroup = _cgroup.run_group(ws, lim)
        oom_before = group.oom_kills() if group is not None else 0
        marker = f"BA_RUN_ID={ws.run_id}".encode()
        try:
            done = _exec.spawn(
                [*limit_prefix(self.limits, cgroup, full_env), *argv],
                env=full_env,
                cwd=layout.work_cwd(ws),
                stdin=stdin,
                timeout=timeout or self.limits.timeout_s,
                output_cap=self.limits.output_bytes,
                grace_s=self.limits.grace_s,
                sweep=lambda pid, timed_out: self._sweep(pid, timed_out, cgroup, marker),
            )
            oom = group is not None and group.oom_kills() > oom_before
        finally:
            if cgroup is not None:
                cgroup.remove(time.monotonic() + self.limits.grace_s)
        if done.stderr.startswith(JOIN_FAILED):
            raise SandboxError(done.stderr.decode("utf-8", "replace").strip())
        return ExecResult(
            exit_code=_exec.signal_status(done.returncode),
            stdout=done.stdout,
            stderr=done.stderr,
            timed_out=done.timed_out,
            truncated=done.truncated,
            duration_s=done.duration_s,
            escaped_killed=done.escaped,
            limits_hit=("memory",) if oom else (),
        )

    def _sweep(
        self, main_pid: int, timed_out: bool, cgroup: RunCgroup | None, marker: bytes
    ) -> int:
        """Kill the group, the cgroup and the marked processes; count the escapees."""
        marked = set(_procfs.pids_with_marker(marker))
        members = set(cgroup.members()) if cgroup is not None else set()
        suspects = (marked | members) - {main_pid}
        escaped = [
            p for p in _procfs.live(list(suspects)) if not timed_out or p.session != main_pid
        ]
        _subprocess.kill_group(main_pid)
        deadline = time.monotonic() + self.limits.grace_s
        if cgroup is not None:
            cgroup.kill_all(deadline)
        # NOTE(sandbox): a marked process outside the cgroup moved itself out (root can); only
        # then, or without a cgroup, must the marker scan repeat until nothing marked is left.
        outside = marked - members - {main_pid}
        while (outside or cgroup is None) and time.monotonic() <= deadline:
            left = [p.pid for p in _procfs.live(_procfs.pids_with_marker(marker))]
            if not left:
                break
            _procfs.sigkill(left)
            if cgroup is not None:
                cgroup.kill_all(deadline)
            time.sleep(0.002)
        return len(escaped)
