"""The byte prefilters in front of catalogue site detection never hide a site: a file they
pass over would have had nothing found in it (forwarder functions of the file, the SDKs a
file uses, whether a file needs a tree at all), and they stay linear on text that makes a
backtracking pattern blow up."""

from __future__ import annotations

import sysconfig
import time
from pathlib import Path

import pytest

from boundary_audit.static import analyze, apis, crossfile, forwarders, parsing
from boundary_audit.static.checks.base import CommentSite, SinkSite
from boundary_audit.static.engine import ScanOptions, scan_path
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.parsing import detect_language, parse
from tests.support.parses import record_parses


def _local(lang: str, src: bytes) -> dict[str, int]:
    ex = extractor_for(lang)(lang, f"f.{lang}", src, parse(lang, src))
    found = forwarders.local(ex)
    return {f.name: found[f.key][0] for f in ex.all_functions() if f.key in found}


@pytest.mark.parametrize(
    ("lang", "src", "expected"),
    [
        ("python", b"def call(fn, *args):\n    return fn(*args)\n", {"call": 0}),
        # comments, blanks and a continuation between the list and the star, or the star and
        # the name; a keyword spread of the variadic parameter
        (
            "python",
            b"def call(fn, # the callable\n  * args):\n    return fn(\\\n  **args)\n",
            {"call": 0},
        ),
        (
            "python",
            b"def call(fn, *args: int) -> None:\n    fn( # spread\n    *args)\n",
            {"call": 0},
        ),
        (
            "javascript",
            b"function call(fn, ...rest) { return fn(/* all */ ... rest); }\n",
            {"call": 0},
        ),
        (
            "typescript",
            b"const call = (fn: F, ...args: any[]) => fn(\n  ...args,\n);\n",
            {"call": 0},
        ),
        (
            "go",
            b"package p\nfunc call(fn func(...string), args ...string) { fn(args...) }\n",
            {"call": 0},
        ),
        # no name spelt twice beside a marker: no forwarder, and none is looked for
        ("python", b"def f(fn, *args):\n    return fn(len(args)) * 2\n", {}),
        ("python", b"def f(fn, **kw):\n    return fn(**kw)\n", {}),
        ("javascript", b"function f(fn, ...rest) { return fn([...rest], {...rest}); }\n", {}),
    ],
)
def test_forwarder_functions_are_found_in_every_spelling_the_prefilter_passes(
    lang: str, src: bytes, expected: dict[str, int]
) -> None:
    assert _local(lang, src) == expected


def test_a_run_of_commented_out_lines_does_not_make_the_prefilter_backtrack() -> None:
    # `(` then many comment lines with blanks in them: a non-possessive gap pattern tries
    # every split of every line (16 times longer for every two more lines: a minute for these)
    src = b"x = f(\n" + b"#         model='gpt-4',  # a b c d e f\n" * 12 + b")\n"
    start = time.process_time()
    assert _local("python", src) == {}
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize(
    ("dialect", "src", "names"),
    [
        # `pty-input` names no module: every file naming one of its calls may use it
        (
            "python",
            b"import os\nimport pty\npid, fd = pty.fork()\nos.write(fd, b)\nt.send_input(x)\n",
            ["pty-fd", "pty-input"],
        ),
        (
            "python",
            b"from e2b import Sandbox\nimport websockets\ns.send_stdin(1)\n",
            ["e2b", "pty-input"],
        ),
        ("python", b"import websockets\nws.send_str('pty')\n", ["terminal-websocket"]),
        (
            "python",
            b"import websockets\nws.send_str('pty')\nt.send_input(c)\n",
            ["pty-input", "terminal-websocket"],
        ),
        ("python", b"x = 'e2bx'  # websocket send_input\n", ["pty-input"]),
        ("python", b"m = importlib.import_module('e2b')\nm.run(c)\n", ["e2b"]),
        # a module imported, none of its SDK's calls named: not used
        ("python", b"import os\nimport pty\npid, fd = pty.fork()\n", []),
        ("python", b"from e2b import Sandbox\nimport websockets\n", []),
        ("python", b"import subprocess\nsubprocess.run(c)\n", []),
        (
            "javascript",
            b"import { Sandbox } from '@e2b/code-interpreter'\nawait s.runCode(c)\n",
            ["e2b-js"],
        ),
        (
            "javascript",
            b"import { Sandbox } from '@e2b/code-interpreter'\nt.sendInput(c)\n",
            ["pty-input-js", "e2b-js"],
        ),
    ],
)
def test_the_sdks_a_file_uses_are_those_uses_accepts(
    dialect: str, src: bytes, names: list[str]
) -> None:
    used = apis.used(dialect, src)
    assert [s.name for s in used] == names
    assert used == tuple(s for s in apis.sdks(dialect) if apis.uses(dialect, src, s))


SERIALIZED = [
    ("python", b'cmd = "{\\"cmd\\": \\"" + text + "\\"}"\n', True),
    ("python", b'cmd = f\'{{"cmd": "{text}"}}\'\n', True),
    ("python", b'cmd = """{"cmd": "%s"}""" % text\n', True),
    ("python", b'cmd = "[{\\"cmd\\": 1}]"\n', True),
    ("python", b'payload = {"cmd": text, "cwd": "/w"}\nrun(payload)\n', False),
    ("typescript", b'const cmd = `{"cmd": "${text}"}`;\n', True),
    ("typescript", b'const payload = { "cmd": text };\n', False),
    ("go", b'package p\nvar cmd = `{"cmd": "` + text + `"}`\n', True),
    ("rust", b'fn f(t: &str) -> String { format!("{{ \\"cmd\\": \\"{}\\" }}", t) }\n', True),
]


@pytest.mark.parametrize(("lang", "src", "literal"), SERIALIZED)
def test_the_serialized_command_guard_passes_every_literal_its_query_matches(
    lang: str, src: bytes, literal: bool
) -> None:
    # the guard asks for the literal's opening quote right before the brace; a dict display
    # in code (`{"cmd": x}`) opens none, and the query finds nothing there either
    from boundary_audit.static.analyze import collect_sites
    from boundary_audit.static.checks.base import TemplateSite
    from boundary_audit.static.checks.serialized_command import SerializedCommand

    found = [
        s
        for s in collect_sites(lang, parse(lang, src).root_node)
        if isinstance(s, TemplateSite) and s.check == "BA501"
    ]
    assert bool(found) == literal
    assert bool(SerializedCommand.guard.search(src)) == literal


NEEDS_TREE = [
    ("plain.py", "def add(a, b):\n    return a + b\n", False),
    # each prefilter alone: a sink's text, a guarded check's, the catalogue's
    ("sink.py", "import subprocess\n\n\ndef f(c):\n    subprocess.run(c, shell=True)\n", True),
    ("ignored.py", "x = 1  # boundary-audit: ignore[BA101]\n", True),
    ("aliased.py", "import os as o\n\n\ndef f(p):\n    o.startfile(p)\n", True),
    # an alias alone: no process API's name in the file
    ("alias.py", "import foo as bar\nbar.go(1)\n", False),
    # the SDK without modules, named by none of its calls: the file needs no tree
    ("ws.ts", "import { x } from 'y';\nx.go(1);\n", False),
]


@pytest.mark.parametrize(("name", "text", "needed"), NEEDS_TREE)
def test_a_file_needs_a_tree_only_if_some_prefilter_passes_it(
    name: str, text: str, needed: bool
) -> None:
    lang = detect_language(name, text.encode())
    assert lang is not None
    assert analyze.may_have_sites(lang, text.encode()) is needed


def test_the_main_pass_parses_only_the_files_some_check_may_find_a_site_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = record_parses(monkeypatch, crossfile, analyze)
    for name, text, _ in NEEDS_TREE:
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = scan_path(tmp_path, options=ScanOptions(jobs=1))
    assert sorted(parsed) == sorted(t.encode() for _, t, needed in NEEDS_TREE if needed)
    assert result.files_scanned == len(NEEDS_TREE)
    assert [(f.code, f.primary.path, f.primary.start_line) for f in result.findings] == [
        ("BA301", "aliased.py", 5),
        ("BA101", "sink.py", 5),
    ]


CORPUS = sorted(p for p in (Path(__file__).parent / "fixtures").rglob("*") if p.is_file()) + sorted(
    Path(sysconfig.get_paths()["stdlib"]).glob("*.py")
)
"""Every fixture file, and the Python standard library's top-level modules (real code with
sinks, present wherever the tests run)."""


def test_no_file_a_prefilter_passes_over_has_a_site() -> None:
    """A file `apis.may_have_sites` rules out has no catalogue site (`apis.sites`), and one
    `analyze.may_have_sites` rules out has, with every check run (`collect_sites` without
    the bytes), no sink and no guarded check's site. (`os.startfile` in
    BA301/positive_spellings.py was lost once the SDK without modules no longer made every
    file pass `apis.may_have_sites`.)"""
    guarded = {c.name for c in analyze.GUARDED}
    no_sites = no_tree = 0
    for path in CORPUS:
        raw = path.read_bytes()
        lang = detect_language(path.name, raw[:256])
        if lang is None or b"\0" in raw[:8192]:
            continue
        data = parsing.utf8_safe(raw)
        if apis.may_have_sites(parsing.QUERY_DIALECT[lang], data):
            continue
        no_sites += 1
        tree = parse(lang, data)
        ex = extractor_for(lang)(lang, path.name, data, tree)
        assert apis.sites(ex) == [], path
        if analyze.may_have_sites(lang, data):
            continue
        no_tree += 1
        found = [
            s
            for s in analyze.collect_sites(lang, tree.root_node)
            if isinstance(s, (SinkSite, CommentSite)) or s.check in guarded
        ]
        assert found == [], path
    assert (no_sites > 40, no_tree > 5) == (True, True), (no_sites, no_tree)
