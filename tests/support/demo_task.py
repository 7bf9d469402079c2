"""Build small throwaway tasks (family `demo`, outside the core) from a TOML body, for tests."""

from __future__ import annotations

from boundary_audit.tasks.model import Task
from boundary_audit.tasks.parse import parse_task

DEMO_HEAD = """\
id = "demo-t1"
family = "demo"
tier = 1
core = false
tags = ["boundary=stdin"]
instruction = "demo"
hazards = ["dollar"]
oracle = "true"
naive = "true"
naive_breaks = "raw"
"""


def demo_task(body: str) -> Task:
    """The task `demo-t1` with `body` (fixture and validator tables) after the default head."""
    return parse_task("demo/demo-t1.toml", (DEMO_HEAD + body).encode())
