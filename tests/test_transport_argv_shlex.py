"""`argv-shlex`'s tokenizer: exactly `shlex.split`, in linear time, charged to the run.

`transports._shlex.split` replaces `shlex.split`, which is quadratic in a token's length (a
1 MB reply took 24 s on the host before the run's timeout even started). Equality is checked
by property tests against the real `shlex.split` on strings drawn from the characters its
state machine distinguishes (every whitespace kind it knows and the ones it does not, both
quotes, backslashes, `#`, NUL, non-ASCII, a lone surrogate), tokens and ValueError messages
alike.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.transports import _shlex, make_transport
from boundary_audit.transports.argv import ArgvShlexTransport
from boundary_audit.transports.interface import note, rejection

ALPHABET = " \t\r\n\x0b\x0c\x1c\x85\xa0\u2028\u3000'\"\\#;$`|&*?\x00é中\U0001f600\ud800ab"
"""shlex's whitespace (` \\t\\r\\n`), whitespace it does not know, quotes, the escape, a
commenter it must ignore, shell syntax it must ignore, NUL, non-ASCII, a lone surrogate."""
CHUNKS = ["\\", "'", '"', "\\\\", '\\"', "\\'", "''", '""', '"\\', "'\\", " ", "\n", "a", "#"]


def outcome(split: object, s: str) -> list[str] | tuple[str, str]:
    try:
        return split(s)  # type: ignore[operator,no-any-return]
    except ValueError as exc:
        return ("ValueError", str(exc))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
@example("")
@example("a\\")
@example('"a\\')
@example("'unterminated")
@example('"un\\"terminated')
@example("a\"b\"'c'\\ d")
@example("'' \"\" ''a")
@example('"\\$ \\\\ \\" \\a"')
@example("\\\n")
def test_equals_shlex_split_on_adversarial_characters(s: str) -> None:
    assert outcome(_shlex.split, s) == outcome(shlex.split, s)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(CHUNKS), max_size=30).map("".join))
def test_equals_shlex_split_on_quote_and_escape_sequences(s: str) -> None:
    assert outcome(_shlex.split, s) == outcome(shlex.split, s)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=60))
def test_equals_shlex_split_on_any_text(s: str) -> None:
    assert outcome(_shlex.split, s) == outcome(shlex.split, s)


@pytest.mark.parametrize(
    ("reply", "message"),
    [("echo 'a", "No closing quotation"), ('echo "a\\', "No escaped character")],
)
def test_a_tokenizer_error_is_the_same_rejection_as_before(reply: str, message: str) -> None:
    result = ArgvShlexTransport().execute(reply, None, None)  # type: ignore[arg-type]
    assert rejection(result) == f"argv-shlex: cannot tokenize: {message}"


@pytest.mark.parametrize(
    "text",
    [
        "a" * 4_000_000,  # one word: shlex.split takes minutes
        '"' + "x\\y" * 1_300_000 + '"',  # escapes inside double quotes
        "'" + "z" * 4_000_000,  # an unterminated quote: the error comes at the end
        "ab " * 1_300_000,  # many tokens
    ],
    ids=["one-word", "double-quoted-escapes", "unterminated", "many-tokens"],
)
def test_multi_megabyte_input_is_tokenized_in_linear_time(text: str) -> None:
    started = time.monotonic()
    tokens = outcome(_shlex.split, text)
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed  # ~1 s here; shlex.split needs minutes for the first one
    if text.startswith("'"):
        assert tokens == ("ValueError", "No closing quotation")
    elif text.startswith('"'):
        assert tokens == ["x\\y" * 1_300_000]
    elif text.startswith("ab"):
        assert tokens == ["ab"] * 1_300_000
    else:
        assert tokens == [text]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=2))
    yield box
    box.close()


class SlowShlex(ArgvShlexTransport):
    """argv-shlex whose tokenizing takes `delay` seconds on the host."""

    delay = 0.0

    def tokens(self, reply: str) -> list[str]:
        time.sleep(self.delay)
        return super().tokens(reply)


@pytest.mark.bwrap
def test_tokenizing_time_is_charged_to_the_runs_timeout(sandbox: Sandbox) -> None:
    slow = SlowShlex()
    slow.delay = 1.2
    with sandbox.workspace() as ws:
        started = time.monotonic()
        res = slow.execute("sleep 5", ws, sandbox)
        total = time.monotonic() - started
    assert (res.timed_out, res.exit_code) == (True, None)
    assert 1.9 < total < 2.9, total  # 1.2 s tokenizing + the 0.8 s left, not 1.2 + 2


@pytest.mark.bwrap
def test_tokenizing_past_the_timeout_runs_nothing(sandbox: Sandbox) -> None:
    slow = SlowShlex()
    slow.delay = 2.1
    with sandbox.workspace() as ws:
        res = slow.execute("touch ran", ws, sandbox)
        assert not (ws.work / "ran").exists()
    assert (res.timed_out, res.exit_code) == (True, None)
    assert note(res) == "argv-shlex: tokenizing the reply used up the run's timeout; nothing ran"


@pytest.mark.bwrap
def test_a_reply_under_the_cap_is_tokenized_quickly_and_fails_as_the_kernel_says(
    sandbox: Sandbox,
) -> None:
    transport = make_transport("argv-shlex")
    reply = "printf %s " + "a" * 1_000_000  # one 1 MB argument: over MAX_ARG_STRLEN
    with sandbox.workspace() as ws:
        started = time.monotonic()
        res = transport.execute(reply, ws, sandbox)
        elapsed = time.monotonic() - started
    assert (res.exit_code, res.timed_out, rejection(res)) == (126, False, "")
    assert res.stderr.endswith(b": cannot execute: Argument list too long\n")
    assert elapsed < 2.0, elapsed  # 24 s before, on the host, outside the timeout
