"""A mock OpenAI Responses API on 127.0.0.1 that replays one reply R as a model's tool call.

Standalone on purpose (stdlib only): the Codex driver (`drive_codex.py`) starts it inside the
sandbox, in the same network namespace as the Codex CLI it points at it, so nothing but
loopback is ever reached. One model turn, as the Responses API streams it (server-sent
events, `text/event-stream`):

1. The first `POST .../responses` carries Codex's instructions and the tools it offers. The
   mock answers `response.created`, one `response.output_item.done` whose item is a
   `function_call` of the shell tool with R as its command, and `response.completed`. The tool
   is `exec_command` with arguments `{"cmd": R}` when the request offers it (Codex 0.171.0
   does for every model), else `shell_command` with `{"command": R}`; `tool=` forces one.
   Arguments are serialised with `json.dumps`, as a model's decoded call would be.
2. Codex runs R and sends the conversation back with a `function_call_output` item for that
   call id: the mock records its `output` (what the model would be shown) and ends the turn
   with an assistant message, so `codex exec` exits.

Every request body is kept (`requests`), so a test can read exactly what Codex sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALL_ID = "call_boundary_audit"
SHELL_TOOLS = {"exec_command": "cmd", "shell_command": "command"}
"""Codex's string shell tools and the argument that carries the command."""
FINAL_TEXT = "done"


def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events as the Responses API streams them: `event:` + `data:` per event."""
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode()
        for e in events
    )


def turn(response_id: str, item: dict[str, Any]) -> bytes:
    """One streamed response whose only output item is `item`."""
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return sse(
        [
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ]
    )


class MockResponses:
    """The server and what it saw; use as a context manager (`url` while inside)."""

    def __init__(
        self,
        reply: str,
        *,
        tool: str = "offered",
        extra: dict | None = None,
        before_call: Callable[[], str | None] | None = None,
    ) -> None:
        if tool != "offered" and tool not in SHELL_TOOLS:
            raise ValueError(f"tool must be offered, {' or '.join(SHELL_TOOLS)}: {tool!r}")
        self.reply = reply
        self.tool = tool
        self.extra = dict(extra or {})
        """More function-call arguments (e.g. `yield_time_ms`), after the command."""
        self.requests: list[dict[str, Any]] = []
        self.offered: list[str] = []
        self.call: dict[str, Any] | None = None
        self.output: str | None = None
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._before_call = before_call
        """Called (outside the lock) before the function call is sent; a string is a problem."""

    @property
    def url(self) -> str:
        """The base URL Codex's provider points at (`.../v1`)."""
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> MockResponses:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                status, payload, kind = mock.answer(self.path, self.headers, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802
                payload = b'{"error":{"message":"not served by the mock"}}'
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                """Quiet: the driver's stdout carries its result."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, path: str, headers: Any, body: bytes) -> tuple[int, bytes, str]:
        """(status, body, content type) for one POST; records what Codex sent."""
        if not path.rstrip("/").endswith("/responses"):
            return 404, b'{"error":{"message":"unknown path"}}', "application/json"
        encoding = headers.get("Content-Encoding")
        if encoding not in (None, "", "identity"):
            self.problems.append(f"request body encoded as {encoding}: not readable")
            return 400, b'{"error":{"message":"encoded body"}}', "application/json"
        try:
            request = json.loads(body)
        except ValueError:
            self.problems.append("a request body was not JSON")
            return 400, b'{"error":{"message":"not JSON"}}', "application/json"
        if self._before_call is not None and _call_output(request) is None and self.call is None:
            problem = self._before_call()
            if problem:
                self.problems.append(problem)
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            output = _call_output(request)
            if output is not None:
                self.output = output
                item = _message(FINAL_TEXT)
            elif self.call is None:
                self.offered = [str(t.get("name")) for t in request.get("tools", []) if "name" in t]
                self.call = self._function_call()
                item = self.call
            else:
                self.problems.append(f"request {number} carried no output for the call")
                item = _message(FINAL_TEXT)
        return 200, turn(f"resp_{number}", item), "text/event-stream"

    def _function_call(self) -> dict[str, Any]:
        name = self.tool
        if name == "offered":
            name = "exec_command" if "exec_command" in self.offered else "shell_command"
        arguments = {SHELL_TOOLS[name]: self.reply, **self.extra}
        return {
            "type": "function_call",
            "id": "fc_boundary_audit",
            "call_id": CALL_ID,
            "name": name,
            "arguments": json.dumps(arguments),
        }


def _call_output(request: dict[str, Any]) -> str | None:
    for item in request.get("input", []):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            if item.get("call_id") == CALL_ID:
                output = item.get("output")
                return output if isinstance(output, str) else json.dumps(output)
    return None


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_boundary_audit",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
