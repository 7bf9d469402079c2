"""Committed reports regenerate from any clone: their commands and sources name no path of the
machine they were made on (absolute paths, the home directory); paths are relative to the
repository (`reports/...`, `../.mirror/...` beside the checkout) or repository URLs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPORTS = Path(__file__).resolve().parent.parent / "reports"
ABSOLUTE = re.compile(r"(?:^|[\s=\"'(])(/[A-Za-z][^\s\"')]*)")


def _commands(path: Path) -> list[str]:
    if path.suffix == ".json":
        found: list[str] = []

        def walk(node: object) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("command", "source", "harness_reports") and isinstance(value, str):
                        found.append(value)
                    walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(json.loads(path.read_text()))
        return found
    lines = path.read_text().splitlines()
    return [ln for ln in lines if ln.lstrip().startswith("boundary-audit ") or "Regenerate" in ln]


FILES = sorted(p for p in REPORTS.rglob("*") if p.suffix in (".json", ".md"))


def test_there_are_reports() -> None:
    assert {p.name for p in FILES} >= {"table8.md", "table8.json", "damage-matrix.md"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPORTS)))
def test_commands_and_sources_are_portable(path: Path) -> None:
    commands = _commands(path)
    assert commands, "every report carries the command that regenerates it"
    machine = [m for c in commands for m in ABSOLUTE.findall(c)]
    assert machine == []
    assert all("~/" not in c for c in commands)
