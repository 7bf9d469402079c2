"""One-shot transports under bubblewrap: exact bytes of what each boundary does to R.

raw, nested, nested-escaped, stdin, script-bash/sh, json-naive/correct and the argv
tokenizers each start one process per reply; the tests pin the damage (or its absence) of
each mechanism on small commands whose outputs differ between the boundaries.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import rejection

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


def run(sandbox: Sandbox, name: str, reply: str, **params: object) -> tuple[ExecResult, list[str]]:
    """Run `reply` through transport `name`; the result and the work dir's entries after it."""
    transport = make_transport(name, **params)
    with sandbox.workspace() as ws:
        result = transport.execute(reply, ws, sandbox)
        return result, sorted(os.listdir(ws.work))


def test_raw_with_codex_flags_runs_a_login_shell(sandbox: Sandbox) -> None:
    res, _ = run(sandbox, "raw", "shopt -q login_shell && echo login", flags="-lc")
    assert (res.exit_code, res.stdout) == (0, b"login\n")


def test_nested_splits_at_the_inner_double_quote_and_escaped_does_not(sandbox: Sandbox) -> None:
    nested, _ = run(sandbox, "nested", 'echo "a b"')
    escaped, _ = run(sandbox, "nested-escaped", 'echo "a b"')
    raw, _ = run(sandbox, "raw", 'echo "a b"')
    assert nested.stdout == b"a\n"  # `bash -c 'echo a' b`: the second word became $0
    assert escaped.stdout == raw.stdout == b"a b\n"


def test_stdin_lets_a_command_read_the_rest_of_the_reply(sandbox: Sandbox) -> None:
    reply = 'read line\nthis line is eaten\necho "got: $line"\n'
    via_stdin, _ = run(sandbox, "stdin", reply)
    raw, _ = run(sandbox, "raw", reply)
    assert (via_stdin.exit_code, via_stdin.stdout, via_stdin.stderr) == (
        0,
        b"got: this line is eaten\n",
        b"",
    )
    assert raw.stdout == b"got: \n"
    assert raw.stderr == b"bash: line 2: this: command not found\n"


def test_script_bash_and_sh_differ_only_by_interpreter(sandbox: Sandbox) -> None:
    reply = "[[ -n x ]] && echo bash-only; echo $'a\\tb'"
    bash, bash_work = run(sandbox, "script-bash", reply)
    dash, _ = run(sandbox, "script-sh", reply)
    assert (bash.exit_code, bash.stdout, bash.stderr, bash_work) == (
        0,
        b"bash-only\na\tb\n",
        b"",
        [],
    )
    assert dash.stdout == b"$a\tb\n"  # dash: no [[, no $'...'; its echo expands \t
    assert dash.stderr.endswith(b".sh: 1: [[: not found\n")
    assert dash.stderr.startswith(b"/tmp/tmp_code_")  # the file sits outside the work dir


def test_json_correct_round_trips_and_naive_decodes_escapes(sandbox: Sandbox) -> None:
    reply = 'echo \\"hi\\"'
    correct, _ = run(sandbox, "json-correct", reply)
    naive, _ = run(sandbox, "json-naive", reply)
    assert correct.stdout == b'"hi"\n'
    assert naive.stdout == b"hi\n"  # the JSON string's \" became a bare quote


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('echo "hi"', "Expecting ',' delimiter: line 1 column 20 (char 19)"),
        ("echo a\necho b", "Invalid control character at: line 1 column 20 (char 19)"),
        ("echo a\\sb", "Invalid \\escape: line 1 column 20 (char 19)"),
    ],
)
def test_json_naive_rejects_an_unparsable_document(sandbox: Sandbox, reply: str, why: str) -> None:
    res, work = run(sandbox, "json-naive", reply)
    assert rejection(res) == f"unparsable JSON: {why}"
    assert (res.exit_code, res.stdout, work) == (None, b"", [])


def test_json_naive_non_strict_accepts_raw_newlines(sandbox: Sandbox) -> None:
    res, _ = run(sandbox, "json-naive", "echo a\necho b", strict=False)
    assert (res.exit_code, res.stdout) == (0, b"a\nb\n")


def test_json_naive_lets_the_reply_inject_a_second_command_key(sandbox: Sandbox) -> None:
    res, _ = run(sandbox, "json-naive", 'x", "command": "echo injected')
    assert (res.exit_code, res.stdout) == (0, b"injected\n")


def test_argv_shlex_keeps_operators_as_plain_arguments(sandbox: Sandbox) -> None:
    res, work = run(sandbox, "argv-shlex", "printf '%s|' a \"b c\" > out.txt")
    assert (res.exit_code, res.stdout, work) == (0, b"a|b c|>|out.txt|", [])


def test_argv_split_keeps_the_quotes(sandbox: Sandbox) -> None:
    res, _ = run(sandbox, "argv-split", "printf '%s|' a \"b c\"")
    assert res.stdout == b"'a|''\"b|''c\"|'"


def test_argv_shell_quote_drops_operators_globs_comments_and_empties_variables(
    sandbox: Sandbox,
) -> None:
    res, _ = run(sandbox, "argv-shell-quote", "printf '%s|' $HOME a|b *.txt # c")
    assert (res.exit_code, res.stdout) == (0, b"|a|b|")


@pytest.mark.parametrize(
    ("name", "reply", "why"),
    [
        ("argv-shlex", "echo 'x", "argv-shlex: cannot tokenize: No closing quotation"),
        ("argv-split", "   ", "argv-split: empty command"),
        (
            "argv-shell-quote",
            "echo ${}",
            "argv-shell-quote: cannot tokenize: Bad substitution: ${}",
        ),
        ("argv-shell-quote", "*.txt | # all", "argv-shell-quote: empty command"),
    ],
)
def test_argv_rejections(sandbox: Sandbox, name: str, reply: str, why: str) -> None:
    res, work = run(sandbox, name, reply)
    assert rejection(res) == why
    assert (res.exit_code, res.stderr, work) == (None, why.encode() + b"\n", [])


def test_argv_first_token_that_is_no_program_exits_127(sandbox: Sandbox) -> None:
    res, _ = run(sandbox, "argv-shlex", "FOO=1 env")
    assert (res.exit_code, res.stdout, res.stderr) == (
        127,
        b"",
        b"argv: 1: exec: FOO=1: not found\n",
    )
