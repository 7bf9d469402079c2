"""An agent that pipes each model reply into a fresh `sh` (one-shot shell on stdin)."""

from __future__ import annotations

import subprocess

import anthropic


def execute(script: str) -> str:
    proc = subprocess.Popen(["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(input=script, timeout=60)
    return out


def main(task: str) -> None:
    client = anthropic.Anthropic()
    messages = [{"role": "user", "content": f"Reply with a POSIX sh script only. Task: {task}"}]
    for _ in range(5):
        message = client.messages.create(model="claude-sonnet", max_tokens=1024, messages=messages)
        script = message.content[0].text
        result = execute(script)
        messages += [{"role": "assistant", "content": script}, {"role": "user", "content": result}]
