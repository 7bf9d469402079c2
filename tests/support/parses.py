"""Counting the scanner's parses: which texts tree-sitter was asked to parse, in order."""

from __future__ import annotations

from types import ModuleType

import pytest
import tree_sitter as ts

from boundary_audit.static import parsing


def record_parses(monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> list[bytes]:
    """The list every `parse` of `modules` (each imported it by name) appends its text to."""
    parsed: list[bytes] = []
    real = parsing.parse

    def counting(lang: str, data: bytes) -> ts.Tree:
        parsed.append(data)
        return real(lang, data)

    for module in modules:
        monkeypatch.setattr(module, "parse", counting)
    return parsed
