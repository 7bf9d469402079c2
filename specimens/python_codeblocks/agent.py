"""A code-executor agent (in the style of AutoGen): fenced blocks from the model's markdown
are written to files in a work directory and run by their interpreter with a timeout."""

from __future__ import annotations

import re
import subprocess
from hashlib import sha256
from pathlib import Path

from openai import OpenAI

BLOCK = re.compile(r"```(?:\s*(python|sh))\n([\s\S]*?)```", re.IGNORECASE)
INTERPRETER = {"python": "python3", "sh": "sh"}


def execute_blocks(markdown: str, work_dir: Path) -> list[str]:
    outputs = []
    for lang, code in BLOCK.findall(markdown):
        filename = f"tmp_code_{sha256(code.encode()).hexdigest()}.{lang}"
        path = work_dir / filename
        path.write_text(code, encoding="utf-8")
        command = ["timeout", "60", INTERPRETER[lang.lower()], filename]
        done = subprocess.run(command, cwd=work_dir, capture_output=True, text=True)
        outputs.append(done.stdout + done.stderr)
        if done.returncode != 0:
            break
    return outputs


def chat(task: str, work_dir: Path) -> None:
    client = OpenAI()
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    execute_blocks(reply.choices[0].message.content or "", work_dir)
