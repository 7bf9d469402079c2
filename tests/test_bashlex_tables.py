"""bashlex's LALR tables: built once, shipped or cached, never rebuilt per import.

Every case runs in a fresh interpreter (bashlex is process-wide state). A "no rebuild" process
replaces bashlex's table generator (`yacc.LRTable`) with one that raises before the parser is
loaded, so it can only succeed from stored tables. What a parser built from stored tables
does is compared with stock bashlex (`import bashlex`, which builds its own): the same
splits, the same exceptions, the same final tables after bashlex's own patches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boundary_audit.adapters.preprocess import _bashlex_split

HERE = Path(_bashlex_split.__file__).parent
TEXTS = [
    "echo a\necho b",
    "x=1\necho $x > out.txt",
    "a && b | c; d &",
    "x=$(echo hi)\nls",
    "(cd x; ls)\n(pwd)",
    "for i in 1 2; do echo $i; done",
    "cat <<EOF\nhi\nEOF\necho done",
    "cat <<EOF > h.txt\nhi\nEOF\necho done",
    "if true; then echo y; fi; echo `date`",
    "echo 'unterminated",
    "echo $((1+2))",
    "[[ -n x ]]",
]

PRELUDE = f"""
import json, sys
from pathlib import Path
sys.path.insert(0, {str(HERE)!r})
import _bashlex_split as b
"""
NO_REBUILD = """
real = b._cached_yacc
def no_rebuild(yacc, build, package_dir):
    class Refused:
        def __init__(self, *a, **k):
            raise AssertionError("LALR tables rebuilt")
    yacc.LRTable = Refused
    return real(yacc, build, package_dir)
b._cached_yacc = no_rebuild
"""
REPORT = f"""
out = []
for text in {TEXTS!r}:
    try:
        out.append(b.split_commands(text))
    except Exception as exc:
        out.append(type(exc).__name__)
p = sys.modules["bashlex.parser"].yaccparser
tables = {{"action": {{str(k): v for k, v in p.action.items()}},
          "goto": {{str(k): v for k, v in p.goto.items()}}}}
print(json.dumps({{"splits": out, "tables": tables}}, sort_keys=True))
"""
STOCK = f"""
import json, sys
sys.path.insert(0, {str(HERE)!r})
import bashlex
import _bashlex_split as b
out = []
for text in {TEXTS!r}:
    try:
        out.append(b.split_commands(text))
    except Exception as exc:
        out.append(type(exc).__name__)
p = bashlex.parser.yaccparser
tables = {{"action": {{str(k): v for k, v in p.action.items()}},
          "goto": {{str(k): v for k, v in p.goto.items()}}}}
print(json.dumps({{"splits": out, "tables": tables}}, sort_keys=True))
"""


def _python(code: str, cache: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BOUNDARY_AUDIT_CACHE_DIR": str(cache)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    result: dict[str, object] = json.loads(_python(STOCK, tmp_path_factory.mktemp("stock")))
    return result


def _files(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.rglob("*") if p.is_file())


def test_the_shipped_tables_are_what_bashlex_builds(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.json"
    _python(PRELUDE + f"b.write_tables(Path({str(fresh)!r}))\n", tmp_path / "cache")
    assert fresh.read_bytes() == _bashlex_split.SHIPPED.read_bytes()
    assert _files(tmp_path / "cache") == []


def test_shipped_tables_parse_like_stock_bashlex_and_nothing_is_rebuilt_or_written(
    tmp_path: Path, stock: dict[str, object]
) -> None:
    ours = json.loads(_python(PRELUDE + NO_REBUILD + REPORT, tmp_path))
    assert ours == stock
    assert ours["splits"][0] == ["echo a", "echo b"]
    assert ours["splits"][-3:] == ["MatchedPairError", "NotImplementedError", "ParsingError"]
    assert _files(tmp_path) == []


def test_another_bashlex_builds_once_into_the_user_cache(
    tmp_path: Path, stock: dict[str, object]
) -> None:
    """Without usable shipped tables (another bashlex), the first process builds and caches
    them; the next one loads the cache and does not build."""
    elsewhere = PRELUDE + "b.SHIPPED = Path('/nonexistent/bashlex_lalr.json')\n"
    first = json.loads(_python(elsewhere + REPORT, tmp_path))
    [name] = _files(tmp_path)
    key = _bashlex_key()
    assert name == f"lalr-{key[:16]}.json"
    cached = tmp_path / "bashlex" / name
    assert cached.read_bytes() == _bashlex_split.SHIPPED.read_bytes()
    second = json.loads(_python(elsewhere + NO_REBUILD + REPORT, tmp_path))
    assert first == second == stock


def _bashlex_key() -> str:
    import importlib.util

    spec = importlib.util.find_spec("bashlex")
    assert spec is not None and spec.submodule_search_locations
    return _bashlex_split.tables_key(Path(next(iter(spec.submodule_search_locations))))


@pytest.mark.parametrize(
    "content",
    [
        b"\x00garbage",
        b'{"format": 1}',
        b"[]",
        "wrong key",
        "wrong row",
        "unknown rule",
    ],
)
def test_a_bad_cache_file_is_rebuilt_not_used(
    tmp_path: Path, stock: dict[str, object], content: bytes | str
) -> None:
    key = _bashlex_key()
    tables = json.loads(_bashlex_split.SHIPPED.read_text())
    if content == "wrong key":
        tables["key"] = "0" * 64
    elif content == "wrong row":
        tables["action"]["0"] = {"WORD": "shift"}
    elif content == "unknown rule":
        tables["productions"][1][2] = "p_no_such_rule"
    data = content if isinstance(content, bytes) else json.dumps(tables).encode()
    cached = tmp_path / "bashlex" / f"lalr-{key[:16]}.json"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(data)
    elsewhere = PRELUDE + "b.SHIPPED = Path('/nonexistent/bashlex_lalr.json')\n"
    assert json.loads(_python(elsewhere + REPORT, tmp_path)) == stock
    assert cached.read_bytes() == _bashlex_split.SHIPPED.read_bytes()


def test_an_unwritable_cache_only_costs_a_rebuild(tmp_path: Path, stock: dict[str, object]) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    elsewhere = PRELUDE + "b.SHIPPED = Path('/nonexistent/bashlex_lalr.json')\n"
    assert json.loads(_python(elsewhere + REPORT, blocker / "sub")) == stock


def test_the_adapters_import_bashlex_only_for_a_split(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import boundary_audit.adapters\n"
        "from boundary_audit.adapters.preprocess import swe_agent\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] == 'bashlex')\n"
        "print(before, swe_agent.split_commands('a; b\\nc'), 'bashlex.parser' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BOUNDARY_AUDIT_CACHE_DIR": str(tmp_path)},
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "[] ['a; b', 'c'] True\n"), done.stderr
