"""SWE-ReX's `_split_bash_command` on bashlex, importable and runnable as a script.

As a module it is `split_commands`, used in process for short texts. bashlex's cost grows
faster than the length of its input (400 KB of `a;` take ~20 s) and a thread cannot be
stopped, so a longer text is split by this file run as a script in a child Python that the
run's deadline can kill (`swe_agent.BashlexSplit`): the text on stdin, one JSON object on
stdout, `{"commands": [...]}` or `{"error": "<exception type>"}`. It imports only bashlex
(and platformdirs to find the cache), so the child starts in a few hundredths of a second.

bashlex is imported on the first split, not with this module, and never builds its LALR
tables at run time: its vendored PLY rebuilds them on every import (about 0.15 s of CPU; it
ignores the `parsetab.py` it ships), so `load_bashlex` hands bashlex's `yacc.yacc` tables
built once. They ship beside this file (`bashlex_lalr.json`, for the pinned bashlex;
regenerate with `python _bashlex_split.py --write-tables bashlex_lalr.json`) and carry the
hash of bashlex's grammar and table generator (`parser.py`, `yacc.py`); another bashlex gets
its tables built on first use and kept in the user cache directory
(`$BOUNDARY_AUDIT_CACHE_DIR`, else `platformdirs.user_cache_dir("boundary-audit")`, then
`bashlex/lalr-<hash>.json`, written atomically when the directory is writable). A missing,
unreadable, malformed or mismatched file is never used. The tables are the parser's own (PLY
builds them deterministically), so bashlex's post-build patches (`parser.py`'s state
corrections) apply to them as they would to a fresh build.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

TABLES_FORMAT = 1
"""Bumped when the tables file's layout changes (old files are then rebuilt, not misread)."""
SHIPPED = Path(__file__).with_name("bashlex_lalr.json")
_READ_TABLES = True  # False when regenerating the shipped file
_BUILT: dict[str, Any] = {}  # the tables this process built, if it had to


def split_commands(text: str) -> list[str]:
    """`_split_bash_command`: the source span of each top-level bashlex node.

    Raises whatever bashlex raises (ParsingError, NotImplementedError, TypeError...).
    """
    text = text.strip()
    if not text or all(line.strip().startswith("#") for line in text.splitlines()):
        return []
    nodes = load_bashlex().parse(text)
    return [text[start:end] for start, end in (_span(node) for node in nodes)]


def cache_dir() -> Path:
    """Where the tables are kept: `$BOUNDARY_AUDIT_CACHE_DIR/bashlex`, else the user cache."""
    override = os.environ.get("BOUNDARY_AUDIT_CACHE_DIR")
    if override:
        return Path(override) / "bashlex"
    import platformdirs

    return Path(platformdirs.user_cache_dir("boundary-audit")) / "bashlex"


def tables_key(package_dir: Path) -> str:
    """The hash a tables file must carry for the bashlex installed in `package_dir`."""
    digest = hashlib.sha256(f"format {TABLES_FORMAT}\n".encode())
    for name in ("parser.py", "yacc.py"):
        digest.update((package_dir / name).read_bytes())
    return digest.hexdigest()


def load_bashlex() -> Any:
    """The `bashlex` module, its parser built from the cached tables (see the docstring)."""
    loaded = sys.modules.get("bashlex")
    if loaded is not None and hasattr(loaded, "parse"):
        return loaded
    spec = importlib.util.find_spec("bashlex")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("bashlex")
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    # The package object without running its __init__ (which imports the parser, which
    # builds the tables at import): its yacc module can then be patched first.
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    try:
        from bashlex import yacc  # type: ignore[import-untyped]

        build = yacc.yacc
        yacc.yacc = _cached_yacc(yacc, build, package_dir)
        try:
            spec.loader.exec_module(package)
        finally:
            yacc.yacc = build
    except BaseException:
        for name in [m for m in sys.modules if m == "bashlex" or m.startswith("bashlex.")]:
            del sys.modules[name]
        raise
    return package


def _cached_yacc(yacc: Any, build: Callable[..., Any], package_dir: Path) -> Callable[..., Any]:
    """A stand-in for `yacc.yacc` as `bashlex.parser` calls it at import."""

    def cached(**kwargs: Any) -> Any:
        module = sys.modules[sys._getframe(1).f_globals["__name__"]]
        try:
            key: str | None = tables_key(package_dir)
        except OSError:
            key = None
        if key is not None and _READ_TABLES:
            for path in (SHIPPED, cache_dir() / f"lalr-{key[:16]}.json"):
                tables = _read_tables(path, key)
                if tables is not None:
                    try:
                        return _parser_from(yacc, tables, module)
                    except (KeyError, TypeError, ValueError, IndexError):
                        pass  # tables that do not fit this grammar: try the next, or build
        parser = build(module=module, **kwargs)
        _BUILT.update(_tables_of(parser, key or ""))
        if key is not None and _READ_TABLES:
            _write_tables(cache_dir() / f"lalr-{key[:16]}.json", _BUILT)
        return parser

    return cached


class _Production:
    """What the LR parser reads of a production: name, length, and the rule function."""

    def __init__(self, name: str, length: int, func: str | None, text: str) -> None:
        self.name, self.len, self.func, self.str = name, length, func, text
        self.callable: Callable[..., Any] | None = None

    def __str__(self) -> str:
        return self.str

    def bind(self, pdict: dict[str, Any]) -> None:
        if self.func:
            self.callable = pdict[self.func]


def _tables_of(parser: Any, key: str) -> dict[str, Any]:
    """A built parser's tables as JSON data (before bashlex patches them)."""
    return {
        "format": TABLES_FORMAT,
        "key": key,
        "action": {str(k): dict(v) for k, v in parser.action.items()},
        "goto": {str(k): dict(v) for k, v in parser.goto.items()},
        "productions": [[p.name, p.len, p.func, str(p)] for p in parser.productions],
    }


def _parser_from(yacc: Any, tables: dict[str, Any], module: Any) -> Any:
    """An `LRParser` over cached tables, its rules bound to `module`'s functions."""

    def table(raw: Any) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {}
        for state, row in raw.items():
            if not isinstance(row, dict) or not all(
                isinstance(k, str) and type(v) is int for k, v in row.items()
            ):
                raise TypeError("table row")
            out[int(state)] = dict(row)
        return out

    productions = []
    for name, length, func, text in tables["productions"]:
        if not (isinstance(name, str) and type(length) is int and isinstance(text, str)):
            raise TypeError("production")
        if func is not None and not isinstance(func, str):
            raise TypeError("production function")
        productions.append(_Production(name, length, func, text))
    pdict = vars(module)
    for p in productions:
        p.bind(pdict)

    class Tables:
        lr_productions = productions
        lr_action = table(tables["action"])
        lr_goto = table(tables["goto"])

    return yacc.LRParser(Tables, pdict["p_error"])


def _read_tables(path: Path, key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != TABLES_FORMAT:
        return None
    if data.get("key") != key:
        return None
    if not all(isinstance(data.get(k), t) for k, t in (("action", dict), ("goto", dict))):
        return None
    return data if isinstance(data.get("productions"), list) else None


def _write_tables(path: Path, tables: dict[str, Any]) -> None:
    """Write atomically (a concurrent reader sees the old file or the new one); a cache we
    cannot write only costs the next process a rebuild."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".lalr-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(dump_tables(tables))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _span(node: Any) -> tuple[int, int]:
    """A node's position widened to cover its `parts`, iteratively (no recursion limit)."""
    start, end = node.pos
    stack = list(getattr(node, "parts", []))
    while stack:
        part = stack.pop()
        start, end = min(start, part.pos[0]), max(end, part.pos[1])
        stack.extend(getattr(part, "parts", []))
    return start, end


def dump_tables(tables: dict[str, Any]) -> str:
    """The file's text: sorted keys, one line per table row (diffable), a final newline."""
    lines = ["{"]
    lines.append(f'"format": {json.dumps(tables["format"])},')
    lines.append(f'"key": {json.dumps(tables["key"])},')
    for name in ("action", "goto"):
        rows = sorted(tables[name].items(), key=lambda kv: int(kv[0]))
        lines.append(f'"{name}": {{')
        lines += [
            f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" + ("," if i < len(rows) - 1 else "")
            for i, (k, v) in enumerate(rows)
        ]
        lines.append("},")
    lines.append('"productions": [')
    prods = tables["productions"]
    lines += [json.dumps(p) + ("," if i < len(prods) - 1 else "") for i, p in enumerate(prods)]
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_tables(path: Path) -> None:
    """Build bashlex's tables in this (fresh) process, ignoring every stored copy, into path."""
    global _READ_TABLES
    if "bashlex" in sys.modules:
        raise RuntimeError("bashlex is already loaded: run in a fresh interpreter")
    _READ_TABLES = False
    load_bashlex()
    path.write_text(dump_tables(_BUILT), encoding="utf-8")


def main() -> int:
    if sys.argv[1:2] == ["--write-tables"] and len(sys.argv) == 3:
        write_tables(Path(sys.argv[2]))
        return 0
    text = sys.stdin.buffer.read().decode("utf-8")
    try:
        answer: dict[str, Any] = {"commands": split_commands(text)}
    except Exception as exc:  # noqa: BLE001 - SWE-ReX catches everything bashlex raises
        answer = {"error": type(exc).__name__}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
