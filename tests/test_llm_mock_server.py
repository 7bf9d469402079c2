"""The scripted mock server: each behaviour's bytes on the wire, rules, records, its CLI.

Requests go over real sockets to the server on 127.0.0.1, with http.client (to see the exact
bytes) and with the official openai client (to see that it parses what the mock sends).
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from boundary_audit.llm.mock_server import MALFORMED_BODY, MockServer, Script, ScriptError
from tests.support.llm_mock import KEY


def post(
    server: MockServer, path: str, body: Any, key: str | None = KEY, timeout: float = 5.0
) -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    conn.request("POST", url.path + path, json.dumps(body), headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def chat(content: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m1", "messages": [{"role": "user", "content": content}], **extra}


def events(data: bytes) -> list[str]:
    return [line[6:] for line in data.decode().split("\n") if line.startswith("data: ")]


def test_text_answer_whole_and_streamed(mock_llm: Any) -> None:
    server = mock_llm({"default": {"kind": "text", "text": "```bash\nls -l\n```"}})
    status, headers, data = post(server, "/chat/completions", chat("x" * 40))
    assert status == 200 and headers["content-type"] == "application/json"
    doc = json.loads(data)
    assert doc["object"] == "chat.completion" and doc["model"] == "m1"
    assert doc["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "```bash\nls -l\n```", "refusal": None},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ]
    assert doc["usage"] == {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}

    status, headers, data = post(
        server, "/chat/completions", chat("y", stream=True, stream_options={"include_usage": True})
    )
    assert headers["content-type"] == "text/event-stream"
    chunks = events(data)
    assert chunks[-1] == "[DONE]"
    parsed = [json.loads(c) for c in chunks[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in parsed if c["choices"])
    assert text == "```bash\nls -l\n```"
    assert parsed[-2]["choices"][0]["finish_reason"] == "stop"
    assert parsed[-1]["choices"] == [] and parsed[-1]["usage"]["completion_tokens"] == 4
    # without include_usage, no usage chunk
    _, _, data = post(server, "/chat/completions", chat("y", stream=True))
    assert all(json.loads(c)["choices"] for c in events(data)[:-1])


def test_tool_calls_in_both_apis_parse_with_the_official_client(mock_llm: Any) -> None:
    server = mock_llm(
        {
            "api_key": KEY,
            "default": {"kind": "tool_call", "arguments": {"command": "printf '%s' \"a b\""}},
        }
    )
    client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "t"}])
    call = r.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert r.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == (  # type: ignore[union-attr]
        "bash",
        {"command": "printf '%s' \"a b\""},
    )
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "t"}], stream=True
    )
    args = "".join(
        tc.function.arguments or ""
        for chunk in stream
        for tc in (chunk.choices[0].delta.tool_calls or [] if chunk.choices else [])
        if tc.function is not None
    )
    assert json.loads(args) == {"command": "printf '%s' \"a b\""}
    resp = client.responses.create(model="m", input="t")
    assert [(o.type, o.name, o.arguments) for o in resp.output] == [  # type: ignore[union-attr]
        ("function_call", "bash", '{"command": "printf \'%s\' \\"a b\\""}')
    ]
    kinds = [e.type for e in client.responses.create(model="m", input="t", stream=True)]
    assert kinds == [
        "response.created",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 3,  # 36 characters, 16 per delta
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]


def test_status_with_retry_after_then_the_sequence_goes_on(mock_llm: Any) -> None:
    server = mock_llm(
        {
            "rules": [
                {
                    "contains": "K1",
                    "sequence": [
                        {"kind": "status", "status": 429, "retry_after": 1.5},
                        {"kind": "text", "text": "ok"},
                    ],
                }
            ]
        }
    )
    status, headers, data = post(server, "/chat/completions", chat("a K1 b"))
    assert status == 429
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("1.5", "1500")
    assert json.loads(data)["error"]["type"] == "rate_limit_exceeded"
    for _ in range(2):  # the last entry repeats
        status, _, data = post(server, "/chat/completions", chat("K1"))
        assert status == 200 and json.loads(data)["choices"][0]["message"]["content"] == "ok"
    # a request the rule does not match gets the default: an empty text answer
    _, _, data = post(server, "/chat/completions", chat("other"))
    assert json.loads(data)["choices"][0]["message"]["content"] == ""


def test_contains_a_list_needs_every_text(mock_llm: Any) -> None:
    server = mock_llm(
        {"rules": [{"contains": ["alpha", "beta"], "reply": {"kind": "text", "text": "both"}}]}
    )
    answers = []
    for prompt in ("alpha beta", "alpha", "beta gamma"):
        _, _, data = post(server, "/chat/completions", chat(prompt))
        answers.append(json.loads(data)["choices"][0]["message"]["content"])
    assert answers == ["both", "", ""]
    with pytest.raises(ScriptError, match=r"rules\[0\]\.contains: expected a non-empty string"):
        Script.from_json({"rules": [{"contains": [], "reply": {"kind": "empty"}}]})


def test_index_rules_malformed_empty_refusal(mock_llm: Any) -> None:
    server = mock_llm(
        {
            "rules": [
                {"index": 0, "reply": {"kind": "malformed"}},
                {"index": [1, 2], "reply": {"kind": "refusal", "text": "I won't."}},
                {"index": 3, "reply": {"kind": "empty"}},
                {"index": 4, "reply": {"kind": "status", "status": 500}},
            ]
        }
    )
    status, headers, data = post(server, "/chat/completions", chat("q"))
    assert (status, headers["content-type"], data) == (
        200,
        "application/json",
        MALFORMED_BODY.encode(),
    )
    _, _, data = post(server, "/chat/completions", chat("q"))
    assert json.loads(data)["choices"][0]["message"] == {
        "role": "assistant",
        "content": None,
        "refusal": "I won't.",
    }
    _, _, data = post(server, "/responses", {"model": "m", "input": "q"})
    assert json.loads(data)["output"][0]["content"] == [{"type": "refusal", "refusal": "I won't."}]
    _, _, data = post(server, "/responses", {"model": "m", "input": "q"})
    assert json.loads(data)["output"] == []
    status, _, data = post(server, "/chat/completions", chat("q"))
    assert status == 500 and json.loads(data)["error"]["message"] == "scripted status 500"
    assert [r.behaviour for r in server.model_requests()] == [
        "malformed",
        "refusal",
        "refusal",
        "empty",
        "status",
    ]


def test_hang_holds_until_the_client_gives_up_and_stop_releases_it(mock_llm: Any) -> None:
    server = mock_llm({"default": {"kind": "hang"}})
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        post(server, "/chat/completions", chat("q"), timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 2.0
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2.0


def test_records_every_request_but_never_the_authorization_value(mock_llm: Any) -> None:
    server = mock_llm({"api_key": KEY, "default": {"kind": "text", "text": "t"}})
    assert post(server, "/chat/completions", chat("a"), key=None)[0] == 401
    assert post(server, "/chat/completions", chat("b"), key="sk-wrong")[0] == 401
    assert post(server, "/chat/completions", chat("c"))[0] == 200
    assert post(server, "/nowhere", {})[0] == 404
    recs = server.requests
    assert [(r.index, r.auth, r.behaviour) for r in recs] == [
        (0, "missing", "unauthorized"),
        (1, "mismatch", "unauthorized"),
        (2, "ok", "text"),
        (None, "ok", "not-found"),
    ]
    assert recs[2].body == chat("c")
    assert all("authorization" not in {k.lower() for k in r.headers} for r in recs)
    dumped = json.dumps([r.as_json() for r in recs])
    assert KEY not in dumped and "sk-wrong" not in dumped


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ({"default": {"kind": "shout"}}, "default.kind: 'shout' is not one of text, tool_call"),
        ({"rules": [{"reply": {"kind": "empty"}}]}, "rules[0]: give `index` or `contains`"),
        (
            {"rules": [{"index": 0, "sequence": [{"kind": "status"}]}]},
            "rules[0].sequence[0].status: expected an HTTP status code",
        ),
        ({"default": {"kind": "text", "txt": "x"}}, "default: unknown field 'txt' for kind 'text'"),
        ({"rulez": []}, "script: unknown field 'rulez'"),
    ],
)
def test_bad_scripts_name_the_place(script: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError) as err:
        Script.from_json(script)
    assert str(err.value).startswith(message)


def test_loopback_only() -> None:
    with pytest.raises(ScriptError, match="loopback addresses only"):
        MockServer(Script(), host="0.0.0.0")


def test_command_line_serves_records_and_rejects_bad_scripts(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": {"kind": "text", "text": "hello"}}))
    record = tmp_path / "rec.jsonl"
    cmd = [sys.executable, "-m", "boundary_audit.llm.mock_server", "--script", str(script)]
    proc = subprocess.Popen([*cmd, "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:") and line.endswith("/v1\n")
        client = openai.OpenAI(api_key=KEY, base_url=line.split()[-1], max_retries=0)
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert r.choices[0].message.content == "hello"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    (rec,) = [json.loads(x) for x in record.read_text().splitlines()]
    assert (rec["index"], rec["auth"], rec["behaviour"], rec["path"]) == (
        0,
        "present",
        "text",
        "/v1/chat/completions",
    )
    assert KEY not in record.read_text()
    script.write_text("{")
    bad = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 4
    assert bad.stderr.startswith(f"mock_server: error: {script}: not JSON:")
    assert bad.stderr.count("\n") == 1
