"""Typed, located reads of a parsed TOML document, for the adapter and probe loaders.

A `Table` wraps one TOML table with the file and the dotted key path it came from. Every
getter checks presence and type and raises the loader's error class with a one-line message
naming the file and the key (`system_adapters/x.toml: paths[1].transport.name: ...`);
`done()` rejects keys nobody read, so a misspelt key is an error, not a silent default.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boundary_audit.errors import BoundaryAuditError

_MISSING = object()


def read_toml(data: bytes, where: str, error: type[BoundaryAuditError]) -> dict[str, Any]:
    """Parse `data` as TOML (UTF-8); errors name `where`."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{where}: invalid TOML: {exc}") from None


def read_file(path: Path, error: type[BoundaryAuditError]) -> bytes:
    """The bytes of a user-given file; a missing or unreadable one is `error`."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None


class Table:
    """One TOML table, with where it came from for error messages."""

    def __init__(
        self, data: dict[str, Any], where: str, key: str, error: type[BoundaryAuditError]
    ) -> None:
        self.data = data
        self.where = where
        self.key = key
        self.error = error
        self._read: set[str] = set()

    def _name(self, key: str) -> str:
        return f"{self.key}.{key}" if self.key else key

    def fail(self, key: str, why: str) -> BoundaryAuditError:
        """An error about `key` of this table."""
        return self.error(f"{self.where}: {self._name(key)}: {why}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = _MISSING) -> Any:
        """The value of `key`, which must have type `kind` (bool is never an int)."""
        self._read.add(key)
        if key not in self.data:
            if default is _MISSING:
                raise self.fail(key, "missing")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            ok = False
        else:
            ok = isinstance(value, kinds)
        if not ok:
            want = " or ".join(_type_name(k) for k in kinds)
            raise self.fail(key, f"must be {want}, not {_type_name(type(value))}")
        return value

    def text(self, key: str, default: Any = _MISSING, *, empty: bool = False) -> Any:
        """A string value; an empty string is an error unless `empty`."""
        value = self.get(key, str, default)
        if isinstance(value, str) and not value and not empty and default is _MISSING:
            raise self.fail(key, "must not be empty")
        return value

    def strings(self, key: str, default: Any = _MISSING) -> tuple[str, ...]:
        """A list of strings."""
        value = self.get(key, list, default)
        if value is default:
            return tuple(value) if isinstance(value, (list, tuple)) else value
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be string, not {_type_name(type(item))}")
        return tuple(value)

    def table(self, key: str, default: Any = _MISSING) -> Table:
        """A sub-table (an empty one when absent and `default` is given)."""
        value = self.get(key, dict, default)
        if value is default:
            value = {} if default is None else value
        return Table(value, self.where, self._name(key), self.error)

    def tables(self, key: str, default: Any = _MISSING) -> Iterator[Table]:
        """An array of tables."""
        value = self.get(key, list, default)
        for i, item in enumerate(value if isinstance(value, list) else ()):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", "must be a table")
            yield Table(item, self.where, f"{self._name(key)}[{i}]", self.error)

    def done(self) -> None:
        """Reject keys no getter asked for."""
        extra = sorted(set(self.data) - self._read)
        if extra:
            raise self.fail(
                extra[0],
                "unknown key" + (f" (also: {', '.join(extra[1:])})" if len(extra) > 1 else ""),
            )


def _type_name(kind: type) -> str:
    return {
        str: "string",
        int: "integer",
        bool: "boolean",
        list: "array",
        dict: "table",
        float: "float",
    }.get(kind, kind.__name__)
