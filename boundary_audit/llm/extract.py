"""The command a harness takes out of a model's answer, or why there is none.

`extract(answer, method, tool)` never raises: whatever the model sent, the result is either a
command (`Extraction.reply`) with the method that found it, or a failure with its reason, which
`generate` records as a failed reply. The methods are those harnesses use:

- `last-fence`: the content of the last complete fenced block (SWE-agent's thought-action
  parser);
- `first-fence`: the content of the first complete fenced block;
- `last-fence-or-whole`: the last block, else the whole answer (the text contracts' default);
- `whole`: the whole answer, stripped of surrounding whitespace;
- `tool-call`: the `command` (else `cmd`) string argument of exactly one call of the
  contract's tool (Codex, LangChain, OpenHands decode their tool calls so).

A fence opens on a line of three or more backticks or tildes (indented by at most three
spaces, any info string), and closes on a line of at least as many of the same character and
nothing else; its content is the lines between, without the final newline. An unclosed fence
is not a block (a harness's regex would not match it either).

Failures, in this order: the model refused (`refusal`), the content filter stopped it, the
answer is empty, the method found nothing (no block, no call, several calls, another tool,
arguments that are not a JSON object, no string `command`), the command is empty, or the
command is not text a process can receive (a NUL, a lone surrogate: the probe's reply loader
refuses both).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from boundary_audit.tasks.replies import text_problem

METHODS = ("last-fence-or-whole", "last-fence", "first-fence", "whole", "tool-call")
ARGUMENT_KEYS = ("command", "cmd")
"""Tool-call arguments that carry the command, in order of preference."""
_SHOWN = 120
_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class ToolCall:
    """One call the model made: the tool's name and its arguments as the raw JSON text."""

    name: str
    arguments: str


@dataclass(frozen=True)
class Answer:
    """What came back for one request, whatever the API."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    refusal: str = ""
    finish_reason: str = ""


@dataclass(frozen=True)
class Extraction:
    """A command and how it was found, or the reason there is none (`failure`)."""

    reply: str | None
    method: str
    failure: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def fenced_blocks(text: str) -> list[str]:
    """The contents of every complete fenced block of `text`, in order."""
    blocks: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence = len(m.group(1)), m.group(2)
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        for j in range(i + 1, len(lines)):
            if close.match(lines[j]):
                body = [_dedent(line, indent) for line in lines[i + 1 : j]]
                blocks.append("\n".join(body))
                i = j + 1
                break
        else:
            return blocks
    return blocks


def _dedent(line: str, indent: int) -> str:
    n = len(line) - len(line.lstrip(" "))
    return line[min(n, indent) :]


def shown(text: str) -> str:
    """`text` cut to a short, printable excerpt for a failure reason."""
    one = text.strip().replace("\n", "\\n")
    one = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in one)
    return one if len(one) <= _SHOWN else one[: _SHOWN - 3] + "..."


def extract(answer: Answer, method: str, tool: str | None = None) -> Extraction:
    """The command in `answer` by `method` (`tool` is the contract's tool name)."""
    if method not in METHODS:
        raise ValueError(f"unknown extraction method {method!r}")
    if answer.refusal:
        return Extraction(None, method, f"the model refused: {shown(answer.refusal)}")
    if answer.finish_reason == "content_filter":
        return Extraction(None, method, "the answer was stopped by the content filter")
    if not answer.text.strip() and not answer.tool_calls:
        cut = " (cut off at the token limit)" if answer.finish_reason == "length" else ""
        return Extraction(None, method, f"empty answer{cut}")
    if method == "tool-call":
        found = _from_calls(answer.tool_calls, tool)
    else:
        found = _from_text(answer, method)
    if found.reply is None:
        return found
    if not found.reply.strip():
        return Extraction(None, found.method, "the command is empty")
    problem = text_problem(found.reply)
    if problem:
        return Extraction(None, found.method, f"the command {problem}")
    return found


def _from_text(answer: Answer, method: str) -> Extraction:
    text = answer.text
    if method == "whole":
        return Extraction(text.strip(), "whole")
    blocks = fenced_blocks(text)
    if blocks:
        chosen = blocks[0] if method == "first-fence" else blocks[-1]
        notes = (f"{len(blocks)} fenced blocks",) if len(blocks) > 1 else ()
        return Extraction(chosen, method.removesuffix("-or-whole"), notes=notes)
    if method == "last-fence-or-whole":
        return Extraction(text.strip(), "whole")
    why = "no complete fenced code block in the answer"
    if answer.finish_reason == "length":
        why += " (cut off at the token limit)"
    elif answer.tool_calls:
        why += " (the model called a tool instead)"
    return Extraction(None, method, why)


def _from_calls(calls: Sequence[ToolCall], tool: str | None) -> Extraction:
    method = "tool-call"
    if not calls:
        return Extraction(None, method, "no tool call in the answer (it answered in text)")
    if len(calls) > 1:
        return Extraction(
            None, method, f"{len(calls)} tool calls (the contract asks for exactly one)"
        )
    call = calls[0]
    if tool is not None and call.name != tool:
        return Extraction(None, method, f"a call of tool {shown(call.name)!r}, not {tool!r}")
    try:
        args = json.loads(call.arguments)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        return Extraction(None, method, f"the tool-call arguments are not JSON: {why}")
    if not isinstance(args, dict):
        return Extraction(None, method, "the tool-call arguments are not a JSON object")
    for key in ARGUMENT_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return Extraction(value, method)
    return Extraction(None, method, "the tool-call arguments have no string `command` (or `cmd`)")
