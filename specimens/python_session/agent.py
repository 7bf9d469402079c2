"""A thought/action agent with a persistent interactive bash (in the style of SWE-agent).

The model writes a thought and one fenced action; the last fenced block is the action, which
is typed into a long-lived bash driven by pexpect, and the prompt marker ends the command.
"""

from __future__ import annotations

import re

import pexpect
from openai import OpenAI

PS1 = "__SPECIMEN_PS1__"
FENCE = re.compile(r"```(?:bash)?\n(.*?)```", re.S)


class Step:
    def __init__(self, thought: str, action: str) -> None:
        self.thought = thought
        self.action = action


def parse_actions(output: str) -> Step:
    blocks = FENCE.findall(output)
    return Step(output.split("```", 1)[0].strip(), blocks[-1].strip() if blocks else "")


class Session:
    def __init__(self) -> None:
        self.shell = pexpect.spawn("/bin/bash", ["--norc"], echo=False, encoding="utf-8")
        self.shell.sendline(f"export PS1={PS1}; export PS2=")
        self.shell.expect(PS1)

    def communicate(self, step: Step, timeout: int = 30) -> str:
        self.shell.sendline(step.action)
        self.shell.expect(PS1, timeout=timeout)
        return self.shell.before


def run(task: str, max_steps: int = 10) -> None:
    client = OpenAI()
    session = Session()
    history = [{"role": "user", "content": task}]
    for _ in range(max_steps):
        reply = client.chat.completions.create(model="gpt-4o", messages=history)
        output = reply.choices[0].message.content or ""
        step = parse_actions(output)
        if step.action == "exit":
            break
        observation = session.communicate(step)
        history += [{"role": "assistant", "content": output}, {"role": "user", "content": observation}]
