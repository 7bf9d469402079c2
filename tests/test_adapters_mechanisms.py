"""Each adapter's transport reproduces its system's mechanism, shown on discriminating replies.

Real components throughout: bash and dash, a pty session, tmux servers, bubblewrap. Every
reply here is chosen so that its final state differs between two mechanisms (-l or not,
pty or pipe, bash or dash, login or not, `exit` intercepted or not, bashlex's rewrite, the
multi-command refusal), and the exact bytes left in the work dir are asserted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from boundary_audit.adapters import AdapterTransport, load_adapters
from boundary_audit.probes import fingerprint, load_probes
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

pytestmark = [pytest.mark.tmux, pytest.mark.bwrap]

PATHS = {(a.id, p.id): (a, p) for a in load_adapters() for p in a.paths}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with make_sandbox("auto", Limits(timeout_s=4)) as box:
        yield box


def via(system: str, path: str) -> AdapterTransport:
    adapter, bp = PATHS[(system, path)]
    return AdapterTransport(adapter, bp)


def run(
    transport: Transport, sandbox: Sandbox, replies: Sequence[str]
) -> tuple[list[ExecResult], dict[str, bytes]]:
    """Results, and every file the replies left in the work dir (path -> bytes)."""
    with sandbox.workspace() as ws:
        results = transport.execute_sequence(list(replies), ws, sandbox)
        files = {
            str(p.relative_to(ws.work)): p.read_bytes()
            for p in sorted(Path(ws.work).rglob("*"))
            if p.is_file()
        }
    return results, files


@pytest.mark.parametrize(
    "key", sorted(k for k, (_, p) in PATHS.items() if p.expect), ids=lambda k: ":".join(k)
)
def test_probes_measure_what_the_adapter_declares(key: tuple[str, str], sandbox: Sandbox) -> None:
    """The boundary facts systems.md states (the adapter's `expect`) are what the probes see."""
    _, path = PATHS[key]
    probes = load_probes(sorted(path.expect))
    facts = fingerprint(via(*key), sandbox, probes).as_dict()
    assert facts == dict(path.expect)


FIND = "touch a.txt && find . -name a.txt -exec cp {} b.txt \\;"


def test_trailing_escaped_semicolon_tmux_rule(sandbox: Sandbox) -> None:
    """tmux turns a trailing `\\;` into `;`: Terminal-Bench's line becomes `... b.txt ;;
    tmux wait -S done`, a bash syntax error, so nothing runs and completion never comes.
    OpenHands' escape_bash_special_chars doubles the backslash first: its command survives."""
    assert run(make_transport("raw"), sandbox, [FIND])[1] == {"a.txt": b"", "b.txt": b""}
    results, files = run(via("terminal-bench", "send-keys"), sandbox, [FIND])
    assert files == {} and results[0].timed_out
    assert run(via("openhands", "model"), sandbox, [FIND])[1] == {"a.txt": b"", "b.txt": b""}


def test_send_keys_with_and_without_l_on_a_trailing_semicolon(sandbox: Sandbox) -> None:
    """One `send-keys R '; tmux wait -S done' Enter` (no -l): R's trailing `;` ends the tmux
    command and the completion text becomes an unknown tmux command, so Enter never comes.
    With -l each key is its own send-keys and the reply runs."""
    reply = "printf 'ran\\n' > r.txt;"
    keys, files = run(via("terminal-bench", "send-keys"), sandbox, [reply])
    assert files == {} and keys[0].timed_out
    _, files = run(via("openhands", "model"), sandbox, [reply])
    assert files == {"r.txt": b"ran\n"}


def test_tab_in_a_pty_session_versus_a_pipe_session(sandbox: Sandbox) -> None:
    reply = "printf 'a\tb\\n' > t.txt"
    assert run(via("swe-agent", "default"), sandbox, [reply])[1] == {"t.txt": b"ab\n"}
    assert run(via("langchain", "shell-tool"), sandbox, [reply])[1] == {"t.txt": b"a\tb\n"}


def test_dash_versus_bash(sandbox: Sandbox) -> None:
    reply = "echo {a,b} > b.txt"
    assert run(via("autogen", "docker-executor"), sandbox, [reply])[1] == {"b.txt": b"{a,b}\n"}
    assert run(via("codex", "shell-command"), sandbox, [reply])[1] == {"b.txt": b"a b\n"}


def test_login_versus_non_login(sandbox: Sandbox) -> None:
    reply = "if shopt -q login_shell; then echo login; else echo plain; fi > l.txt"
    assert run(via("codex", "shell-command"), sandbox, [reply])[1] == {"l.txt": b"login\n"}
    assert run(via("codex", "snapshot"), sandbox, [reply])[1] == {"l.txt": b"plain\n"}
    assert run(make_transport("raw"), sandbox, [reply])[1] == {"l.txt": b"plain\n"}


def test_swe_agent_intercepts_exit(sandbox: Sandbox) -> None:
    results, files = run(via("swe-agent", "default"), sandbox, ["exit", "touch after.txt"])
    assert files == {}
    assert results[0].note == (
        "swe-agent.handle-action: the `exit` action ends the agent; it is never executed"
    )  # type: ignore[attr-defined]
    assert results[1].note == "not run: the agent ended at an earlier reply"  # type: ignore[attr-defined]
    # `exit 0` is not the exact action: it runs, and ends the shell session instead.
    results, files = run(via("swe-agent", "default"), sandbox, ["exit 0", "touch after.txt"])
    assert files == {} and "ended the session" in results[0].note  # type: ignore[attr-defined]
    assert run(make_transport("raw"), sandbox, ["exit", "touch after.txt"])[1] == {"after.txt": b""}


def test_swe_agent_bashlex_rewrite_drops_a_here_document_body(sandbox: Sandbox) -> None:
    reply = "cat <<EOF > h.txt\nhi\nEOF"
    assert run(make_transport("session"), sandbox, [reply])[1] == {"h.txt": b"hi\n"}
    # Rewritten to `cat <<EOF > h.txt`: bash waits for the body that never comes, so the
    # redirection is never even opened.
    results, files = run(via("swe-agent", "default"), sandbox, [reply])
    assert files == {} and results[0].timed_out


def test_openhands_refuses_two_statements(sandbox: Sandbox) -> None:
    reply = "touch a.txt\ntouch b.txt"
    results, files = run(via("openhands", "model"), sandbox, [reply])
    assert files == {}
    assert results[0].rejected == (
        "openhands.split-commands: Cannot execute multiple commands "  # type: ignore[attr-defined]
        "at once (2 statements)"
    )
    assert run(via("openhands", "model"), sandbox, ["touch a.txt && touch b.txt"])[1] == {
        "a.txt": b"",
        "b.txt": b"",
    }


def test_openhands_launcher_passes_operators_as_argv(sandbox: Sandbox) -> None:
    results, files = run(via("openhands", "launcher"), sandbox, ["echo a | tr a b > x"])
    assert files == {} and results[0].stdout == b"a | tr a b > x\n"


def test_autogen_runs_each_block_and_stops_at_the_first_failure(sandbox: Sandbox) -> None:
    reply = "echo one > 1.txt\n```\n```sh\nfalse\n```\n```sh\necho three > 3.txt"
    results, files = run(via("autogen", "docker-executor"), sandbox, [reply])
    assert files == {"1.txt": b"one\n"} and results[0].exit_code == 1
