"""The observed harness's model: which tool a reply goes through, in which shape, what comes back.

Unit tests of `observe/model.py` (no sandbox): the shell tool found by `tools.toml` in the
tools real agent CLIs offer (Codex's `exec_command {cmd}`, opencode's `bash {command,
description}`, Continue's `Bash`), arguments filled by type, argv-array tools never chosen;
the conversation's shapes (tool calls, fenced blocks, side requests after a tool call, the
final text), a refused request giving its reply back; and the outputs read from the next
requests. One test runs the server for real on 127.0.0.1 and reads its records back.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from boundary_audit.observe.model import (
    FINAL_TEXT,
    Answer,
    Conversation,
    ConversationServer,
    offered_tools,
    outputs,
    shell_tool,
)


def chat_tool(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": params}}


def resp_tool(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "name": name, "parameters": params}


CODEX = [
    resp_tool("exec_command", {"cmd": {"type": "string"}, "yield_time_ms": {"type": "number"}},
              ["cmd"]),
    resp_tool("write_stdin", {"session_id": {"type": "number"}, "chars": {"type": "string"}},
              ["session_id"]),
    {"type": "custom", "name": "apply_patch"},
]  # fmt: skip
OPENCODE = [
    chat_tool("read", {"filePath": {"type": "string"}}, ["filePath"]),
    chat_tool(
        "bash",
        {"command": {"type": "string"}, "timeout": {"type": "number"},
         "description": {"type": "string"}},
        ["command", "description"],
    ),
]  # fmt: skip


def test_codex_exec_command_carries_the_reply_in_cmd() -> None:
    tool = shell_tool(offered_tools({"tools": CODEX}))
    assert tool is not None
    assert (tool.name, tool.argument, dict(tool.filled)) == ("exec_command", "cmd", {})
    assert tool.arguments("ls -l") == {"cmd": "ls -l"}


def test_required_properties_are_filled_by_type_and_optional_ones_left_out() -> None:
    tool = shell_tool(offered_tools({"tools": OPENCODE}))
    assert tool is not None
    assert tool.arguments("echo hi") == {"command": "echo hi", "description": "Run the command."}


def test_a_schema_default_wins_and_names_are_matched_without_case() -> None:
    props = {"command": {"type": "string"}, "timeout": {"type": "integer", "default": 120},
             "background": {"type": "boolean"}}  # fmt: skip
    tool = shell_tool(
        offered_tools({"tools": [chat_tool("Bash", props, ["timeout", "background"])]})
    )
    assert tool is not None
    assert tool.arguments("x") == {"command": "x", "timeout": 120, "background": False}


def test_an_argv_array_tool_is_never_chosen_and_a_named_tool_wins_over_another() -> None:
    argv_only = [chat_tool("shell", {"command": {"type": "array", "items": {"type": "string"}}},
                           ["command"])]  # fmt: skip
    assert shell_tool(offered_tools({"tools": argv_only})) is None
    string = {"command": {"type": "string"}}
    both = [
        chat_tool("git", string, ["command"]),
        chat_tool("run_shell_command", string, ["command"]),
    ]
    tool = shell_tool(offered_tools({"tools": both}))
    assert tool is not None and tool.name == "run_shell_command"
    unnamed = [chat_tool("git", {"command": {"type": "string"}}, ["command"])]
    tool = shell_tool(offered_tools({"tools": unnamed}))
    assert tool is not None and tool.name == "git"


def test_auto_answers_tool_requests_with_calls_then_the_final_text() -> None:
    conv = Conversation(["echo a", "echo b"])
    body = {"input": [], "tools": CODEX}
    a0, b0 = conv.answer(0, "responses", body)
    a1, b1 = conv.answer(1, "responses", body)
    a2, b2 = conv.answer(2, "responses", body)
    assert (a0.shape, a0.reply, a0.tool, a0.call_id) == ("tool", 0, "exec_command", "call_ba_0")
    assert b0.kind == "tool_call" and dict(b0.fields) == {
        "name": "exec_command", "id": "call_ba_0", "arguments": {"cmd": "echo a"}}  # fmt: skip
    assert (a1.reply, b1.fields["arguments"]) == (1, {"cmd": "echo b"})
    assert (a2.shape, a2.reply, a2.why, b2.fields["text"]) == (
        "final", None, "the replies are used up", FINAL_TEXT)  # fmt: skip


def test_auto_sends_a_fenced_block_without_tools_but_not_to_a_side_request() -> None:
    raw = Conversation(["printf x"])
    a, b = raw.answer(0, "chat", {"messages": []})
    assert (a.shape, b.kind, b.fields["text"]) == ("fenced", "text", "```bash\nprintf x\n```")
    native = Conversation(["echo a", "echo b"])
    native.answer(0, "chat", {"messages": [], "tools": OPENCODE})
    side, text = native.answer(1, "chat", {"messages": [{"role": "user", "content": "title?"}]})
    assert (side.shape, side.reply, text.fields["text"]) == ("final", None, FINAL_TEXT)
    assert side.why == "a side request without tools, after a tool call"
    nxt, _ = native.answer(2, "chat", {"messages": [], "tools": OPENCODE})
    assert (nxt.shape, nxt.reply) == ("tool", 1)


def test_shape_tool_gives_a_tool_less_request_the_final_text_and_keeps_the_reply() -> None:
    conv = Conversation(["echo a"], shape="tool")
    title, _ = conv.answer(0, "chat", {"messages": []})
    assert (title.shape, title.why) == (
        "final",
        "no offered tool takes a command string (no tools offered)",
    )
    main, _ = conv.answer(1, "chat", {"messages": [], "tools": OPENCODE})
    assert (main.shape, main.reply) == ("tool", 0)


def test_a_refused_request_gives_its_reply_to_the_next_one() -> None:
    conv = Conversation(["echo a"])
    conv.answer(0, "chat", {"messages": [], "tools": OPENCODE})
    conv.give_back(0)
    again, _ = conv.answer(1, "chat", {"messages": [], "tools": OPENCODE})
    assert (again.reply, again.call_id) == (0, "call_ba_0")


def test_outputs_are_the_tool_results_and_the_next_user_message() -> None:
    answers = [Answer(0, "chat", "tool", 0, "bash", "call_ba_0"),
               Answer(1, "responses", "tool", 1, "exec_command", "call_ba_1"),
               Answer(2, "chat", "fenced", 2)]  # fmt: skip
    bodies = {
        1: {"messages": [{"role": "tool", "tool_call_id": "call_ba_0",
                          "content": [{"type": "text", "text": "out-0"}]}]},
        2: {"input": [{"type": "function_call_output", "call_id": "call_ba_1", "output": "out-1"}]},
        3: {"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": ""},
                         {"role": "user", "content": "out-2"}]},
    }  # fmt: skip
    assert outputs(answers, bodies, 4) == ["out-0", "out-1", "out-2", None]


def test_the_server_answers_over_http_and_records_what_it_did(tmp_path: Any) -> None:
    answers_file = (tmp_path / "answers.jsonl").open("w")
    server = ConversationServer(
        Conversation(["echo 'a b'", "echo c"]), answers=answers_file
    ).start()
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": OPENCODE}
        request = urllib.request.Request(
            server.base_url + "/chat/completions", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as r:
            message = json.load(r)["choices"][0]["message"]
        call = message["tool_calls"][0]
        assert (call["id"], call["function"]["name"]) == ("call_ba_0", "bash")
        assert json.loads(call["function"]["arguments"]) == {
            "command": "echo 'a b'", "description": "Run the command."}  # fmt: skip
        missing = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            urllib.request.urlopen(missing, timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code == 401
        else:
            raise AssertionError("a request without a key must get 401")
    finally:
        server.stop()
        answers_file.close()
    lines = [json.loads(x) for x in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert [(x["request"], x["shape"], x["reply"]) for x in lines] == [
        (0, "tool", 0), (1, "tool", 1), (1, "refused", None)]  # fmt: skip
    assert lines[2]["why"] == "unauthorized"
    assert server.conversation.sent == 1  # reply 1 goes to the next request
    assert [(a.request, a.shape) for a in server.answers] == [(0, "tool"), (1, "refused")]
