"""The recorder: run a harness in the sandbox under strace and read back its process tree.

Every run is one bubblewrap run of

    ba-strace -f -q -yy -xx -s N -e trace=... -o /tmp/obs/ba-trace-X.txt -- \\
        python -E -s -S observe/seal.py HEX -- HARNESS...

so the tracer is the outermost process of the run, started by the run's reaper (pid 1), and
everything the harness starts is traced from its first instruction (`-f`).

Why this is safe although strace needs ptrace, which the default filter denies:

- the recorder's sandbox is its own `BwrapSandbox(tracing=True)`, never handed out: its outer
  filter is the default one minus `seccomp.TRACING` (ptrace, process_vm_readv), and every run
  through it starts with the seal (`run` builds the argv; there is no other way in);
- the seal (`seal.py`, ours, before any harness code) stacks the default filter on itself and
  then executes the harness: a filter cannot be removed, so the harness and every process under
  it cannot call ptrace at all, exactly as in any other run. Only the reaper and strace, both
  ours, have it, and neither can be attached to by what they watch;
- strace itself is run from an exec-only copy in the workspace's bin dir (`ba-strace`, mode
  0711, owned by the host): the kernel makes a process whose program it cannot read
  non-dumpable, so no process of the run can open strace's /proc/PID/mem or /proc/PID/fd
  either (same uid or not). The reaper is the one every run has, and like in every run its
  memory is open to the run's processes through /proc/1/mem (a hole of the backend, not of
  this module: docs/observe.md says what it allows here, where the reaper holds ptrace).

The seal also ends what the harness leaves running once the harness has exited (strace waits
for every process it traces), so an observation lasts as long as the harness, not as long as
its longest-lived daemon; `ProcessTree.left_behind` lists what it had to kill.

What the trace cannot be protected from: it is a file in the obs dir, owned by the run's uid,
which a harness can overwrite. A harness that does so (or kills strace, which it may signal
like any process of its own uid) can only falsify or cut short its own observation, never
reach the host; `ProcessTree.complete` says when the harness's end is missing from the trace.

`-q` rather than `-qq`: the exit lines are kept, because they are how an incomplete trace is
told from a complete one. `-yy` annotates every descriptor with what it is (pipe inode, socket
inodes and peer, path), which is how a write is matched to the stdin of the process that reads
it without following every descriptor.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from boundary_audit._subprocess import write_executable
from boundary_audit.errors import EnvironmentUnavailable, SandboxError, UsageError
from boundary_audit.observe.seal import EXEC_FAILED, SEAL_FAILED
from boundary_audit.observe.strace import TRACE_LIMIT, TraceError, read_trace
from boundary_audit.observe.tree import ProcessTree, build_tree
from boundary_audit.sandbox import seccomp
from boundary_audit.sandbox.interface import BASE_PATH, ExecResult, Limits, Workspace
from boundary_audit.tasks import wsfs

SEAL = Path(__file__).resolve().with_name("seal.py")
NETRELAY = SEAL.with_name("netrelay.py")
STRACE_NAME = "ba-strace"
SYSCALLS = (
    "execve", "execveat", "clone", "clone3", "fork", "vfork",
    "write", "writev", "pwrite64", "pwritev", "pwritev2", "sendmsg", "sendmmsg", "sendto",
    "openat", "?open", "?creat", "pipe", "pipe2", "socketpair",
    "dup", "dup2", "dup3", "fcntl", "ioctl",
)  # fmt: skip
"""What is traced: process creation and exec, every way bytes leave a process, and every call
that can make a new descriptor (`?`: not an error where the architecture lacks the call)."""
STRING_LIMIT = (1 << 20) * 4 + 64
"""strace's `-s`: a whole reply (at most 1 Mi characters, up to 4 bytes each) fits one string."""


@dataclass(frozen=True)
class TracedRun:
    """One run of the recorder."""

    result: ExecResult
    """What the harness's run did (its stdout and stderr: strace writes to its own file)."""
    tree: ProcessTree


def strace_program() -> str | None:
    """strace on the host's base PATH, or None."""
    return shutil.which("strace", path=BASE_PATH)


def unavailable() -> str | None:
    """Why observations cannot be recorded here, or None."""
    from boundary_audit.sandbox.bwrap import unusable_reason

    if strace_program() is None:
        return "strace is not installed (apt-get install strace)"
    if seccomp.native_arch() is None:
        return "no seccomp filter for this architecture, so the harness cannot be sealed"
    why = unusable_reason()
    if why is not None:
        return f"observations run under bubblewrap only: {why}"
    return None


class Recorder:
    """Runs harness commands traced, each confined like any reply (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        why = unavailable()
        if why is not None:
            raise EnvironmentUnavailable(f"observe: {why}")
        from boundary_audit.sandbox.bwrap import BwrapSandbox

        self._sandbox = BwrapSandbox(limits, tracing=True)
        self._filter = (seccomp.program_here() or b"").hex()
        self._sandbox.expose([SEAL.parent])  # visible inside even from a clone under /tmp

    @property
    def limits(self) -> Limits:
        return self._sandbox.limits

    def confinement(self) -> str:
        """Where the harness runs, for the user."""
        return self._sandbox.confinement()

    def expose(self, paths: Iterable[str | Path]) -> None:
        """Make host paths (the harness's program, its interpreter) readable inside."""
        self._sandbox.expose(paths)

    def grant(self, sockets: Iterable[str | Path]) -> None:
        """Let runs connect to these host unix sockets (see `Sandbox.grant`)."""
        self._sandbox.grant(sockets)

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        """A fresh workspace with the exec-only tracer in its bin dir."""
        with self._sandbox.workspace() as ws:
            program = strace_program()
            assert program is not None  # checked by __init__
            write_executable(ws.bin / STRACE_NAME, Path(program).read_bytes(), mode=0o711)
            yield ws

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        label: str = "local",
        remote_command: str | None = None,
        relay: str | None = None,
        port: int = 0,
    ) -> TracedRun:
        """Run `argv` (the harness) traced in `ws`; `label` names its trace. With `relay` (the
        inner path of a unix socket relayed to a model endpoint), `netrelay.py` listens on
        127.0.0.1:`port` inside the run, outside the trace, and relays to it.

        Raises SandboxError when the machinery failed (strace or the seal could not start, no
        trace was written) and TraceError when the trace cannot be read; what the harness does
        is in the result, never an exception."""
        name = f"ba-trace-{secrets.token_hex(8)}.txt"
        command = [
            f"{ws.inner_bin}/{STRACE_NAME}", "-f", "-q", "-yy", "-xx", "-s", str(STRING_LIMIT),
            "-e", "trace=" + ",".join(SYSCALLS), "-o", f"{ws.inner_obs.rstrip('/')}/{name}",
            "--", sys.executable, "-E", "-s", "-S", str(SEAL), self._filter, "--", *argv,
        ]  # fmt: skip
        if relay is not None:
            command = [
                sys.executable, "-E", "-s", "-S", str(NETRELAY), self._filter, relay, str(port),
                "--", *command,
            ]  # fmt: skip
        try:
            res = self._sandbox.run(ws, command, stdin=stdin, env=env, timeout=timeout)
            data = self._read(ws, name, res)
        finally:
            try:
                os.unlink(name, dir_fd=ws.obs_fd)
            except OSError:
                pass
        tree = build_tree(read_trace(data), label)
        if tree.root is None and not res.timed_out:
            if EXEC_FAILED.encode() in res.stderr:
                raise UsageError(_last_line(res.stderr).removeprefix("boundary-audit: "))
            sealed = SEAL_FAILED.encode() in res.stderr
            raise SandboxError(
                "observe: "
                + ("the seal could not be installed" if sealed else "the harness never started")
                + f": {_last_line(res.stderr)}"
            )
        if tree.root is not None and remote_command is not None:
            tree.root.remote_command = remote_command
        return TracedRun(res, tree)

    def _read(self, ws: Workspace, name: str, res: ExecResult) -> bytes:
        try:
            _, data = wsfs.read_prefix(ws.obs_fd, name, TRACE_LIMIT + 1)
        except (OSError, wsfs.NotRegular) as exc:
            if res.timed_out:
                return b""
            raise SandboxError(
                f"observe: strace wrote no trace ({exc}): {_last_line(res.stderr)}"
            ) from None
        if len(data) > TRACE_LIMIT:
            raise TraceError(f"the trace is over {TRACE_LIMIT >> 20} MiB: the observation is void")
        return data

    def close(self) -> None:
        self._sandbox.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _last_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"
