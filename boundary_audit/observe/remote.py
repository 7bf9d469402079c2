"""An ssh endpoint for an observed harness: the test sshd, its remote side traced too.

A harness that runs commands over ssh reaches the process-wide OpenSSH server of
`services/sshd.py` exactly as the `ssh` transport's in-sandbox client does (same client
configuration, `transports.ssh.client_config`: a unix-socket relay in the workspace as its
ProxyCommand, the generated key, the run's token sent as `BA_SSH_TOKEN`). It finds that
configuration at `$BA_SSH_CONFIG`: `ssh -F "$BA_SSH_CONFIG" localhost CMD`.

sshd hands each remote command back to this process, which runs it as a remote host would,
`[$SHELL, "-c", command]` over the same work dir (its own run id), through the recorder: so
the remote side is traced in a run of its own (`remote-1`, `remote-2`... in command order),
sealed like the harness, and its root image carries the command string it was given
(`Image.remote_command`), which is how the chain links it to the ssh client that sent it.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from pathlib import Path
from types import TracebackType

from boundary_audit.observe.record import Recorder, TracedRun
from boundary_audit.sandbox.interface import Workspace
from boundary_audit.sandbox.layout import give
from boundary_audit.services import sshd
from boundary_audit.transports._relay import UnixRelay
from boundary_audit.transports.ssh import client_config

CONFIG_VAR = "BA_SSH_CONFIG"


class SshEndpoint:
    """The sshd reachable from one workspace's runs for the duration of a `with` block."""

    def __init__(self, recorder: Recorder, ws: Workspace, timeout: float) -> None:
        self.recorder, self.ws, self.timeout = recorder, ws, timeout
        self.runs: list[TracedRun] = []
        """The remote commands' traced runs, in the order they came."""
        self.env: dict[str, str] = {}
        self._lock = threading.Condition()
        self._busy = 0
        self._count = 0
        self._relay: UnixRelay | None = None
        self._token = ""
        self._service: sshd.SshService | None = None

    def __enter__(self) -> SshEndpoint:
        self._service = sshd.shared_service()
        self._token = secrets.token_hex(16)
        name = f"ba-ssh-{self._token[:8]}"
        host_dir, inner_dir = self.ws.tmp / name, f"{self.ws.inner_tmp.rstrip('/')}/{name}"
        host_dir.mkdir(mode=0o700)
        (host_dir / "ssh_config").write_text(client_config(inner_dir, False), encoding="utf-8")
        key = host_dir / "client_key"
        key.touch(mode=0o600)
        key.write_text(self._service.keys.client_private, encoding="ascii")
        self._relay = UnixRelay(str(host_dir / "relay.sock"), self._service.port)
        for path in (host_dir, host_dir / "ssh_config", key, Path(self._relay.path)):
            give(self.ws, path)
        self._service.register(self._token, self._remote)
        self.env = {"BA_SSH_TOKEN": self._token, CONFIG_VAR: f"{inner_dir}/ssh_config"}
        return self

    def _remote(self, cmd: sshd.RemoteCommand) -> sshd.RemoteResult:
        with self._lock:
            self._busy += 1
            self._count += 1
            label = f"remote-{self._count}"
        try:
            remote_ws = dataclasses.replace(self.ws, run_id=f"{self.ws.run_id}-remote")
            run = self.recorder.run(
                remote_ws,
                [cmd.shell, "-c", cmd.command],
                env=cmd.env,
                timeout=self.timeout,
                label=label,
                remote_command=cmd.command,
            )
            with self._lock:
                self.runs.append(run)
            res = run.result
            return sshd.RemoteResult(
                255 if res.exit_code is None else res.exit_code, res.stdout, res.stderr
            )
        finally:
            with self._lock:
                self._busy -= 1
                self._lock.notify_all()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._service is not None:
            self._service.unregister(self._token)
        if self._relay is not None:
            self._relay.close()
        with self._lock:
            self._lock.wait_for(lambda: self._busy == 0, timeout=self.timeout + 30)
        self.runs.sort(key=lambda r: int(r.tree.trace.rsplit("-", 1)[1]))
