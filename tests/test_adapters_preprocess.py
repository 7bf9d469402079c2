"""The harness pre-processors, reimplemented from each system's code: exact outputs."""

from __future__ import annotations

import shlex

import pytest

from boundary_audit.adapters.preprocess import (
    PREPROCESSORS,
    Context,
    Staged,
    make_preprocessor,
    run_pipeline,
)
from boundary_audit.adapters.preprocess.autogen import extract_blocks, silence_pip
from boundary_audit.adapters.preprocess.codex import shell_single_quote, snapshot_script
from boundary_audit.adapters.preprocess.openhands import (
    escape_special_chars,
    parse_acp_command,
    split_commands,
)
from boundary_audit.adapters.preprocess.swe_agent import FALLBACK_SUFFIX, should_block
from boundary_audit.adapters.preprocess.swe_agent import split_commands as bashlex_split
from boundary_audit.errors import AdapterError
from boundary_audit.sandbox import make_sandbox


def apply(name: str, text: str, **params: object) -> Staged:
    return make_preprocessor(name, **params).apply(text, None)


@pytest.mark.parametrize(
    ("action", "blocked"),
    [
        ("vim file.txt", True),
        ("view x", True),  # prefix "vi": SWE-agent blocks anything starting with it
        ("makedirs", True),  # prefix "make"
        ("  python  ", True),  # standalone, after strip
        ("python script.py", False),
        ("r2 -A bin", True),  # block_unless_regex: r2 without `radare2 ... -c`
        ("tail -f log", True),
        ("tail -n 3 log", False),
        ("", False),
    ],
)
def test_swe_agent_blocklist(action: str, blocked: bool) -> None:
    assert should_block(action) is blocked


def test_swe_agent_handle_action_strips_refuses_and_ends() -> None:
    assert apply("swe-agent.handle-action", "  ls -la \n").parts == ("ls -la",)
    refused = apply("swe-agent.handle-action", "nano notes.txt")
    assert refused.rejected == (
        "blocked: Operation 'nano notes.txt' is not supported by this environment"
    )
    ended = apply("swe-agent.handle-action", "\n exit \n")
    assert ended.ended and not ended.parts
    assert apply("swe-agent.handle-action", "exit 1").parts == ("exit 1",)


def test_bashlex_split_rejoins_top_level_commands() -> None:
    assert bashlex_split("echo a\necho b") == ["echo a", "echo b"]
    assert bashlex_split("# only\n# comments") == []
    staged = apply("swe-rex.bashlex-split", "x=1\necho $x > out.txt")
    assert staged.parts == ("x=1 ; echo $x > out.txt",)
    assert staged.notes == ("rewritten by bashlex",)
    # A here-document's body falls outside the node spans bashlex reports (when the command
    # also redirects): the rewrite drops it, as swe-rex 1.4.0's _split_bash_command does.
    heredoc = apply("swe-rex.bashlex-split", "cat <<EOF > h.txt\nhi\nEOF\necho done")
    assert heredoc.parts == ("cat <<EOF > h.txt ; echo done",)
    bare = apply("swe-rex.bashlex-split", "cat <<EOF\nhi\nEOF\necho done")
    assert bare.parts == ("cat <<EOF\nhi\nEOF ; echo done",)


@pytest.mark.parametrize("reply", ["cat <<'EOF' > f\nx\nEOF", "echo $((1+2))", "[[ -n x ]]"])
def test_bashlex_failure_appends_the_sentinel(reply: str) -> None:
    staged = apply("swe-rex.bashlex-split", reply)
    assert staged.parts == (reply + FALLBACK_SUFFIX,)
    assert staged.notes[0].startswith("bashlex failed (")
    step = make_preprocessor("swe-rex.bashlex-split")
    assert step.clean_stdout(b"out\nUNIQUESTRING29234") == b"out\n"


@pytest.fixture(scope="module")
def sandbox():  # type: ignore[no-untyped-def]
    with make_sandbox("auto") as box:
        yield box


def test_syntax_check_refuses_unterminated_quote_and_runs_after_its_delimiter(sandbox) -> None:  # type: ignore[no-untyped-def]
    step = make_preprocessor("swe-rex.syntax-check")
    with sandbox.workspace() as ws:
        ctx = Context(ws, sandbox)
        assert step.apply("echo 'ok'", ctx).parts == ("echo 'ok'",)
        refused = step.apply("echo 'unterminated", ctx)
        assert refused.rejected.startswith("BashIncorrectSyntaxError: ")
        # A line equal to the here-document delimiter ends the check's input: /bin/sh runs
        # what follows, in the workspace, before the reply is ever "executed".
        injected = step.apply("true\nSOUNIQUEEOF\necho ran > injected.txt", ctx)
        assert injected.rejected.startswith("BashIncorrectSyntaxError: ")
        assert (ws.work / "injected.txt").read_bytes() == b"ran\n"
    with pytest.raises(AdapterError, match="needs a sandbox"):
        step.apply("true", None)


def test_openhands_split_refuses_newline_separated_statements() -> None:
    assert split_commands("echo a\necho b") == ["echo a", "echo b"]
    assert split_commands("echo a; echo b && echo c") == ["echo a; echo b && echo c"]
    assert split_commands("cat <<EOF\nx\nEOF") == ["cat <<EOF\nx\nEOF"]
    refused = apply("openhands.split-commands", " touch a\ntouch b ")
    assert refused.rejected == "Cannot execute multiple commands at once (2 statements)"
    assert apply("openhands.split-commands", "  ls  ").parts == ("ls",)
    assert apply("openhands.split-commands", "  ").rejected.startswith("No previous running")


@pytest.mark.parametrize(
    ("command", "escaped"),
    [
        ("find . -exec rm {} \\;", "find . -exec rm {} \\\\;"),
        ("echo a \\| b \\> c", "echo a \\\\| b \\\\> c"),
        ("echo '\\;' \"\\;\"", "echo '\\;' \"\\;\""),  # inside strings: untouched
        ("echo $(echo \\;)", "echo $(echo \\;)"),  # inside a substitution: untouched
        ("echo 'unterminated \\;", "echo 'unterminated \\;"),  # parse error: unchanged
        ("   ", ""),
    ],
)
def test_openhands_escape_special_chars(command: str, escaped: str) -> None:
    assert escape_special_chars(command) == escaped


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("a | b > out", ["a", "|", "b", ">", "out"]),  # operators stay argv text
        ('bash -c "echo hello world"', ["bash", "-c", "echo hello world"]),
        ('\'a b\'c "d\\"e\\\\f\\n"', ["a bc", 'd"e\\f\\n']),
        ("a\\ b $HOME *.txt #x", ["a b", "$HOME", "*.txt", "#x"]),
        ("'' \"\"", ["", ""]),
        ("'unterminated", ["unterminated"]),
        (" \t\n", []),
    ],
)
def test_acp_parse_command(line: str, argv: list[str]) -> None:
    assert parse_acp_command(line) == argv


def test_acp_step_hands_on_an_argv_that_shlex_splits_back() -> None:
    staged = apply("openhands.acp-parse-command", "printf '%s\\n' a | tr a b")
    assert shlex.split(staged.parts[0]) == ["printf", "%s\\n", "a", "|", "tr", "a", "b"]
    assert apply("openhands.acp-parse-command", "  ").rejected.startswith("empty command")


def test_autogen_blocks_and_pip() -> None:
    assert extract_blocks("```sh\necho a\n```\ntext\n```python\nprint(1)\n```") == [
        ("sh", "echo a\n"),
        ("python", "print(1)\n"),
    ]
    # A reply holding three backticks ends its block early, at the agent's lazy regex.
    staged = apply("autogen.markdown-blocks", "printf '%s\\n' '```' > f.md")
    assert staged.parts == ("printf '%s\\n' '",)
    assert apply("autogen.markdown-blocks", "echo ok").parts == ("echo ok\n",)
    refused = apply("autogen.markdown-blocks", "echo a\n```\n```python\nprint(1)")
    assert refused.rejected.startswith("the message holds python block(s)")
    assert silence_pip("pip install x\n  pip install y\npip install -qqq z", "sh") == (
        "pip install -qqq x\n  pip install y\npip install -qqq z"
    )


def test_terminal_bench_keystrokes_end_in_one_newline() -> None:
    assert apply("terminal-bench.keystrokes", "ls").parts == ("ls\n",)
    assert apply("terminal-bench.keystrokes", "ls\n").parts == ("ls\n",)


def test_codex_snapshot_wrapper() -> None:
    assert shell_single_quote("it's") == "'it'\"'\"'s'"
    assert snapshot_script("echo 'a'", "/dev/null", "bash") == (
        "if . '/dev/null' >/dev/null 2>&1; then :; fi\n\nexec 'bash' -c 'echo '\"'\"'a'\"'\"''"
    )


def test_pipeline_stops_at_a_refusal_and_prefixes_notes() -> None:
    steps = [
        make_preprocessor("swe-agent.handle-action"),
        make_preprocessor("swe-rex.bashlex-split"),
    ]
    ok = run_pipeline(steps, " a=1\necho $a ", None)
    assert ok.parts == ("a=1 ; echo $a",)
    assert ok.notes == ("swe-rex.bashlex-split: rewritten by bashlex",)
    refused = run_pipeline(steps, "vim x", None)
    assert refused.rejected.startswith("swe-agent.handle-action: blocked:")
    assert not refused.parts


def test_registry_and_parameter_errors() -> None:
    assert all(cls.cite and cls.summary for cls in PREPROCESSORS.values())
    with pytest.raises(AdapterError, match="unknown pre-processor 'nope'"):
        make_preprocessor("nope")
    with pytest.raises(AdapterError, match=r"unknown parameter\(s\) bogus \(known: fence, run\)"):
        make_preprocessor("autogen.markdown-blocks", bogus=1)
    with pytest.raises(AdapterError, match="parameter fence must be str, got int"):
        make_preprocessor("autogen.markdown-blocks", fence=3)
