"""An OpenAI-compatible model server on 127.0.0.1 that answers from a script.

Stdlib only, and importing nothing else of boundary_audit, on purpose: the tests start it
in-process, `python -m boundary_audit.llm.mock_server --script FILE` starts it on its own,
and a sandbox can run this one file. It serves only loopback addresses.

Endpoints: `POST .../chat/completions` (chat completions: text, `tool_calls`, `refusal`),
`POST .../responses` (the Responses API: `message`, `function_call` and `refusal` items),
each streamed (server-sent events, as the real APIs stream) when the request says
`"stream": true` and as one JSON document otherwise; `GET .../models`. Anything else is 404.

A script is a JSON object (`Script.from_json`):

    {"api_key": "sk-test",                       optional: other bearers get 401
     "models": ["mock"],                         optional: what GET /models lists
     "default": {"kind": "text", "text": "```bash\\nls\\n```"},
     "rules": [
       {"index": 0, "reply": {"kind": "status", "status": 500}},
       {"contains": "write-file-t3", "sequence": [
          {"kind": "status", "status": 429, "retry_after": 0.2},
          {"kind": "tool_call", "arguments": {"command": "printf x"}}]}]}

A model request gets the first rule that matches it: `index` (an int or a list of ints: the
request's 0-based arrival number among model requests) and/or `contains` (a substring of the
prompt, or a list of substrings it must all hold; the prompt is every message's text, the
instructions and the input). A rule answers with `reply`,
or with the n-th entry of `sequence` for the n-th request it matched (the last repeats).
No rule: `default` (itself an empty text answer when the script has none).

Behaviours (`kind`), each with the documented bytes on the wire:

- `text`: an assistant message with `text` (`finish_reason`, default `stop`);
- `tool_call`: one call of `name` (default `bash`) with `arguments` (an object, serialised with
  json.dumps) or `arguments_raw` (the string as sent, e.g. not JSON); `calls` (a list of such
  objects) for several calls; `text` optional alongside; `id` the call id (default
  `call_mock_<n>`, n its place among the calls);
- `status`: HTTP `status` with an OpenAI-style error body (`message`), and the headers
  `Retry-After: <retry_after>` / `retry-after-ms` when `retry_after` is given;
- `hang`: no answer for `seconds` (default: until the server stops), then the connection
  is closed: the client's timeout decides;
- `malformed`: status 200, `application/json`, and a body that is not JSON (streamed: an
  event whose data is not JSON);
- `empty`: an assistant message with empty content (Responses: no output item);
- `refusal`: the model's refusal with `text` (chat `message.refusal`, Responses `refusal`
  content).

`text`, `tool_call`, `empty`, `refusal` take `delay` (seconds before the answer) and `usage`
(`{"prompt_tokens": n, "completion_tokens": m}`; default: a quarter of the characters).
Behaviours that answer mark `model` with the requested model.

Every request is recorded (`MockServer.requests`, and `--record FILE` as JSON lines): its
index, method, path, the parsed body (or its text), the headers except `Authorization`,
whose value is never kept: `auth` says only `missing`, `ok` or `mismatch` (against the
script's `api_key`; `present` when the script sets none), and the behaviour it got.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

KINDS = ("text", "tool_call", "status", "hang", "malformed", "empty", "refusal")
"""Every behaviour a script may name."""
_ANSWERS = ("text", "tool_call", "empty", "refusal")
_BEHAVIOUR_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"text", "finish_reason", "delay", "usage"}),
    "tool_call": frozenset(
        {"name", "id", "arguments", "arguments_raw", "calls", "text", "finish_reason", "delay"}
        | {"usage"}
    ),
    "status": frozenset({"status", "message", "retry_after"}),
    "hang": frozenset({"seconds"}),
    "malformed": frozenset({"body"}),
    "empty": frozenset({"finish_reason", "delay", "usage"}),
    "refusal": frozenset({"text", "delay", "usage"}),
}
MALFORMED_BODY = '{"id": "chatcmpl-mock", "choices": [{"index": 0, "message": {"content": "'
"""What `malformed` sends unless the script gives `body`: JSON cut off mid-string."""


class ScriptError(ValueError):
    """A script that cannot be followed; the message names the place (`rules[2].sequence[0]`)."""


@dataclass(frozen=True)
class Behaviour:
    """One scripted answer (see the module docstring for each kind's fields)."""

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def parse(obj: Any, where: str) -> Behaviour:
        """Check one behaviour object; a ScriptError names `where`."""
        if not isinstance(obj, dict):
            raise ScriptError(f"{where}: expected an object, got {type(obj).__name__}")
        kind = obj.get("kind")
        if kind not in KINDS:
            raise ScriptError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
        extra = sorted(set(obj) - {"kind"} - _BEHAVIOUR_KEYS[kind])
        if extra:
            raise ScriptError(f"{where}: unknown field {extra[0]!r} for kind {kind!r}")
        if kind == "status" and not isinstance(obj.get("status"), int):
            raise ScriptError(f"{where}.status: expected an HTTP status code")
        for key in ("delay", "seconds", "retry_after"):
            value = obj.get(key)
            if value is not None and (not isinstance(value, int | float) or value < 0):
                raise ScriptError(f"{where}.{key}: expected a number of seconds >= 0")
        if kind == "tool_call":
            calls = obj.get("calls")
            if calls is not None and (not isinstance(calls, list) or not calls):
                raise ScriptError(f"{where}.calls: expected a non-empty list of calls")
        return Behaviour(kind, {k: v for k, v in obj.items() if k != "kind"})


@dataclass(frozen=True)
class Rule:
    """Which requests a rule takes (`index`, `contains`) and what they get."""

    answers: tuple[Behaviour, ...]
    index: frozenset[int] | None = None
    contains: tuple[str, ...] | None = None
    """Substrings the prompt must all hold."""

    def matches(self, index: int, prompt: str) -> bool:
        """True when every condition the rule has holds for this request."""
        if self.index is not None and index not in self.index:
            return False
        return self.contains is None or all(text in prompt for text in self.contains)


@dataclass(frozen=True)
class Script:
    """What the server answers; see the module docstring for the JSON form."""

    rules: tuple[Rule, ...] = ()
    default: Behaviour = Behaviour("text", {"text": ""})
    api_key: str | None = None
    models: tuple[str, ...] = ("mock",)

    @staticmethod
    def from_json(obj: Any) -> Script:
        """Check a parsed script; a ScriptError names the first problem."""
        if not isinstance(obj, dict):
            raise ScriptError("script: expected a JSON object")
        extra = sorted(set(obj) - {"api_key", "models", "default", "rules"})
        if extra:
            raise ScriptError(f"script: unknown field {extra[0]!r}")
        api_key = obj.get("api_key")
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ScriptError("api_key: expected a non-empty string")
        models = obj.get("models", ["mock"])
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise ScriptError("models: expected a list of strings")
        default = Behaviour.parse(obj["default"], "default") if "default" in obj else Script.default
        rules_obj = obj.get("rules", [])
        if not isinstance(rules_obj, list):
            raise ScriptError("rules: expected a list")
        rules = tuple(_rule(r, f"rules[{i}]") for i, r in enumerate(rules_obj))
        return Script(rules, default, api_key, tuple(models))

    @staticmethod
    def load(path: Path) -> Script:
        """Read and check a script file (JSON)."""
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ScriptError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ScriptError(f"{path}: not JSON: {exc}") from None
        return Script.from_json(obj)


def _rule(obj: Any, where: str) -> Rule:
    if not isinstance(obj, dict):
        raise ScriptError(f"{where}: expected an object")
    extra = sorted(set(obj) - {"index", "contains", "reply", "sequence"})
    if extra:
        raise ScriptError(f"{where}: unknown field {extra[0]!r}")
    if ("reply" in obj) == ("sequence" in obj):
        raise ScriptError(f"{where}: give exactly one of `reply` and `sequence`")
    if "reply" in obj:
        answers: tuple[Behaviour, ...] = (Behaviour.parse(obj["reply"], f"{where}.reply"),)
    else:
        seq = obj["sequence"]
        if not isinstance(seq, list) or not seq:
            raise ScriptError(f"{where}.sequence: expected a non-empty list")
        answers = tuple(Behaviour.parse(b, f"{where}.sequence[{i}]") for i, b in enumerate(seq))
    index = obj.get("index")
    indexes: frozenset[int] | None = None
    if index is not None:
        items = index if isinstance(index, list) else [index]
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items):
            raise ScriptError(f"{where}.index: expected a request number or a list of them")
        indexes = frozenset(items)
    contains_obj = obj.get("contains")
    contains: tuple[str, ...] | None = None
    if contains_obj is not None:
        texts = [contains_obj] if isinstance(contains_obj, str) else contains_obj
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(t, str) and t for t in texts)
        ):
            raise ScriptError(f"{where}.contains: expected a non-empty string or a list of them")
        contains = tuple(texts)
    if indexes is None and contains is None:
        raise ScriptError(f"{where}: give `index` or `contains` (or both)")
    return Rule(answers, indexes, contains)


# -- what a request asks ---------------------------------------------------------------------


def prompt_text(body: Any) -> str:
    """Every text of the prompt (messages, instructions, input), joined by newlines."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []

    def take(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    take(item.get("content"))
                    take(item.get("text"))
                else:
                    take(item)

    take(body.get("instructions"))
    take(body.get("messages"))
    take(body.get("input"))
    return "\n".join(parts)


def _api(path: str) -> str | None:
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("/chat/completions"):
        return "chat"
    if bare.endswith("/responses"):
        return "responses"
    return None


def _tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


# -- the answers, as the APIs spell them ------------------------------------------------------


def _usage(b: Behaviour, prompt: str, produced: str) -> tuple[int, int]:
    given = b.fields.get("usage")
    if isinstance(given, dict):
        return int(given.get("prompt_tokens", 0)), int(given.get("completion_tokens", 0))
    return _tokens(prompt), _tokens(produced)


def _calls(b: Behaviour) -> list[dict[str, Any]]:
    specs = b.fields.get("calls") or [b.fields]
    out = []
    for n, spec in enumerate(specs):
        raw = spec.get("arguments_raw")
        if raw is None:
            raw = json.dumps(spec.get("arguments", {}))
        call_id = str(spec.get("id") or f"call_mock_{n}")
        out.append({"id": call_id, "name": str(spec.get("name", "bash")), "args": raw})
    return out


def _produced(b: Behaviour) -> str:
    if b.kind == "tool_call":
        return str(b.fields.get("text") or "") + "".join(c["args"] for c in _calls(b))
    return str(b.fields.get("text") or "")


class _Answer:
    """One behaviour rendered for one API, whole or as events."""

    def __init__(self, b: Behaviour, api: str, model: str, number: int, prompt: str) -> None:
        self.b, self.api, self.model, self.number = b, api, model, number
        self.prompt_tokens, self.completion_tokens = _usage(b, prompt, _produced(b))
        self.created = int(time.time())

    # chat completions

    def chat_message(self) -> tuple[dict[str, Any], str]:
        b = self.b
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = str(b.fields.get("finish_reason") or "stop")
        if b.kind == "text":
            message["content"] = str(b.fields.get("text", ""))
        elif b.kind == "empty":
            message["content"] = ""
        elif b.kind == "refusal":
            message["refusal"] = str(b.fields.get("text", "I can't help with that."))
        else:
            message["content"] = b.fields.get("text") or None
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["args"]},
                }
                for c in _calls(b)
            ]
            finish = str(b.fields.get("finish_reason") or "tool_calls")
        return message, finish

    def chat_usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def chat_whole(self) -> dict[str, Any]:
        message, finish = self.chat_message()
        return {
            "id": f"chatcmpl-mock-{self.number}",
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": self.chat_usage(),
        }

    def chat_events(self, include_usage: bool) -> Iterator[dict[str, Any]]:
        message, finish = self.chat_message()
        head = {
            "id": f"chatcmpl-mock-{self.number}",
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(message.get("content") or ""):
            yield chunk({"content": piece})
        if message.get("refusal"):
            for piece in _pieces(message["refusal"]):
                yield chunk({"refusal": piece})
        for n, call in enumerate(message.get("tool_calls", [])):
            fn = call["function"]
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": n,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": fn["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(fn["arguments"]):
                yield chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
        yield chunk({}, finish)
        if include_usage:
            yield {**head, "choices": [], "usage": self.chat_usage()}

    # Responses API

    def response_output(self) -> list[dict[str, Any]]:
        b, n = self.b, self.number
        if b.kind == "empty":
            return []
        if b.kind == "refusal":
            content = [
                {"type": "refusal", "refusal": str(b.fields.get("text", "I can't help with that."))}
            ]
            return [_resp_message(n, content)]
        items: list[dict[str, Any]] = []
        text = b.fields.get("text")
        if text:
            items.append(_resp_message(n, [_output_text(str(text))]))
        if b.kind == "tool_call":
            items += [
                {
                    "type": "function_call",
                    "id": f"fc_mock_{n}_{i}",
                    "call_id": c["id"],
                    "name": c["name"],
                    "arguments": c["args"],
                    "status": "completed",
                }
                for i, c in enumerate(_calls(b))
            ]
        return items

    def response_whole(self, status: str = "completed") -> dict[str, Any]:
        incomplete = None
        if self.b.fields.get("finish_reason") == "length":
            status, incomplete = "incomplete", {"reason": "max_output_tokens"}
        return {
            "id": f"resp_mock_{self.number}",
            "object": "response",
            "created_at": self.created,
            "status": status,
            "incomplete_details": incomplete,
            "model": self.model,
            "output": self.response_output(),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": self.prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": self.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": self.prompt_tokens + self.completion_tokens,
            },
        }

    def response_events(self) -> Iterator[dict[str, Any]]:
        whole = self.response_whole()
        started = {**whole, "status": "in_progress", "output": [], "usage": None}
        seq = iter(range(1_000_000))
        yield {"type": "response.created", "sequence_number": next(seq), "response": started}
        for i, item in enumerate(whole["output"]):
            base = {"output_index": i, "item_id": item["id"]}
            if item["type"] == "function_call":
                yield {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                }
                for piece in _pieces(item["arguments"]):
                    yield {
                        "type": "response.function_call_arguments.delta",
                        "sequence_number": next(seq),
                        **base,
                        "delta": piece,
                    }
                yield {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    **base,
                    "arguments": item["arguments"],
                }
            else:
                yield {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item": {**item, "content": [], "status": "in_progress"},
                }
                for c, part in enumerate(item["content"]):
                    if part["type"] == "output_text":
                        for piece in _pieces(part["text"]):
                            yield {
                                "type": "response.output_text.delta",
                                "sequence_number": next(seq),
                                **base,
                                "content_index": c,
                                "delta": piece,
                                "logprobs": [],
                            }
            yield {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": i,
                "item": item,
            }
        done = "response.incomplete" if whole["status"] == "incomplete" else "response.completed"
        yield {"type": done, "sequence_number": next(seq), "response": whole}


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _resp_message(n: int, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_mock_{n}",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


# -- the server -------------------------------------------------------------------------------


@dataclass
class Recorded:
    """One request as the server saw it (never the Authorization value)."""

    index: int | None
    """Arrival number among model requests; None for other paths."""
    method: str
    path: str
    headers: dict[str, str]
    auth: str
    """`missing`, `ok`, `mismatch` (the script has an api_key) or `present` (it has none)."""
    body: Any
    behaviour: str
    """The kind it got, or `unauthorized`, `not-found`, `bad-request`, `models`."""
    at: float = field(default_factory=time.time)

    def as_json(self) -> dict[str, Any]:
        """The record as one JSON object (what `--record` writes per line)."""
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "auth": self.auth,
            "body": self.body,
            "behaviour": self.behaviour,
            "at": self.at,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (its timeout, a kill) is not an error; anything else is."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


class MockServer:
    """The scripted server: `start()`/`stop()` or a context manager; `base_url` while running.

    Thread-safe: each connection is served by its own thread; the request counter, the rules'
    match counters and the record list are guarded by one lock."""

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        record: TextIO | None = None,
    ) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ScriptError(f"host {host}: the mock serves loopback addresses only")
        self.script = script
        self.requests: list[Recorded] = []
        self._host, self._port = host, port
        self._record = record
        self._lock = threading.Lock()
        self._count = 0
        self._matched = [0] * len(script.rules)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT/v1`, what a client's base URL is set to."""
        if self._server is None:
            raise RuntimeError("the mock server is not running")
        host = self._host if ":" not in self._host else f"[{self._host}]"
        return f"http://{host}:{self._server.server_address[1]}/v1"

    def start(self) -> MockServer:
        """Bind and serve in a daemon thread; returns self."""
        mock = self

        class Handler(_Handler):
            server_mock = mock

        server_class = _Server6 if ":" in self._host else _Server
        self._server = server_class((self._host, self._port), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="mock-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging answers, stop serving, close the socket."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def model_requests(self) -> list[Recorded]:
        """The recorded model requests (chat and responses), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.index is not None]

    def choose(self, prompt: str, body: Any = None) -> tuple[int, Behaviour]:
        """Number the request and pick its behaviour (first matching rule, else default).

        `body` is the parsed request: a subclass may answer from it (the tools it offers)."""
        with self._lock:
            index = self._count
            self._count += 1
            for n, rule in enumerate(self.script.rules):
                if rule.matches(index, prompt):
                    k = self._matched[n]
                    self._matched[n] += 1
                    return index, rule.answers[min(k, len(rule.answers) - 1)]
        return index, self.script.default

    def keep(self, rec: Recorded) -> None:
        """Record one request (and write it to the record file)."""
        with self._lock:
            self.requests.append(rec)
            if self._record is not None:
                self._record.write(json.dumps(rec.as_json(), ensure_ascii=False) + "\n")
                self._record.flush()

    def hang(self, seconds: float | None) -> None:
        """Block until `seconds` pass or the server stops."""
        self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """TCP_NODELAY: an answer's headers and body must not wait for the client's ACK."""
    server_mock: MockServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        """Quiet: the records say what came."""

    # plumbing

    def _send(
        self, status: int, body: bytes, ctype: str, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _error(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
            status, "server_error"
        )
        self._json(status, {"error": {"message": message, "type": kind, "code": None}}, headers)

    def _stream(self, events: Iterator[Any], named: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            if isinstance(event, str):
                data = f"data: {event}\n\n"
            elif named:
                data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            else:
                data = f"data: {json.dumps(event)}\n\n"
            raw = data.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _auth(self) -> str:
        value = self.headers.get("Authorization")
        expected = self.server_mock.script.api_key
        if value is None:
            return "missing"
        if expected is None:
            return "present"
        return "ok" if value == f"Bearer {expected}" else "mismatch"

    def _headers(self) -> dict[str, str]:
        return {k: v for k, v in self.headers.items() if k.lower() != "authorization"}

    # verbs

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        mock = self.server_mock
        auth = self._auth()
        found = self.path.split("?", 1)[0].rstrip("/").endswith("/models")
        mock.keep(
            Recorded(
                None,
                "GET",
                self.path,
                self._headers(),
                auth,
                None,
                "models" if found else "not-found",
            )
        )
        if not found:
            self._error(404, f"no route {self.path}")
            return
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "mock"}
            for m in mock.script.models
        ]
        self._json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        mock = self.server_mock
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        api, auth = _api(self.path), self._auth()
        try:
            body: Any = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = raw.decode("utf-8", "backslashreplace")
        if api is None:
            mock.keep(Recorded(None, "POST", self.path, self._headers(), auth, body, "not-found"))
            self._error(404, f"no route {self.path}")
            return
        prompt = prompt_text(body)
        index, b = mock.choose(prompt, body)
        if auth in ("missing", "mismatch"):
            mock.keep(
                Recorded(index, "POST", self.path, self._headers(), auth, body, "unauthorized")
            )
            self._error(401, "Incorrect API key provided.")
            return
        if not isinstance(body, dict):
            mock.keep(
                Recorded(index, "POST", self.path, self._headers(), auth, body, "bad-request")
            )
            self._error(400, "the request body is not a JSON object")
            return
        mock.keep(Recorded(index, "POST", self.path, self._headers(), auth, body, b.kind))
        self._behave(b, api, body, index, prompt)

    def _behave(
        self, b: Behaviour, api: str, body: dict[str, Any], index: int, prompt: str
    ) -> None:
        mock = self.server_mock
        if b.kind == "status":
            headers: list[tuple[str, str]] = []
            after = b.fields.get("retry_after")
            if after is not None:
                headers += [
                    ("Retry-After", f"{after:g}"),
                    ("retry-after-ms", str(int(after * 1000))),
                ]
            status = int(b.fields["status"])
            self._error(status, str(b.fields.get("message", f"scripted status {status}")), headers)
            return
        if b.kind == "hang":
            mock.hang(b.fields.get("seconds"))
            self.close_connection = True
            return
        stream = body.get("stream") is True
        if b.kind == "malformed":
            text = str(b.fields.get("body", MALFORMED_BODY))
            if stream:
                self._stream(iter([text]), named=False)
            else:
                self._send(200, text.encode(), "application/json")
            return
        delay = b.fields.get("delay")
        if delay:
            mock.hang(float(delay))
        answer = _Answer(b, api, str(body.get("model", "mock")), index, prompt)
        if api == "chat":
            if stream:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(_then_done(answer.chat_events(usage)), named=False)
            else:
                self._json(200, answer.chat_whole())
        elif stream:
            self._stream(answer.response_events(), named=True)
        else:
            self._json(200, answer.response_whole())


def _then_done(events: Iterator[dict[str, Any]]) -> Iterator[Any]:
    yield from events
    yield "[DONE]"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m boundary_audit.llm.mock_server --script FILE [--port N] [--record FILE]`.

    Prints `listening on BASE_URL` on stdout once it serves, then serves until SIGINT/SIGTERM.
    A bad script is one line on stderr and exit 4 (the project's "invalid data file")."""
    parser = argparse.ArgumentParser(prog="python -m boundary_audit.llm.mock_server")
    parser.add_argument("--script", required=True, type=Path, help="the script (JSON)")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--record", type=Path, help="append every request as a JSON line")
    args = parser.parse_args(argv)
    try:
        script = Script.load(args.script)
        record = args.record.open("a", encoding="utf-8") if args.record else None
        server = MockServer(script, host=args.host, port=args.port, record=record)
        server.start()
    except (ScriptError, OSError) as exc:
        sys.stderr.write(f"mock_server: error: {exc}\n")
        return 4
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"listening on {server.base_url}", flush=True)
    while not stop.wait(0.5):
        pass
    server.stop()
    if record is not None:
        record.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
