"""A reviewer's scope: which files of a repository a default scan reads.

Tests, docs, examples, benchmark and evaluation runners and vendored code are left out
(`catalogue/scope.toml`: directory names at any depth, file-name globs), unless the scan is
asked to include them (`--include-tests`). Left out means not analysed: the dataflow engine
never takes a test's call or an example's LLM client as evidence for a finding in the harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache

from boundary_audit.static import catalogue


@dataclass(frozen=True)
class Rule:
    """One kind of out-of-scope path."""

    kind: str
    dirs: frozenset[str]
    files: tuple[str, ...]


@cache
def rules() -> tuple[Rule, ...]:
    """The scope rules, from `catalogue/scope.toml`."""
    return tuple(
        Rule(
            str(e["kind"]),
            frozenset(catalogue.strings(e, "dirs")),
            catalogue.strings(e, "files"),
        )
        for e in catalogue.entries("scope", "rule")
    )


def excluded_by(path: str) -> str | None:
    """The kind of rule (`tests`, `docs`...) that leaves `path` out, or None if in scope."""
    parts = path.split("/")
    dirs, name = parts[:-1], parts[-1]
    for rule in rules():
        if any(d in rule.dirs for d in dirs) or any(fnmatchcase(name, g) for g in rule.files):
            return rule.kind
    return None


def in_scope(path: str) -> bool:
    """True if a default scan reads `path`."""
    return excluded_by(path) is None


__all__ = ["Rule", "excluded_by", "in_scope", "rules"]
