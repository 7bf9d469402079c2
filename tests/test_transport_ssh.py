"""`ssh`: a real OpenSSH client in the sandbox, a real sshd on 127.0.0.1, the remote command
run back in the sandbox.

Pins where each parse happens: with the study's `ssh localhost "R"` the local shell expands
first (`$BA_RUN_ID`) and ssh joins the words it split (unlike `bash -c`, which makes
them `$0`...); with `quoting="argv"` only the remote shell parses; with `escaped` the result
is raw's. The remote side sees the work dir and the sandbox's environment; one sequence
shares one multiplexed connection; a hang is cut at the timeout.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.services import sshd
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import note

pytestmark = [pytest.mark.bwrap, pytest.mark.sshd]


@pytest.fixture(scope="module")
def sandbox(ssh_service: sshd.SshService) -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def run(
    sandbox: Sandbox, name: str, replies: list[str], **params: object
) -> tuple[list[ExecResult], str]:
    """The results and the workspace's run id."""
    transport = make_transport(name, **params)
    with sandbox.workspace() as ws:
        return transport.execute_sequence(replies, ws, sandbox), ws.run_id


def test_ssh_joins_the_words_the_local_shell_split_where_bash_c_drops_them(
    sandbox: Sandbox,
) -> None:
    (ssh,), _ = run(sandbox, "ssh", ['echo "a b"'])
    (nested,), _ = run(sandbox, "nested", ['echo "a b"'])
    assert (ssh.exit_code, ssh.stdout, ssh.stderr) == (0, b"a b\n", b"")  # sent: `echo a b`
    assert nested.stdout == b"a\n"  # ran: bash -c 'echo a' 'b'


def test_the_local_shell_expands_first_in_the_studys_form(sandbox: Sandbox) -> None:
    (double,), run_id = run(sandbox, "ssh", ["echo $BA_RUN_ID"])
    # expanded before ssh ran
    assert (double.exit_code, double.stdout, double.stderr) == (0, f"{run_id}\n".encode(), b"")
    (argv,), run_id = run(sandbox, "ssh", ["echo $BA_RUN_ID"], quoting="argv")
    # expanded by the remote shell
    assert (argv.exit_code, argv.stdout, argv.stderr) == (0, f"{run_id}-remote\n".encode(), b"")


def test_escaped_quoting_reproduces_raw(sandbox: Sandbox) -> None:
    reply = "printf '%s\\n' \"it's\" '$HOME' \"\\`x\\`\" > out.txt; cat out.txt"
    (escaped,), _ = run(sandbox, "ssh", [reply], quoting="escaped")
    (raw,), _ = run(sandbox, "raw", [reply])
    assert escaped.stdout == raw.stdout == b"it's\n$HOME\n`x`\n"


def test_the_remote_side_runs_in_the_work_dir_with_the_sandbox_environment(
    sandbox: Sandbox,
) -> None:
    (res,), _ = run(sandbox, "ssh", ["pwd; echo $HOME $BA_OBS $USER $SHELL"], quoting="argv")
    assert res.stdout == b"/tmp/work\n/tmp/home /tmp/obs root /bin/bash\n"


def test_one_sequence_shares_one_connection(sandbox: Sandbox) -> None:
    results, _ = run(sandbox, "ssh", ["echo $SSH_CONNECTION"] * 3, quoting="argv")
    seen = {r.stdout for r in results}
    assert len(seen) == 1 and seen.pop().startswith(b"127.0.0.1 ")


def test_exit_status_and_hang(sandbox: Sandbox) -> None:
    (res,), _ = run(sandbox, "ssh", ["exit 3"])
    assert res.exit_code == 3
    (killed,), _ = run(sandbox, "ssh", ["kill -9 $$"], quoting="argv")
    assert killed.exit_code == 137  # the remote shell's own death, as its sandbox reports it
    (hang,), _ = run(sandbox, "ssh", ["sleep 60"], timeout=1.0)
    assert (hang.exit_code, hang.timed_out, hang.escaped_killed) == (None, True, 0)
    assert note(hang) == "the remote command did not finish before the timeout"


def test_a_command_with_an_unknown_token_is_refused(ssh_service: sshd.SshService) -> None:
    res = ssh_service.handle("0" * 32, sshd.RemoteCommand("touch /tmp/x", "/bin/bash", {}))
    assert res == sshd.RemoteResult(
        255, b"", b"boundary-audit sshd: unknown or expired run token\n"
    )
