"""Every live mechanism cleans up after itself, whatever the reply does to its shell.

For each stateful transport (and ssh, whose client half runs in the sandbox) a reply that
exits the shell, kills it, replaces it with a hang, or leaves daemons behind still ends in a
result, and the in-sandbox driver has killed everything before exiting: the sandbox's own
teardown finds nothing left to kill (`escaped_killed == 0`). The raw control shows that the
same daemons do outlive a run when nothing cleans them up.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.services import sshd
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import note

pytestmark = [pytest.mark.bwrap, pytest.mark.tmux, pytest.mark.sshd]
DAEMONS = "setsid sleep 300 & nohup sleep 300 >/dev/null 2>&1 & (sleep 300 &) ; echo up"
REPLIES = ["exit 0", "kill -9 $$", "exec sleep 60", DAEMONS]
CASES = [
    (name, reply)
    for name in ("session", "session-pipe", "tmux-keys", "ssh")  # tmux-literal: same driver
    for reply in REPLIES
    if not (name == "ssh" and reply == "exec sleep 60")  # a remote hang: test_transport_ssh
]


@pytest.fixture(scope="module")
def sandbox(ssh_service: sshd.SshService) -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def test_the_control_leaves_three_daemons_for_the_sandbox_to_kill(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        raw = make_transport("raw").execute(DAEMONS, ws, sandbox)
    assert (raw.stdout, raw.escaped_killed) == (b"up\n", 3)


@pytest.mark.parametrize(("name", "reply"), CASES)
def test_nothing_outlives_the_driver(sandbox: Sandbox, name: str, reply: str) -> None:
    # NOTE(tests): ssh's handshake alone can take a second on a loaded machine.
    params: dict[str, object] = {"timeout": 10.0 if name == "ssh" else 1.0}
    if name == "ssh":
        params["quoting"] = "argv"
    transport = make_transport(name, **params)
    with sandbox.workspace() as ws:
        first, after = transport.execute_sequence([reply, "true"], ws, sandbox)
    assert first.escaped_killed == 0 and after.escaped_killed == 0
    if reply == "exec sleep 60":
        assert first.timed_out
    elif reply == DAEMONS:
        assert b"up" in first.stdout and not first.timed_out
    elif name == "ssh":  # each reply is its own remote shell: the next one still runs
        assert (first.timed_out, after.exit_code) == (False, 0), (after.stderr, note(after))
