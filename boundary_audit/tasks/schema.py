"""A strict reader over parsed TOML: typed getters that remember which keys were read.

Task files are validated while they are read: every getter checks the type (and range, pattern
or choice) of one key and reports `file: key.path: problem`; `Node.finish()` then rejects
every key no getter asked for, so a misspelt key is an error instead of a silent default.

Byte payloads ("text values") may be written three ways, so that exact bytes, including
invalid UTF-8 and very long payloads, stay declarative:
  - a TOML string (its UTF-8 encoding; TOML escapes such as \\t, \\n, \\u00e9 apply);
  - an inline table `{ base64 = "..." }` or `{ repeat = "abc", times = 3 }`;
  - an array of the above, concatenated.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from boundary_audit.errors import TaskError

T = TypeVar("T")

_MISSING = object()
MAX_TEXT_BYTES = 1 << 20
"""Largest byte payload a task may declare (1 MiB)."""


class Node:
    """One TOML table at `path` inside file `where`, read key by key."""

    def __init__(self, data: dict[str, Any], path: str, where: str) -> None:
        self.data = data
        self.path = path
        self.where = where
        self._seen: set[str] = set()

    def key_path(self, key: str) -> str:
        """The dotted path of `key`, as shown in error messages."""
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str | None, message: str) -> NoReturn:
        """Raise the TaskError for `key` (or for this table when key is None)."""
        where = self.key_path(key) if key else (self.path or "top level")
        raise TaskError(f"{self.where}: {where}: {message}")

    def has(self, key: str) -> bool:
        """Whether `key` is present (counts as reading it)."""
        self._seen.add(key)
        return key in self.data

    def _get(self, key: str, kind: type | tuple[type, ...], label: str, default: Any) -> Any:
        self._seen.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.fail(key, "required key is missing")
            return default
        value = self.data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(key, f"expected {label}, got {_type_name(value)}")
        return value

    def string(
        self,
        key: str,
        default: Any = _MISSING,
        *,
        pattern: str | None = None,
        choices: tuple[str, ...] | None = None,
    ) -> Any:
        """A string value, optionally matching `pattern` (fullmatch) or one of `choices`."""
        if default is not _MISSING and key not in self.data:
            self._seen.add(key)
            return default
        value = self._get(key, str, "a string", _MISSING)
        if pattern is not None and not re.fullmatch(pattern, value):
            self.fail(key, f"{value!r} does not match {pattern}")
        if choices is not None and value not in choices:
            self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def integer(self, key: str, default: Any = _MISSING, *, lo: int, hi: int) -> Any:
        """An integer within [lo, hi]."""
        if default is not _MISSING and key not in self.data:
            self._seen.add(key)
            return default
        value = self._get(key, int, "an integer", _MISSING)
        if not lo <= value <= hi:
            self.fail(key, f"{value} is outside {lo}..{hi}")
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        """A true/false value."""
        return self._get(key, bool, "true or false", default)

    def strings(
        self, key: str, default: Any = _MISSING, *, check: Callable[[str], str | None] | None = None
    ) -> Any:
        """An array of strings; `check(item)` returns an error message or None."""
        if default is not _MISSING and key not in self.data:
            self._seen.add(key)
            return default
        value = self._get(key, list, "an array of strings", _MISSING)
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{key}[{i}]", f"expected a string, got {_type_name(item)}")
            problem = check(item) if check else None
            if problem:
                self.fail(f"{key}[{i}]", problem)
        return list(value)

    def array(self, key: str) -> list[Any]:
        """A required array whose items the caller checks."""
        return list(self._get(key, list, "an array", _MISSING))

    def table(self, key: str, required: bool = False) -> Node | None:
        """The sub-table `key` as a Node, or None when absent and not required."""
        value = self._get(key, dict, "a table", _MISSING if required else None)
        return None if value is None else Node(value, self.key_path(key), self.where)

    def tables(self, key: str) -> list[Node]:
        """An array of tables (`[[key]]` or `key = [{...}]`); empty when absent."""
        value = self._get(key, list, "an array of tables", [])
        nodes = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"{key}[{i}]", f"expected a table, got {_type_name(item)}")
            nodes.append(Node(item, f"{self.key_path(key)}[{i}]", self.where))
        return nodes

    def mapping(self, key: str) -> dict[str, Any]:
        """A table read as a plain dict (its values are checked by the caller); {} when absent."""
        value = self._get(key, dict, "a table", {})
        return dict(value)

    def text(self, key: str, default: Any = _MISSING) -> Any:
        """A text value (see the module docstring) decoded to bytes."""
        self._seen.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.fail(key, "required key is missing")
            return default
        return decode_text(self.data[key], self.key_path(key), self.where)

    def finish(self) -> None:
        """Reject keys that no getter read: they are typos or unsupported options."""
        unknown = sorted(set(self.data) - self._seen)
        if unknown:
            allowed = ", ".join(sorted(self._seen))
            self.fail(unknown[0], f"unknown key (allowed here: {allowed})")


def decode_text(value: Any, path: str, where: str) -> bytes:
    """Decode a text value at `path` to bytes, raising TaskError naming file and key."""
    out = _decode_piece(value, path, where, top=True)
    if len(out) > MAX_TEXT_BYTES:
        raise TaskError(f"{where}: {path}: payload of {len(out)} bytes exceeds {MAX_TEXT_BYTES}")
    return out


def _decode_piece(value: Any, path: str, where: str, *, top: bool) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, list) and top:
        return b"".join(
            _decode_piece(v, f"{path}[{i}]", where, top=False) for i, v in enumerate(value)
        )
    if isinstance(value, dict):
        return _decode_table(value, path, where)
    raise TaskError(
        f"{where}: {path}: expected a string, {{base64=...}}, {{repeat=..., times=N}}"
        + (" or an array of those" if top else "")
        + f", got {_type_name(value)}"
    )


def _decode_table(value: dict[str, Any], path: str, where: str) -> bytes:
    node = Node(value, path, where)
    if node.has("base64"):
        raw = node.string("base64")
        node.finish()
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            node.fail("base64", "not valid base64")
    piece: str = node.string("repeat")
    times: int = node.integer("times", lo=0, hi=MAX_TEXT_BYTES)
    node.finish()
    if len(piece) * times > MAX_TEXT_BYTES:
        node.fail("times", f"payload exceeds {MAX_TEXT_BYTES} bytes")
    return piece.encode("utf-8", "surrogateescape") * times


def parse_mode(node: Node, key: str) -> int | None:
    """An octal permission string such as "0644" or "0755"; None when absent."""
    raw = node.string(key, None, pattern=r"0?[0-7]{3,4}")
    return None if raw is None else int(raw, 8)


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    for kind, name in names.items():
        if type(value) is kind:
            return name
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__
