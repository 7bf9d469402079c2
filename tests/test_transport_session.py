"""`session`: an interactive bash on a pty, SWE-ReX style, under bubblewrap.

State persists between the replies of one sequence; readline and history expansion act on
the typed bytes; the exit status comes from the `echo EXITCODESTART$?EXITCODEEND` probe; a
reply that ends the shell ends the session; a hang is cut at the timeout; and whatever a
reply leaves running is killed by the driver itself (the sandbox finds nothing to kill).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.transports import make_transport
from boundary_audit.transports.inside._driverlib import STALLED
from boundary_audit.transports.interface import note

pytestmark = pytest.mark.bwrap
DAEMONS = "setsid sleep 300 & disown; nohup sleep 300 >/dev/null 2>&1 & echo started"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def fixture_files(ws: Workspace) -> None:
    (ws.work / "sub").mkdir()
    (ws.work / "unique_name.txt").write_bytes(b"content\n")


def run(sandbox: Sandbox, replies: list[str], **params: object) -> list[ExecResult]:
    transport = make_transport("session", **params)
    with sandbox.workspace() as ws:
        fixture_files(ws)
        return transport.execute_sequence(replies, ws, sandbox)


def test_cwd_variables_and_functions_persist_between_replies(sandbox: Sandbox) -> None:
    results = run(sandbox, ["cd sub", "X=42; f() { echo fn; }", "pwd; echo $X; f"])
    assert [r.exit_code for r in results] == [0, 0, 0]
    assert results[2].stdout == b"/tmp/work/sub\r\n42\r\nfn\r\n"  # the pty's ONLCR adds \r


def test_exit_status_comes_from_the_probe(sandbox: Sandbox) -> None:
    assert [r.exit_code for r in run(sandbox, ["false", "(exit 7)", "true"])] == [1, 7, 0]


def test_a_typed_tab_completes_a_file_name(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["cat uniq\t"])
    assert (res.exit_code, res.stdout) == (0, b"content\r\n")


def test_history_expansion_repeats_the_previous_line_which_is_the_probe(
    sandbox: Sandbox,
) -> None:
    first, second = run(sandbox, ["echo first", "echo !!"])
    assert first.stdout == b"first\r\n"
    assert second.stdout == (
        b"echo echo EXITCODESTART$?EXITCODEEND\r\necho EXITCODESTART0EXITCODEEND\r\n"
    )


def test_a_command_reading_stdin_consumes_the_next_typed_line(sandbox: Sandbox) -> None:
    _, second = run(sandbox, ["read v\nthis is data", 'echo "v=$v"'])
    assert second.stdout == b"v=this is data\r\n"


def test_exit_ends_the_session_and_later_replies_are_not_run(sandbox: Sandbox) -> None:
    first, ended, never = run(sandbox, ["echo a", "exit 3", "echo b"])
    assert (first.exit_code, first.stdout) == (0, b"a\r\n")
    assert (ended.exit_code, ended.timed_out) == (3, False)
    assert note(ended) == "the reply ended the session (shell exit status 3)"
    assert (never.exit_code, never.stdout) == (None, b"")
    assert note(never) == "not run: the session is gone"


def test_killing_the_shell_reports_the_signal_as_128_plus_n(sandbox: Sandbox) -> None:
    (res,) = run(sandbox, ["kill -9 $$"])
    assert res.exit_code == 137
    assert note(res) == "the reply ended the session (shell exit status 137)"


@pytest.mark.parametrize("reply", ["exec sleep 60", "sleep 60"])
def test_a_hang_is_cut_at_the_reply_timeout(sandbox: Sandbox, reply: str) -> None:
    (res,) = run(sandbox, [reply], timeout=1.0)
    assert (res.exit_code, res.timed_out, res.escaped_killed) == (None, True, 0)
    assert note(res) == "no prompt marker before the timeout"
    assert 1.0 <= res.duration_s < 3.0


@pytest.mark.parametrize("reply", ['echo "unterminated', "cat > f <<EOF\nabc", "read v", "cat"])
def test_a_shell_left_waiting_for_input_is_reported_as_stalled(
    sandbox: Sandbox, reply: str
) -> None:
    (res,) = run(sandbox, [reply])
    assert (res.exit_code, res.timed_out) == (None, True)
    assert note(res) == STALLED


def test_the_driver_kills_daemons_the_reply_started(sandbox: Sandbox) -> None:
    (session,) = run(sandbox, [DAEMONS])
    assert session.stdout.endswith(b"started\r\n")
    assert session.escaped_killed == 0
    with sandbox.workspace() as ws:  # control: through raw the sandbox has to kill them
        raw = make_transport("raw").execute(DAEMONS, ws, sandbox)
    assert (raw.stdout, raw.escaped_killed) == (b"started\n", 2)
