"""`tmux-keys` / `tmux-literal`: replies typed into a pane's interactive bash by a real tmux.

tmux parses the send-keys argv as a command sequence (a trailing `;` ends the command, a
trailing `\\;` becomes `;`); without `-l` a reply that spells a key name is that key; the
pane's readline completes tabs and expands `!!`; completion is Terminal-Bench's
`; tmux wait -S done` (no exit status) or a PS1 marker carrying `$?`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import make_transport
from boundary_audit.transports.inside._driverlib import STALLED
from boundary_audit.transports.interface import note

pytestmark = [pytest.mark.bwrap, pytest.mark.tmux]
PROMPT = b"root@sandbox:/tmp/work# "
"""bash's next prompt: drawn after `tmux wait -S done` returns, so a capture may miss it."""
WAIT_NOTE = "exit status not observable (tmux wait)"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def run(
    sandbox: Sandbox, name: str, replies: list[str], **params: object
) -> tuple[list[ExecResult], dict[str, bytes]]:
    """Results of `replies` and the work dir's files (name -> bytes) afterwards."""
    transport = make_transport(name, **params)
    with sandbox.workspace() as ws:
        (ws.work / "unique_name.txt").write_bytes(b"content\n")
        results = transport.execute_sequence(replies, ws, sandbox)
        files = {p.name: p.read_bytes() for p in sorted(ws.work.iterdir())}
    return results, files


def pane(res: ExecResult) -> bytes:
    """The pane text a reply added, without the next prompt (which may or may not be drawn)."""
    return res.stdout.removesuffix(PROMPT)


@pytest.mark.parametrize("name", ["tmux-keys", "tmux-literal"])
def test_a_plain_reply_runs_and_completes_through_tmux_wait(sandbox: Sandbox, name: str) -> None:
    (res,), files = run(sandbox, name, ["printf '%s\\n' hi > out.txt"])
    assert files["out.txt"] == b"hi\n"
    assert (res.exit_code, res.timed_out) == (None, False)
    assert note(res) == WAIT_NOTE
    assert pane(res) == b"printf '%s\\n' hi > out.txt; tmux wait -S done\n"


@pytest.mark.parametrize("name", ["tmux-keys", "tmux-literal"])
def test_a_trailing_escaped_semicolon_loses_its_backslash_in_tmux(
    sandbox: Sandbox, name: str
) -> None:
    (res,), _ = run(sandbox, name, ["echo y\\;"])
    assert res.timed_out  # `echo y;; tmux wait -S done` never signals
    assert note(res) == STALLED
    assert (
        pane(res) == b"echo y;; tmux wait -S done\nbash: syntax error near unexpected token `;;'\n"
    )


def test_a_trailing_semicolon_ends_the_tmux_command_and_nothing_is_typed(
    sandbox: Sandbox,
) -> None:
    (res,), _ = run(sandbox, "tmux-keys", ["echo a;"])
    assert (res.timed_out, res.stdout) == (True, b"")
    assert note(res) == STALLED
    assert res.stderr == b"unknown command: ; tmux wait -S done\n"


def test_without_l_a_reply_that_names_a_key_is_that_key(sandbox: Sandbox) -> None:
    (keys,), _ = run(sandbox, "tmux-keys", ["C-c"], timeout=2.0)
    (literal,), _ = run(sandbox, "tmux-literal", ["C-c"], timeout=2.0)
    # keys: an interrupt (what the line discipline then does with the rest is a race)
    assert b"C-c" not in keys.stdout
    assert pane(literal) == b"C-c; tmux wait -S done\nbash: C-c: command not found\n"


def test_a_typed_tab_completes_in_the_pane(sandbox: Sandbox) -> None:
    (res,), _ = run(sandbox, "tmux-keys", ["cat uniq\t"])
    assert pane(res) == b"cat unique_name.txt ; tmux wait -S done\ncontent\n"


def test_history_expansion_pulls_the_previous_line_and_its_completion_command(
    sandbox: Sandbox,
) -> None:
    _, second = run(sandbox, "tmux-keys", ["echo first", "echo a!!b"])[0]
    assert pane(second) == (
        b"echo a!!b; tmux wait -S done\n"
        b"echo aecho first; tmux wait -S doneb; tmux wait -S done\n"
        b"aecho first\n"
    )


def test_marker_completion_reports_the_status_and_set_plus_h_stops_expansion(
    sandbox: Sandbox,
) -> None:
    results, _ = run(
        sandbox, "tmux-literal", ["false", "echo a!!b", "(exit 3)"],
        completion="marker", setup=("set +H",),
    )  # fmt: skip
    assert [r.exit_code for r in results] == [1, 0, 3]
    assert results[1].stdout == b"echo a!!b\na!!b\n__BA_PS1__0__"


def test_exit_ends_the_session(sandbox: Sandbox) -> None:
    (ended, never), _ = run(sandbox, "tmux-keys", ["exit", "echo never"])
    assert note(ended) == "the reply ended the session (the pane's shell exited)"
    assert note(never) == "not run: the session is gone"


@pytest.mark.parametrize("name", ["tmux-keys", "tmux-literal"])
@pytest.mark.parametrize("reply", ["sleep 0.5; exit", "sleep 0.5; kill -9 $$"])
def test_a_shell_that_ends_after_the_waiter_attached_ends_the_session(
    sandbox: Sandbox, name: str, reply: str
) -> None:
    # The waiter is surely attached before the shell ends; the server then releases it with
    # status 0 on its way out, which is not the reply's completion signal.
    (ended, never), _ = run(sandbox, name, [reply, "echo never"])
    assert note(ended) == "the reply ended the session (the pane's shell exited)"
    assert (ended.exit_code, ended.timed_out) == (None, False)
    assert note(never) == "not run: the session is gone"


def test_a_hang_is_cut_and_the_server_and_daemons_are_gone(sandbox: Sandbox) -> None:
    (hang,), _ = run(sandbox, "tmux-literal", ["sleep 60"], timeout=1.0)
    assert (hang.timed_out, hang.escaped_killed) == (True, 0)
    (daemons,), _ = run(
        sandbox, "tmux-keys", ["setsid sleep 300 & nohup sleep 300 >/dev/null 2>&1 & echo ok"]
    )
    assert b"\nok" in pane(daemons)  # the pane may not have drawn what follows yet
    assert daemons.escaped_killed == 0  # tmux server, pane shell and both sleeps: killed


@pytest.mark.parametrize("name", ["tmux-keys", "tmux-literal"])
def test_keys_over_128_kib_are_refused_by_execve_and_the_session_goes_on(
    sandbox: Sandbox, name: str
) -> None:
    big = "echo " + "x" * (128 * 1024)
    (refused, after), files = run(sandbox, name, [big, "echo ok > after.txt"])
    assert (refused.exit_code, refused.stdout, refused.timed_out) == (126, b"", False)
    assert refused.stderr == b"tmux: cannot execute: Argument list too long\n"
    assert note(refused) == (
        "the keys could not be sent: the kernel refused the tmux client's argv (E2BIG)"
    )
    assert files["after.txt"] == b"ok\n" and after.timed_out is False
