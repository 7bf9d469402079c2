"""The byte prefilters in front of catalogue site detection never hide a site: a file they
pass over would have had nothing found in it (forwarder functions of the file, the SDKs a
file uses), and they stay linear on text that makes a backtracking pattern blow up."""

from __future__ import annotations

import time

import pytest

from boundary_audit.static import apis, forwarders
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.parsing import parse


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
        # `pty-input` names no module: every file may use it
        ("python", b"import os\nimport pty\npid, fd = pty.fork()\n", ["pty-fd", "pty-input"]),
        ("python", b"from e2b import Sandbox\nimport websockets\n", ["e2b", "pty-input"]),
        ("python", b"import websockets\nws.send('pty')\n", ["pty-input", "terminal-websocket"]),
        ("python", b"x = 'e2bx'  # websocket\n", ["pty-input"]),
        ("python", b"m = importlib.import_module('e2b')\n", ["e2b", "pty-input"]),
        (
            "javascript",
            b"import { Sandbox } from '@e2b/code-interpreter'\n",
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
