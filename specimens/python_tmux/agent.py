"""A terminal agent that types keystrokes into tmux (in the style of Terminal-Bench agents).

The model answers with JSON: {"commands": [{"keystrokes": "...", "duration": 1.0}]}; each
keystrokes string is sent with `tmux send-keys` into an interactive bash pane.
"""

from __future__ import annotations

import json
import subprocess
import time

from litellm import completion

SESSION = "specimen"


def send_keys(keys: list[str]) -> None:
    subprocess.run(["tmux", "send-keys", "-t", SESSION, *keys], check=False)


def capture() -> str:
    done = subprocess.run(["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True)
    return done.stdout


def loop(instruction: str) -> None:
    subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", "160", "-y", "40"], check=True)
    screen = capture()
    for _ in range(20):
        response = completion(model="gpt-4o", messages=[{"role": "user", "content": instruction + screen}])
        parsed = json.loads(response.choices[0].message.content)
        for command in parsed["commands"]:
            send_keys([command["keystrokes"]])
            time.sleep(float(command.get("duration", 1.0)))
        screen = capture()
