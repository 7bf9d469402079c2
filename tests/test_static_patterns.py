"""What each query pattern needs in a file (`static.patterns`), and the bundles built from it.

A pattern is left out of a process's sink pass only when none of its files contains a
string it needs; the registry tests below run every packaged pattern on every fixture and
specimen and check that a pattern that matches a file is one that file wants, and that the
bundle of the wanted patterns finds exactly what the bundle of all of them finds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter as ts

from boundary_audit.static import analyze
from boundary_audit.static.analyze import _SINK_PASS, GUARDED
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.parsing import detect_language, parse
from boundary_audit.static.patterns import pattern_need, split_patterns, wanted
from boundary_audit.static.queries import FUNCTIONS, bundle, patterns
from tests.test_static_fixtures import FIXTURES

SPECIMENS = Path(__file__).resolve().parent.parent / "specimens"


@pytest.mark.parametrize(
    ("pattern", "need"),
    [
        ('(call function: (identifier) @_f (#eq? @_f "system")) @span', ((b"system",),)),
        (
            '((call function: (identifier) @_f) @span (#any-of? @_f "popen" "system"))',
            ((b"popen", b"system"),),
        ),
        (  # both predicates must hold: two groups
            "(call (attribute object: (_) @_o attribute: (identifier) @_m)"
            ' (#eq? @_o "os") (#eq? @_m "system")) @span',
            ((b"os",), (b"system",)),
        ),
        (  # captured in every branch of the alternation: always made
            "(call function: [(attribute attribute: (identifier) @_f) (identifier) @_f]"
            ' (#eq? @_f "run")) @span',
            ((b"run",),),
        ),
        (  # captured in one branch only: the predicate may not apply
            "(call function: [(attribute attribute: (identifier) @_f) (identifier)]"
            ' (#eq? @_f "run")) @span',
            (),
        ),
        ('(call (identifier)? @_f (#eq? @_f "run")) @span', ()),  # optional capture
        ('(call (identifier)* @_f (#eq? @_f "run")) @span', ()),
        ('(call ((identifier) @_f)? (#eq? @_f "run")) @span', ()),  # under an optional group
        ('(call (identifier)+ @_f (#eq? @_f "run")) @span', ((b"run",),)),
        ('((identifier) @span (#match? @span "^run$"))', ()),  # a regex gives nothing
        ('((identifier) @span (#not-eq? @span "run"))', ()),
        ("((identifier) @a (identifier) @b (#eq? @a @b)) @span", ()),  # capture to capture
        (r'((string) @span (#eq? @span "\"tmux\""))', ((b'"tmux"',),)),  # escapes undone
        ('((comment) @span (#eq? @span "; x ( [ @y"))', ((b"; x ( [ @y",),)),
    ],
)
def test_a_pattern_needs_the_strings_its_predicates_compare_a_sure_capture_with(
    pattern: str, need: tuple[tuple[bytes, ...], ...]
) -> None:
    assert pattern_need(pattern) == need


def test_patterns_are_split_at_the_top_level_with_their_captures() -> None:
    text = '; head\n(a (b) @x) @span\n; between\n[(c) (d)] @span\n((e) @span (#eq? @span ")"))\n'
    assert split_patterns(text) == [
        "(a (b) @x) @span\n; between\n",
        "[(c) (d)] @span\n",
        '((e) @span (#eq? @span ")"))\n',
    ]


def test_a_file_wants_the_patterns_whose_every_group_it_meets() -> None:
    needs = ((), ((b"run",),), ((b"os",), (b"system",)), ((b"popen", b"system"),))
    assert wanted(needs, b"os.system(x)") == {0, 2, 3}
    assert wanted(needs, b"subprocess.run(x)") == {0, 1}


def _sources() -> list[tuple[Path, str, bytes]]:
    out = []
    for path in sorted(p for r in (FIXTURES, SPECIMENS) for p in r.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lang = detect_language(path.name, data[:256])
        if lang is not None:
            out.append((path, lang, data))
    return out


def _matches(query: ts.Query, root: ts.Node) -> list[tuple[int, list[tuple[str, int, int]]]]:
    return [
        (index, sorted((k, n.start_byte, n.end_byte) for k, ns in caps.items() for n in ns))
        for index, caps in ts.QueryCursor(query).matches(root)
    ]


def test_every_pattern_that_matches_a_file_is_one_the_file_wants() -> None:
    """The needs are sound on every fixture and specimen, for the sink pass and for each
    guarded check; and the bundle of a file's wanted patterns finds what all of them do."""
    checked = left_out = 0
    for path, lang, data in _sources():
        root = parse(lang, data).root_node
        fn_query = extractor_for(lang).FUNCTION_QUERY
        for names, functions in [(_SINK_PASS, fn_query), *(((c.name,), "") for c in GUARDED)]:
            every = patterns(lang, names, functions)
            full = bundle(lang, names, functions)
            assert full.query is not None
            want = every.wanted(data)
            found = _matches(full.query, root)
            for index, _ in found:
                assert index in want, f"{path.name}: {every.owners[index]} pattern {index}"
            checked += len(found)
            left_out += len(every.texts) - len(want)
            few = bundle(lang, names, functions, want)
            assert few.owners == tuple(every.owners[i] for i in sorted(want))
            got = _matches(few.query, root) if few.query is not None else []
            assert [(few.owners[i], caps) for i, caps in got] == [
                (full.owners[i], caps) for i, caps in found
            ], path.name
    assert checked > 500 and left_out > 1000


def test_a_process_compiles_a_files_patterns_then_all_of_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(analyze, "_SINK_KEEP", {})
    every = patterns("python", _SINK_PASS, extractor_for("python").FUNCTION_QUERY)
    first = analyze._sink_bundle("python", b"import subprocess\nsubprocess.run(['ls'])\n")
    owners = set(first.owners)
    assert {"argv-spawn", "remote-command-string", FUNCTIONS} <= owners
    assert not owners & {"shell-session-input", "script-file-exec"}
    assert len(first.owners) < len(every.texts) // 2
    same = analyze._sink_bundle("python", b"subprocess.run(['git', 'status'])\n")
    assert same is first
    more = analyze._sink_bundle("python", b"proc.stdin.write(cmd)\n")
    assert more.owners == every.owners  # past the first file's patterns: all of them
    assert analyze._sink_bundle("python", b"run(x)\n") is more
    assert analyze._SINK_KEEP == {"python": None}


def test_a_plan_chooses_the_patterns_of_a_small_scan_and_all_of_a_big_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(analyze, "_SINK_KEEP", {})
    every = patterns("python", _SINK_PASS, extractor_for("python").FUNCTION_QUERY)
    texts = [b"x = 1\n", b"subprocess.run(cmd)\n", b"ssh.exec_command(cmd)\n"]
    analyze.plan("python", texts)
    keep = analyze._SINK_KEEP["python"]
    assert keep == every.wanted(texts[1]) | every.wanted(texts[2])
    assert analyze._sink_bundle("python", texts[2]).owners == tuple(
        every.owners[i] for i in sorted(keep)
    )
    monkeypatch.setattr(analyze, "PLAN_BYTES", 30)
    analyze.plan("python", texts)
    assert analyze._SINK_KEEP == {"python": None}
    analyze.plan("python", [b"x = 1\n"])  # no text may have sinks: no pattern
    assert analyze._SINK_KEEP == {"python": frozenset()}
