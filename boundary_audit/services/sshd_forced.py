"""sshd's ForceCommand for the `ssh` transport (runs on the host, spawned by sshd).

It never parses the remote command: it reads the string the client sent from
`SSH_ORIGINAL_COMMAND`, the run's token from `BA_SSH_TOKEN` and the user's shell from
`SHELL` (all set by sshd), sends them to boundary-audit's control socket (argv[1]), which runs
`[shell, "-c", command]` inside the run's sandbox, and relays that run's stdout, stderr and
exit status as its own, so the ssh client sees what a normal sshd session would have given.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import time

RETRY_PAUSES_S = (0.05, 0.2, 0.5)
"""Pauses before asking the control socket again after a refusal or a reset (see main)."""
PASSED = ("SSH_CLIENT", "SSH_CONNECTION")
"""sshd's own session variables, forwarded to the remote run like sshd would set them."""


def main() -> int:
    try:
        return forward()
    except Exception as exc:  # noqa: BLE001 - say what broke, as ssh's own failures do (255)
        sys.stderr.write(f"boundary-audit sshd: forced command failed: {exc!r}\n")
        return 255


def forward() -> int:
    """Send the remote command to the control socket; relay the run's output and status."""
    command = os.environ.get("SSH_ORIGINAL_COMMAND")
    if command is None:
        sys.stderr.write("boundary-audit sshd: interactive sessions are not served\n")
        return 255
    request = {
        "token": os.environ.get("BA_SSH_TOKEN", ""),
        "command": command,
        "shell": os.environ.get("SHELL") or "/bin/sh",
        "env": {k: os.environ[k] for k in PASSED if k in os.environ},
    }
    payload = json.dumps(request).encode("utf-8") + b"\n"
    for pause in RETRY_PAUSES_S:
        try:
            reply = exchange(sys.argv[1], payload)
            break
        except (ConnectionRefusedError, ConnectionResetError):
            # Refused: nobody accepted. Reset: the server closed the connection with our request
            # still unread in it, so nothing ran. Either way, asking again cannot run R twice.
            time.sleep(pause)
    else:
        reply = exchange(sys.argv[1], payload)
    answer = json.loads(reply.decode("utf-8"))
    _write_all(1, base64.b64decode(answer["stdout"]))
    _write_all(2, base64.b64decode(answer["stderr"]))
    return int(answer["exit_code"])


def exchange(path: str, payload: bytes) -> bytes:
    """One request line to the control socket, one reply line back."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(payload)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
    return reply


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":
    sys.exit(main())
