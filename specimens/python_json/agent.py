"""An agent that forwards commands to a sandbox daemon as JSON lines built by hand."""

from __future__ import annotations

import subprocess

from mistralai import Mistral

DAEMON = ["sandboxd", "--stdio"]


class Sandbox:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(DAEMON, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, action: str) -> str:
        request = '{"op": "exec", "cmd": "' + action + '"}\n'
        self.proc.stdin.write(request)
        self.proc.stdin.flush()
        return self.proc.stdout.readline()


def loop(task: str) -> None:
    client = Mistral(api_key="…")
    sandbox = Sandbox()
    reply = client.chat.complete(model="mistral-large", messages=[{"role": "user", "content": task}])
    sandbox.run(reply.choices[0].message.content)
