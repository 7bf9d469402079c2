"""The model an observed harness talks to: one scripted conversation over the mock server.

An agent CLI asks its model for the next step over HTTP (chat completions or the Responses
API) and runs the command it gets back. Here that model is `llm.mock_server.MockServer`,
answering each request from a `Conversation`: the replies in order, each in the shape the
request asks for, then a final text that ends the agent's turn.

- **tool**: the request offers function tools. The shell tool is found by `tools.toml` (its
  name, or a string property named like a command); the answer is one call of it whose
  command argument is the reply's exact text, serialised with json.dumps as a model's
  decoded call would be (chat `tool_calls`, Responses `function_call`). Its call id is
  unique in the conversation (`call_ba_<n>`), so the output the harness sends back for it
  (a `tool` message, a `function_call_output` item) is found again.
- **fenced**: the request offers no tools: the reply inside a ```bash fenced block, the text
  a raw-contract harness (Terminal-Bench, AutoGen, aider) parses its command out of.

`shape` forces one (`tool`, `fenced`) or leaves it to the request (`auto`). In `auto`, a
request without tools that comes once a request with a shell tool was answered is a side
request (a title, a summary) and gets the final text instead of a reply: the conversation
has a tool contract by then. A request that offers tools but no shell tool, and every request
after the last reply, gets the final text too.

Every decision is one JSON line in the answers file (`Answer.as_json`); the mock server's
own record file has every request body, from which `outputs` reads what the harness showed
its model for each reply. Stdlib only (and `llm.mock_server`, also stdlib only): the host
runs this as its own process, `python -m boundary_audit.observe.model`, registered with the
supervisor (see `endpoint.py`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from boundary_audit.llm.mock_server import Behaviour, MockServer, Recorded, Script

SHAPES = ("auto", "tool", "fenced")
FINAL_TEXT = "Done."
FENCE = "bash"
REFUSED = frozenset({"unauthorized", "bad-request"})
"""What the mock server answers before any behaviour: such a request carries no reply."""
LISTENING = "listening on "
"""The first words of the line the server prints on stdout once it serves."""


@cache
def _table() -> dict[str, Any]:
    text = resources.files("boundary_audit.observe").joinpath("tools.toml").read_text("utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class ShellTool:
    """The offered tool a reply is sent through, and how its arguments are filled."""

    name: str
    argument: str
    """The string property that carries the command."""
    filled: Mapping[str, Any] = field(default_factory=dict)
    """The other required properties, with the values `tools.toml` gives their types."""

    def arguments(self, reply: str) -> dict[str, Any]:
        """The call's arguments object: the command first, then the filled properties."""
        return {self.argument: reply, **self.filled}


def offered_tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The function tools of a request, each as `{name, parameters}` (chat or Responses)."""
    found = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        inner = tool.get("function")
        spec: dict[str, Any] = inner if isinstance(inner, dict) else tool
        name = spec.get("name")
        if isinstance(name, str) and name:
            params = spec.get("parameters")
            found.append({"name": name, "parameters": params if isinstance(params, dict) else {}})
    return found


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    listed = kind if isinstance(kind, list) else []
    kinds = {kind} if isinstance(kind, str) else {k for k in listed if isinstance(k, str)}
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            kinds |= _types(sub)
    return kinds


def _command_argument(params: Mapping[str, Any]) -> str | None:
    props = params.get("properties")
    if not isinstance(props, dict):
        return None
    for name in _table()["arguments"]:
        if name in props and "string" in _types(props[name]):
            return str(name)
    return None


def _filled(params: Mapping[str, Any], argument: str) -> dict[str, Any]:
    found_props, found_required = params.get("properties"), params.get("required")
    props: dict[str, Any] = found_props if isinstance(found_props, dict) else {}
    required: list[Any] = found_required if isinstance(found_required, list) else []
    fill = _table()["fill"]
    out: dict[str, Any] = {}
    for name in required:
        if not isinstance(name, str) or name == argument:
            continue
        schema = props.get(name)
        if isinstance(schema, dict) and "default" in schema:
            out[name] = schema["default"]
            continue
        kinds = sorted(_types(schema)) or ["string"]
        kind = next((k for k in kinds if k in fill), "string")
        out[name] = fill[kind]
    return out


def shell_tool(tools: Sequence[Mapping[str, Any]]) -> ShellTool | None:
    """The tool a reply goes through (see `tools.toml`), or None when none carries a string."""
    usable = []
    for tool in tools:
        arg = _command_argument(tool["parameters"])
        if arg is not None:
            usable.append((str(tool["name"]), arg, tool["parameters"]))
    if not usable:
        return None
    order = {n.lower(): i for i, n in enumerate(_table()["names"])}
    named = [u for u in usable if u[0].lower() in order]
    name, arg, params = min(named, key=lambda u: order[u[0].lower()]) if named else usable[0]
    return ShellTool(name, arg, _filled(params, arg))


@dataclass(frozen=True)
class Answer:
    """What one model request got."""

    request: int
    """The request's arrival number among model requests."""
    api: str
    """`chat` or `responses`."""
    shape: str
    """`tool`, `fenced` or `final`."""
    reply: int | None = None
    """Which reply it carried (None for the final text)."""
    tool: str = ""
    call_id: str = ""
    offered: tuple[str, ...] = ()
    """The function tools the request offered, by name."""
    why: str = ""
    """For a final text: why no reply was sent (`the replies are used up`, ...)."""

    def as_json(self) -> dict[str, Any]:
        """One line of the answers file."""
        return {
            "request": self.request,
            "api": self.api,
            "shape": self.shape,
            "reply": self.reply,
            "tool": self.tool,
            "call_id": self.call_id,
            "offered": list(self.offered),
            "why": self.why,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> Answer:
        """An answers-file line read back (by the host, which wrote nothing of it: bounded)."""
        reply = obj.get("reply")
        return Answer(
            request=int(obj.get("request", -1)),
            api=str(obj.get("api", "")),
            shape=str(obj.get("shape", "")),
            reply=reply if isinstance(reply, int) and not isinstance(reply, bool) else None,
            tool=str(obj.get("tool", "")),
            call_id=str(obj.get("call_id", "")),
            offered=tuple(str(t) for t in obj.get("offered") or ()),
            why=str(obj.get("why", "")),
        )


@dataclass
class Conversation:
    """The replies to send, and what has been sent so far (thread-safe through the server)."""

    replies: Sequence[str]
    shape: str = "auto"
    final: str = FINAL_TEXT
    sent: int = 0
    tool_contract: bool = False
    """A reply went out as a tool call: tool-less requests are side requests from then on."""
    taken: list[int] = field(default_factory=list)
    """The request number each sent reply went to, in reply order."""

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, not {self.shape!r}")

    def give_back(self, index: int) -> None:
        """Request `index` was refused before its answer went out: if it took the latest
        reply, that reply goes to the next request instead."""
        if self.taken and self.taken[-1] == index:
            self.taken.pop()
            self.sent -= 1

    def answer(self, index: int, api: str, body: Any) -> tuple[Answer, Behaviour]:
        """The next answer for a request (see the module docstring)."""
        body = body if isinstance(body, dict) else {}
        tools = offered_tools(body)
        names = tuple(t["name"] for t in tools)
        wants_tool = self.shape == "tool" or (self.shape == "auto" and bool(tools))

        def final(why: str) -> tuple[Answer, Behaviour]:
            answer = Answer(index, api, "final", offered=names, why=why)
            return answer, Behaviour("text", {"text": self.final})

        if self.sent >= len(self.replies):
            return final("the replies are used up")
        reply = self.replies[self.sent]
        if wants_tool:
            tool = shell_tool(tools)
            if tool is None:
                return final(
                    "no offered tool takes a command string"
                    + (f" ({', '.join(names)})" if names else " (no tools offered)")
                )
            call_id = f"call_ba_{self.sent}"
            answer = Answer(index, api, "tool", self.sent, tool.name, call_id, names)
            self.sent += 1
            self.taken.append(index)
            self.tool_contract = True
            b = Behaviour(
                "tool_call",
                {"name": tool.name, "id": call_id, "arguments": tool.arguments(reply)},
            )
            return answer, b
        if self.shape == "auto" and self.tool_contract:
            return final("a side request without tools, after a tool call")
        answer = Answer(index, api, "fenced", self.sent, offered=names)
        self.sent += 1
        self.taken.append(index)
        return answer, Behaviour("text", {"text": f"```{FENCE}\n{reply}\n```"})


class ConversationServer(MockServer):
    """A mock server whose every model request is answered by one `Conversation`."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        record: TextIO | None = None,
        answers: TextIO | None = None,
    ) -> None:
        super().__init__(Script(), record=record)
        self.conversation = conversation
        self.answers: list[Answer] = []
        self._answers_file = answers
        self._turn = threading.Lock()

    def choose(self, prompt: str, body: Any = None) -> tuple[int, Behaviour]:
        # NOTE: the path is not passed here; a body with `input` (and no `messages`) is the
        # Responses API's, which is all the answer depends on (mock_server renders the shape)
        api = "responses" if isinstance(body, dict) and "input" in body else "chat"
        with self._turn:
            index, _ = super().choose(prompt, body)
            answer, behaviour = self.conversation.answer(index, api, body)
            self._log(answer)
        return index, behaviour

    def keep(self, rec: Recorded) -> None:
        """Record a request; one refused before any answer (no or a bad key: 401, a body that
        is no JSON object: 400) gives its reply back, for the harness's next try."""
        if rec.index is not None and rec.behaviour in REFUSED:
            with self._turn:
                self.conversation.give_back(rec.index)
                mine = [a for a in self.answers if a.request == rec.index]
                for a in mine:
                    self.answers.remove(a)
                    self._log(replace(a, shape="refused", reply=None, why=rec.behaviour))
        super().keep(rec)

    def _log(self, answer: Answer) -> None:
        self.answers.append(answer)
        if self._answers_file is not None:
            self._answers_file.write(json.dumps(answer.as_json()) + "\n")
            self._answers_file.flush()


# -- what the harness showed its model --------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            _text(v.get("text", v.get("output", ""))) if isinstance(v, dict) else _text(v)
            for v in value
        )
    return "" if value is None else json.dumps(value)


def tool_output(body: Any, call_id: str) -> str | None:
    """The output a request carries for tool call `call_id` (chat or Responses), or None."""
    if not isinstance(body, dict):
        return None
    for item in body.get("messages") or ():
        if isinstance(item, dict) and item.get("role") == "tool":
            if item.get("tool_call_id") == call_id:
                return _text(item.get("content"))
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            if item.get("call_id") == call_id:
                return _text(item.get("output"))
    return None


def last_user_text(body: Any) -> str | None:
    """The text of a request's last user message (a raw harness's command output), or None."""
    if not isinstance(body, dict):
        return None
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    if isinstance(items, str):
        return items
    for item in reversed(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            return _text(item.get("content"))
    return None


def outputs(answers: Sequence[Answer], bodies: Mapping[int, Any], count: int) -> list[str | None]:
    """Per reply, what the harness sent its model back for it (None: never sent back).

    A tool call's output is the first later request carrying its call id; a fenced reply's
    is the last user message of the next request."""
    found: list[str | None] = [None] * count
    later = sorted(bodies)
    for a in answers:
        if a.reply is None or not 0 <= a.reply < count:
            continue
        for index in (i for i in later if i > a.request):
            body = bodies[index]
            got = tool_output(body, a.call_id) if a.shape == "tool" else last_user_text(body)
            if got is not None or a.shape == "fenced":
                found[a.reply] = got
                break
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m boundary_audit.observe.model --conversation FILE --answers FILE --record FILE`

    The conversation file is `{"replies": [...], "shape": "auto", "final": "Done."}`. Prints
    `listening on BASE_URL` once it serves, then serves until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m boundary_audit.observe.model")
    parser.add_argument("--conversation", required=True, type=Path)
    parser.add_argument("--answers", required=True, type=Path)
    parser.add_argument("--record", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        spec = json.loads(args.conversation.read_text(encoding="utf-8"))
        conversation = Conversation(
            [str(r) for r in spec["replies"]],
            str(spec.get("shape", "auto")),
            str(spec.get("final", FINAL_TEXT)),
        )
        record = args.record.open("a", encoding="utf-8")
        answers = args.answers.open("a", encoding="utf-8")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.stderr.write(f"observe.model: error: {exc}\n")
        return 4
    server = ConversationServer(conversation, record=record, answers=answers).start()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"{LISTENING}{server.base_url}", flush=True)
    while not stop.wait(0.5):
        pass
    server.stop()
    record.close()
    answers.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
