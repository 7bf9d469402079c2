"""An agent that runs commands inside a container by re-quoting them into `sh -c "..."`.

The tool's command is interpolated between double quotes of a string that the local shell
parses, and `sh -c` inside the container parses the result again: two parses.
"""

from __future__ import annotations

import json
import subprocess

from openai import OpenAI

CONTAINER = "agent-sandbox"


def run_in_container(command: str) -> str:
    line = f'docker exec {CONTAINER} sh -c "{command}"'
    done = subprocess.run(line, shell=True, capture_output=True, text=True)
    return done.stdout


def handle(response) -> list[str]:
    outputs = []
    for call in response.choices[0].message.tool_calls or []:
        if call.function.name == "shell":
            outputs.append(run_in_container(json.loads(call.function.arguments)["command"]))
    return outputs


def main() -> None:
    client = OpenAI()
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "ls"}])
    print(handle(response))
