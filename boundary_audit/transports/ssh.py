"""`ssh`: R sent as a remote command through a real OpenSSH client and server (Table 9).

The study replayed each reply as `ssh localhost "R"`: a local shell parses that command line
(R between double quotes, unescaped: the first, damaging parse), the ssh client joins its
remaining arguments with spaces and sends the string, and sshd runs the user's shell with
`-c` and that string (the second parse). So `ssh` should reproduce `nested` task by task.

Faithful and confined: the local half (the shell that parses the command line, and the real
`ssh` client) runs inside the sandbox through the driver `inside/ssh_client.py`; the server
is a real OpenSSH sshd on the host's 127.0.0.1 (`services/sshd.py`, one per process, keys
generated for the process), reached through a unix-socket relay in the workspace because the
sandbox has no route to the host's loopback; and every remote command comes back, unparsed,
to `sandbox.run(ws, [$SHELL, "-c", command])`: a second confined run over the same work dir
and environment, which is what a remote host is. (An sshd inside the sandbox cannot work:
its privilege separation needs capabilities that bwrap drops; see services/sshd.py.)
Connection multiplexing (ControlMaster/ControlPersist, with the in-sandbox driver
`inside/ssh_client.py` to run and then stop the master) lets the replies of one
`execute_sequence` share one SSH connection; a single reply runs the client line directly.

`quoting` selects the client side: `double` (the study: `bash -c 'ssh localhost "R"'`),
`argv` (`["ssh", "localhost", R]`, no local shell: one parse, the remote-string class) or
`escaped` (`ssh localhost <shlex.quote(R)>` through a local shell: must equal raw).
"""

from __future__ import annotations

import dataclasses
import secrets
import shlex
import sys
import threading
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from boundary_audit.errors import UsageError
from boundary_audit.sandbox import layout
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.services import sshd
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports._driver import (
    DRIVER_DIR,
    host_python_reason,
    reply_timeout,
    run_driver,
)
from boundary_audit.transports._relay import UnixRelay
from boundary_audit.transports.interface import Transport, TransportResult, screened

QUOTINGS = ("double", "argv", "escaped")


def client_argv(reply: str, quoting: str, config: str, local_shell: str) -> list[str]:
    """The local command that sends `reply` to `localhost` with ssh config file `config`."""
    if quoting == "argv":
        return ["ssh", "-F", config, "localhost", reply]
    words = f"ssh -F {shlex.quote(config)} localhost "
    arg = f'"{reply}"' if quoting == "double" else shlex.quote(reply)
    return [local_shell, "-c", words + arg]


def client_config(inner_dir: str, multiplex: bool) -> str:
    """ssh_config for the in-sandbox client: relay, key, token forwarding, multiplexing."""
    relay = " ".join(
        shlex.quote(w)
        for w in (sys.executable, "-E", "-s", "-S", str(DRIVER_DIR / "unix_relay.py"))
    )
    lines = [
        "Host localhost",
        "  HostKeyAlias boundary-audit-sshd",
        "  User root",
        f"  ProxyCommand {relay} {inner_dir}/relay.sock",
        f"  IdentityFile {inner_dir}/client_key",
        "  IdentitiesOnly yes",
        "  BatchMode yes",
        "  StrictHostKeyChecking no",
        "  UserKnownHostsFile /dev/null",
        "  LogLevel ERROR",
        "  UpdateHostKeys no",
        *(
            ["  ControlMaster auto", f"  ControlPath {inner_dir}/cm", "  ControlPersist yes"]
            if multiplex
            else ["  ControlMaster no"]
        ),
        "  SendEnv BA_SSH_TOKEN",
        "  KexAlgorithms curve25519-sha256",
        "  Ciphers aes128-gcm@openssh.com",
    ]
    return "\n".join(lines) + "\n"


class _RemoteRuns:
    """Runs the remote half of one transport call in the sandbox, and waits for stragglers."""

    def __init__(self, ws: Workspace, sandbox: Sandbox, timeout: float) -> None:
        self.sandbox, self.timeout = sandbox, timeout
        # NOTE(h6): the remote side is another host: same directories, its own run id, so
        # that its teardown (which sweeps processes marked with the run id) spares the client.
        self.remote_ws = dataclasses.replace(ws, run_id=f"{ws.run_id}-remote")
        self._busy = 0
        self._idle = threading.Condition()
        self.truncated: list[bool] = []
        """Per remote command, in the order they came: whether its output passed the cap (the
        client receives the capped bytes; only this side knows they were cut)."""

    def __call__(self, cmd: sshd.RemoteCommand) -> sshd.RemoteResult:
        with self._idle:
            self._busy += 1
        try:
            res = self.sandbox.run(
                self.remote_ws, [cmd.shell, "-c", cmd.command], env=cmd.env, timeout=self.timeout
            )
            code = 255 if res.exit_code is None else res.exit_code
            with self._idle:
                self.truncated.append(res.truncated)
            return sshd.RemoteResult(code, res.stdout, res.stderr)
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def wait(self) -> None:
        """Block until no remote command of this call is running (each is bounded by timeout)."""
        with self._idle:
            self._idle.wait_for(lambda: self._busy == 0, timeout=self.timeout + 30)

    def mark_truncated(self, results: list[ExecResult]) -> list[ExecResult]:
        """`results` with `truncated` set where a remote command's output was cut: by position
        when each reply made one remote command, else on every result (which one is unknown)."""
        flags = self.truncated
        if not any(flags):
            return results
        if len(flags) != len(results):
            flags = [True] * len(results)
        return [dataclasses.replace(r, truncated=True) if f else r for r, f in zip(results, flags)]


class SshTransport(Transport):
    """`ssh localhost "R"`: client in the sandbox, real sshd, remote command in the sandbox."""

    name = "ssh"
    boundary_class = BoundaryClass.REMOTE_STRING
    defaults = {"quoting": "double", "local_shell": "bash", "timeout": 0.0}
    param_help = {
        "quoting": "'double': local shell, R in double quotes (the study); 'argv': no local "
        "shell; 'escaped': local shell, R shlex-quoted",
        "local_shell": "the shell that parses the local command line (the study: bash)",
        "timeout": "seconds per reply; 0 means the sandbox's timeout",
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.params["quoting"] not in QUOTINGS:
            raise UsageError(f"transport ssh: quoting must be one of {', '.join(QUOTINGS)}")

    def supports(self, sandbox: Sandbox) -> str | None:
        return host_python_reason(sandbox) or sshd.unavailable()

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        return self.execute_sequence([reply], ws, sandbox)[0]

    def execute_sequence(
        self, replies: Sequence[str], ws: Workspace, sandbox: Sandbox
    ) -> list[ExecResult]:
        return screened(self.name, replies, lambda rs: self._run(rs, ws, sandbox), argv=True)

    def _run(self, replies: list[str], ws: Workspace, sandbox: Sandbox) -> list[ExecResult]:
        service = sshd.shared_service()
        token = secrets.token_hex(16)
        name = f"ba-ssh-{token[:8]}"
        host_dir, inner_dir = ws.tmp / name, f"{ws.inner_tmp.rstrip('/')}/{name}"
        multiplex = len(replies) > 1
        # NOTE: nothing of the workspace runs while the host writes here (runs are sequential
        # and nothing outlives one); the files go in through descriptors anyway, never a link.
        host_dir.mkdir(mode=0o700)
        layout.write_new(ws, f"{name}/ssh_config", client_config(inner_dir, multiplex).encode())
        layout.write_new(ws, f"{name}/client_key", service.keys.client_private.encode(), 0o600)
        per_reply = reply_timeout(self.params, sandbox)
        remote = _RemoteRuns(ws, sandbox, per_reply)
        relay = UnixRelay(str(host_dir / "relay.sock"), service.port)
        # The client runs as the workspace's own uid: what the host made is given to it.
        for path in (host_dir, Path(relay.path)):
            layout.give(ws, path)
        service.register(token, remote)
        q, shell = str(self.params["quoting"]), str(self.params["local_shell"])
        config = f"{inner_dir}/ssh_config"
        argvs = [client_argv(r, q, config, shell) for r in replies]
        env = {"BA_SSH_TOKEN": token}
        try:
            results: list[ExecResult]
            if not multiplex:  # NOTE(h6): one reply needs no driver: the sandbox reaps the client
                results = [_annotated(sandbox.run(ws, argvs[0], timeout=per_reply, env=env))]
            else:
                request = {"replies": list(replies), "argvs": argvs, "config": config}
                results = run_driver(
                    "ssh_client", request, ws, sandbox, per_reply_s=per_reply, env=env
                )
        finally:
            service.unregister(token)
            relay.close()
            remote.wait()
        return remote.mark_truncated(results)


def _annotated(res: ExecResult) -> TransportResult:
    """The client's result with the notes the driver would have given it."""
    note = ""
    if res.timed_out:
        note = "the remote command did not finish before the timeout"
    elif res.exit_code == 255:
        note = "ssh itself failed (exit 255)"
    return TransportResult(**{f.name: getattr(res, f.name) for f in fields(res)}, note=note)
