"""`session-pipe`: a persistent bash on pipes with LangChain's line-start done marker.

No tty: stdout and stderr stay apart; the marker must start a line, so output without a
trailing newline hides it; a command that reads stdin eats the marker line; `exit` ends the
session; an empty environment (LangChain's default) leaves HOME and PATH unset.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import make_transport
from boundary_audit.transports.inside._driverlib import STALLED
from boundary_audit.transports.interface import note

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def run(sandbox: Sandbox, replies: list[str], **params: object) -> list[ExecResult]:
    transport = make_transport("session-pipe", **params)
    with sandbox.workspace() as ws:
        (ws.work / "sub").mkdir()
        return transport.execute_sequence(replies, ws, sandbox)


def test_state_persists_and_output_has_no_carriage_returns(sandbox: Sandbox) -> None:
    results = run(sandbox, ["cd sub", "X=42; f() { echo fn; }", "pwd; echo $X; f"])
    assert [r.exit_code for r in results] == [0, 0, 0]
    assert results[2].stdout == b"/tmp/work/sub\n42\nfn\n"


def test_stdout_and_stderr_are_read_separately(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["echo out; echo err >&2; (exit 5)"])
    assert (res.exit_code, res.stdout, res.stderr) == (5, b"out\n", b"err\n")


def test_output_without_a_trailing_newline_hides_the_marker(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["printf abc"])
    assert (res.exit_code, res.timed_out) == (None, True)
    assert res.stdout.startswith(b"abc__LC_SHELL_DONE__") and res.stdout.endswith(b" 0\n")
    assert note(res) == STALLED


def test_a_command_reading_stdin_eats_the_marker_line(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["cat"])
    assert res.timed_out
    assert note(res) == STALLED
    assert res.stdout.startswith(b"printf '__LC_SHELL_DONE__")
    assert res.stdout.endswith(b" %s\\n' $?\n")


def test_an_empty_environment_as_langchain_passes(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ['echo "${HOME-unset} ${BA_OBS-unset} $PATH"'], env={})
    assert (
        res.stdout
        == b"unset unset /usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin:.\n"
    )


def test_a_command_that_never_ends_is_cut_at_the_timeout(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["sleep 60"], timeout=1.0)
    assert (res.exit_code, res.timed_out, res.escaped_killed) == (None, True, 0)
    assert note(res) == "no line starting with the done marker before the timeout"


def test_exit_and_kill_end_the_session(sandbox: Sandbox) -> None:
    ended, never = run(sandbox, ["exit 4", "echo never"])
    assert ended.exit_code == 4
    assert note(ended) == "the reply ended the session (shell exit status 4)"
    assert note(never) == "not run: the session is gone"
    (killed,) = run(sandbox, ["kill -9 $$"])
    assert killed.exit_code == 137


def test_the_driver_kills_daemons_the_reply_started(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["setsid sleep 300 & nohup sleep 300 >/dev/null 2>&1 & echo started"])
    assert (res.stdout, res.escaped_killed) == (b"started\n", 0)
