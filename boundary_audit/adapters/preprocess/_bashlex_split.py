"""SWE-ReX's `_split_bash_command` on bashlex, importable and runnable as a script.

As a module it is `split_commands`, used in process for short texts. bashlex's cost grows
faster than the length of its input (400 KB of `a;` take ~20 s) and a thread cannot be
stopped, so a longer text is split by this file run as a script in a child Python that the
run's deadline can kill (`swe_agent.BashlexSplit`): the text on stdin, one JSON object on
stdout, `{"commands": [...]}` or `{"error": "<exception type>"}`. It imports only bashlex,
so the child starts in about a tenth of a second.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import bashlex  # type: ignore[import-untyped]


def split_commands(text: str) -> list[str]:
    """`_split_bash_command`: the source span of each top-level bashlex node.

    Raises whatever bashlex raises (ParsingError, NotImplementedError, TypeError...).
    """
    text = text.strip()
    if not text or all(line.strip().startswith("#") for line in text.splitlines()):
        return []
    return [text[start:end] for start, end in (_span(node) for node in bashlex.parse(text))]


def _span(node: Any) -> tuple[int, int]:
    """A node's position widened to cover its `parts`, iteratively (no recursion limit)."""
    start, end = node.pos
    stack = list(getattr(node, "parts", []))
    while stack:
        part = stack.pop()
        start, end = min(start, part.pos[0]), max(end, part.pos[1])
        stack.extend(getattr(part, "parts", []))
    return start, end


def main() -> int:
    text = sys.stdin.buffer.read().decode("utf-8")
    try:
        answer: dict[str, Any] = {"commands": split_commands(text)}
    except Exception as exc:  # noqa: BLE001 - SWE-ReX catches everything bashlex raises
        answer = {"error": type(exc).__name__}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
