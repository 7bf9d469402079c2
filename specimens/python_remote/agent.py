"""An agent whose `bash` tool runs on a remote build host over ssh (one remote parse)."""

from __future__ import annotations

import json
import subprocess

from openai import OpenAI

HOST = "build.internal"
TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]


def remote_bash(command: str) -> str:
    done = subprocess.run(["ssh", "-o", "BatchMode=yes", HOST, command], capture_output=True, text=True)
    return done.stdout + done.stderr


def step(messages: list[dict]) -> list[dict]:
    response = OpenAI().chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
    results = []
    for call in response.choices[0].message.tool_calls or []:
        args = json.loads(call.function.arguments)
        results.append({"role": "tool", "tool_call_id": call.id, "content": remote_bash(args["command"])})
    return results
