"""The scripted OpenAI-compatible mock server (`boundary_audit.llm.mock_server`) as a fixture.

    def test_x(mock_llm):
        server = mock_llm({"api_key": KEY, "rules": [for_task("write-file-t3", text_reply("ls"))]})
        server.base_url                      # http://127.0.0.1:PORT/v1, serving until teardown
        server.model_requests()              # what it got

The server runs in threads of the test process (so a `generate` subprocess can be killed
while it keeps serving) and is stopped at teardown, hanging answers released.
`for_task(id, behaviour)` is a rule for the requests of one task: the prompt holds its
instruction, never its id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest

from boundary_audit.llm.mock_server import MockServer, Script
from boundary_audit.tasks import load_tasks

KEY = "sk-test-Zq8rTw1VbN4mXc7Ky2Lp"
"""The key the tests give `generate`; no output may hold it, whole or in part."""


@cache
def _instructions() -> dict[str, str]:
    return {t.id: t.instruction for t in load_tasks("all")}


def instruction(task_id: str) -> str:
    """The instruction of `task_id`, as the prompt carries it."""
    return _instructions()[task_id]


def for_task(task_id: str, behaviour: dict[str, Any] | None = None, **rule: Any) -> dict[str, Any]:
    """A script rule matching the requests of `task_id` (by its instruction)."""
    out: dict[str, Any] = {"contains": instruction(task_id), **rule}
    if behaviour is not None:
        out["reply"] = behaviour
    return out


def text_reply(command: str, lang: str = "bash") -> dict[str, Any]:
    """A text answer holding `command` in one fenced block, with some prose around it."""
    return {"kind": "text", "text": f"Here is the command:\n```{lang}\n{command}\n```\nDone."}


@pytest.fixture
def mock_llm() -> Iterator[Callable[[dict[str, Any]], MockServer]]:
    """A factory: `mock_llm(script)` starts a server for this test (stopped at teardown)."""
    servers: list[MockServer] = []

    def start(script: dict[str, Any]) -> MockServer:
        server = MockServer(Script.from_json(script)).start()
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()
