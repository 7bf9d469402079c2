"""Reply extraction: the command a harness would take out of an answer, or the exact reason why
there is none. Never an exception, whatever the answer holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boundary_audit.llm.extract import METHODS, Answer, ToolCall, extract, fenced_blocks

TWO_BLOCKS = "First:\n```bash\nls -la\n```\nthen\n~~~sh\nprintf '%s\\n' \"a b\"\n~~~\n"


def test_fenced_blocks_follow_the_fence_rules() -> None:
    assert fenced_blocks(TWO_BLOCKS) == ["ls -la", "printf '%s\\n' \"a b\""]
    # a longer fence holds a shorter one; an indented fence is dedented; an unclosed one is none
    text = "````md\n```bash\nx\n```\n````\n  ```\n  a\n   b\n  ```\n```\nopen"
    assert fenced_blocks(text) == ["```bash\nx\n```", "a\n b"]
    assert fenced_blocks("```bash\nls\n") == []
    assert fenced_blocks("```\n\n```") == [""]
    assert fenced_blocks("``` a`b\nx\n```") == []  # a backtick in the info string: not a fence


@pytest.mark.parametrize(
    ("method", "reply", "found"),
    [
        ("last-fence", "printf '%s\\n' \"a b\"", "last-fence"),
        ("first-fence", "ls -la", "first-fence"),
        ("last-fence-or-whole", "printf '%s\\n' \"a b\"", "last-fence"),
        ("whole", TWO_BLOCKS.strip(), "whole"),
    ],
)
def test_text_methods(method: str, reply: str, found: str) -> None:
    got = extract(Answer(text=TWO_BLOCKS), method)
    assert (got.reply, got.method, got.failure, got.notes) == (
        reply,
        found,
        "",
        ("2 fenced blocks",) if found.endswith("fence") else (),
    )


def test_the_default_falls_back_to_the_whole_text() -> None:
    got = extract(Answer(text="  ls -l | wc -l\n"), "last-fence-or-whole")
    assert (got.reply, got.method) == ("ls -l | wc -l", "whole")


@pytest.mark.parametrize(
    ("answer", "method", "failure"),
    [
        (Answer(refusal="I can't\nhelp."), "last-fence", "the model refused: I can't\\nhelp."),
        (Answer(text="x", finish_reason="content_filter"), "whole", "the answer was stopped by"),
        (Answer(text=" \n"), "last-fence-or-whole", "empty answer"),
        (Answer(finish_reason="length"), "whole", "empty answer (cut off at the token limit)"),
        (Answer(text="ls"), "last-fence", "no complete fenced code block in the answer"),
        (
            Answer(text="```bash\nls", finish_reason="length"),
            "last-fence",
            "no complete fenced code block in the answer (cut off at the token limit)",
        ),
        (Answer(text="```\n  \n```"), "last-fence", "the command is empty"),
        (
            Answer(text="```\nprintf 'a\0b'\n```"),
            "last-fence",
            "the command holds a NUL character (U+0000) at character 9",
        ),
        (Answer(text="ls"), "tool-call", "no tool call in the answer (it answered in text)"),
        (
            Answer(tool_calls=(ToolCall("bash", "{}"), ToolCall("bash", "{}"))),
            "tool-call",
            "2 tool calls (the contract asks for exactly one)",
        ),
        (
            Answer(tool_calls=(ToolCall("python", '{"command": "x"}'),)),
            "tool-call",
            "a call of tool 'python', not 'bash'",
        ),
        (
            Answer(tool_calls=(ToolCall("bash", '{"command": "ls'),)),
            "tool-call",
            "the tool-call arguments are not JSON: Unterminated string starting at",
        ),
        (
            Answer(tool_calls=(ToolCall("bash", '["ls"]'),)),
            "tool-call",
            "the tool-call arguments are not a JSON object",
        ),
        (
            Answer(tool_calls=(ToolCall("bash", '{"command": ["ls", "-l"]}'),)),
            "tool-call",
            "the tool-call arguments have no string `command` (or `cmd`)",
        ),
        (
            Answer(tool_calls=(ToolCall("bash", '{"command": "a\\ud800"}'),)),
            "tool-call",
            "the command holds a lone surrogate U+D800 at character 1",
        ),
        (Answer(tool_calls=(ToolCall("bash", "[" * 100_000),)), "tool-call", "the tool-call"),
    ],
)
def test_failures_carry_their_reason(answer: Answer, method: str, failure: str) -> None:
    got = extract(answer, method, "bash")
    assert got.reply is None
    assert got.failure.startswith(failure), got.failure


def test_tool_call_takes_command_then_cmd() -> None:
    call = ToolCall("bash", '{"cmd": "ls", "command": "pwd"}')
    assert extract(Answer(tool_calls=(call,)), "tool-call", "bash").reply == "pwd"
    call = ToolCall("exec_command", '{"cmd": "ls"}')
    got = extract(Answer(tool_calls=(call,)), "tool-call", None)
    assert (got.reply, got.method, got.failure) == ("ls", "tool-call", "")


@given(
    text=st.text(),
    args=st.text(),
    refusal=st.sampled_from(["", "no"]),
    method=st.sampled_from(METHODS),
)
def test_never_raises(text: str, args: str, refusal: str, method: str) -> None:
    got = extract(Answer(text, (ToolCall("bash", args),), refusal), method, "bash")
    assert (got.reply is None) == bool(got.failure)
