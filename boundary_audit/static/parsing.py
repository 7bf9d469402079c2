"""Language detection and tree-sitter parsing for the static scanner.

Maps a file to one of the scanned languages (by extension, or by shebang for extensionless
scripts), and parses bytes into a tree with a per-process cache of `Language` and `Parser`
objects. Uses the tree-sitter >= 0.25 API (`Language`, `Parser`, `Query`, `QueryCursor`);
never `tree-sitter-languages`. Parsing and querying are iterative in C; the Python-side
converters that recurse over a tree bound their depth with `MAX_DEPTH` and raise `TooDeep`,
which the scanner records as a skipped file instead of crashing.
"""

from __future__ import annotations

import codecs
import importlib
import re
from collections.abc import Callable
from functools import cache

import tree_sitter as ts

LANGUAGES: tuple[str, ...] = ("python", "javascript", "typescript", "tsx", "rust", "go", "shell")
"""Every language the scanner knows, in a fixed order."""

QUERY_DIALECT: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "javascript",
    "tsx": "javascript",
    "rust": "rust",
    "go": "go",
    "shell": "shell",
}
"""Which `queries/<dialect>/` folder serves a language (TypeScript reuses the JavaScript queries:
its grammar is a superset for every node type the queries name)."""

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".sh": "shell",
    ".bash": "shell",
}

_SHEBANG = re.compile(rb"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-S\s+)?)?([A-Za-z0-9_.]+)")
_SHEBANG_LANG: dict[str, str] = {
    "sh": "shell",
    "bash": "shell",
    "dash": "shell",
    "ksh": "shell",
    "zsh": "shell",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "bun": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
}

MAX_DEPTH = 200
"""Deepest expression nesting the Python-side analysis follows; deeper files are skipped."""


class TooDeep(Exception):
    """The syntax tree nests deeper than MAX_DEPTH (the file is skipped, not analysed)."""


_BY_SHEBANG_SUFFIXES = ("", ".in", ".tmpl")
"""Name endings after which a file's language is in its shebang (a script has no extension)."""


def may_be_source(path: str) -> bool:
    """False only if `detect_language(path, head)` is None whatever the file's head: its name
    ends in an extension that is neither a scanned language's nor one of a script's."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:
        return True
    suffix = name[dot:].lower()
    return suffix in _EXTENSIONS or suffix in _BY_SHEBANG_SUFFIXES


def detect_language(path: str, head: bytes = b"") -> str | None:
    """The language of `path` by extension, else by the shebang in `head`; None if not scanned."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        lang = _EXTENSIONS.get(name[dot:].lower())
        if lang is not None:
            return lang
        if name[dot:].lower() not in _BY_SHEBANG_SUFFIXES:
            return None
    m = _SHEBANG.match(head[:256])
    if m is None:
        return None
    prog = m.group(1).decode("ascii", "replace")
    if prog.startswith("python"):
        return "python"
    return _SHEBANG_LANG.get(prog)


_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "rust": ("tree_sitter_rust", "language"),
    "go": ("tree_sitter_go", "language"),
    "shell": ("tree_sitter_bash", "language"),
}
"""Each language's grammar package and its function; a package is imported when its first
language is asked for (a Python-only scan loads no other grammar)."""


def _grammar(name: str) -> object:
    module, function = _GRAMMARS[name]
    loader: Callable[[], object] = getattr(importlib.import_module(module), function)
    return loader()


@cache
def language(name: str) -> ts.Language:
    """The tree-sitter `Language` for `name` (cached per process)."""
    if name not in QUERY_DIALECT:
        raise ValueError(f"unknown language {name!r}")
    return ts.Language(_grammar(name))


@cache
def parser(name: str) -> ts.Parser:
    """A `Parser` for `name` (cached per process; parsers are not shared across threads)."""
    return ts.Parser(language(name))


def _one_byte_each(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return "?", exc.start + 1


codecs.register_error("boundary-audit-byte", _one_byte_each)


def utf8_safe(data: bytes) -> bytes:
    """`data` with every byte that is not part of valid UTF-8 replaced by `?` (same offsets).

    NOTE(h2): the tree-sitter binding decodes node text strictly when it evaluates `#match?`
    predicates; keeping byte offsets unchanged keeps every location exact.
    """
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode("utf-8", "boundary-audit-byte").encode("utf-8")


def parse(name: str, data: bytes) -> ts.Tree:
    """Parse `data` as language `name` (tree-sitter never fails: errors become ERROR nodes)."""
    return parser(name).parse(data)
