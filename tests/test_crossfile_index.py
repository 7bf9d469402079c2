"""The cross-file identifier index answers `Corpus.candidates` exactly like a text search."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from boundary_audit.static.crossfile import (
    _CLASS_HEADER,
    FAMILY,
    MAX_FILES,
    CallIndex,
    Corpus,
    class_headers,
)


def brute(corpus: Corpus, lang: str, needle: bytes, exclude: str) -> list[str]:
    """The definition: files of the family whose bytes contain `needle`, sorted, capped."""
    family = FAMILY.get(lang)
    hits = [
        p
        for p, (lg, data) in sorted(corpus.files.items())
        if FAMILY.get(lg) == family and needle in data and p != exclude
    ]
    return hits[:MAX_FILES]


FILES: dict[str, tuple[str, bytes]] = {
    # the name as a suffix of a longer identifier counts (`xrun_tool(` contains `run_tool(`),
    # as a prefix it does not (`run_tools(`)
    "a/suffix.py": ("python", b"def f():\n    return my_run_tool(x)\n"),
    "a/prefix.py": ("python", b"run_tools(1)\nrun_tool_x(2)\n"),
    # at the very start and the very end of a file
    "b/start.py": ("python", b"run_tool(cmd)"),
    "b/end.py": ("python", b"x = 1\nobj.run_tool("),
    # a method call only, and a call with a space before the parenthesis (no match)
    "c/method.py": ("python", b"self.agent.run_tool(cmd)\n"),
    "c/spaced.py": ("python", b"run_tool (cmd)\nobj.run_tool (cmd)\n"),
    # NUL bytes inside a file, and a name cut by one
    "d/nul.py": ("python", b"\x00run_tool(\x00"),
    "d/cut.py": ("python", b"run_\x00tool(x)\nrun_tool\x00(y)\n"),
    # non-UTF-8 bytes right before the name, and in the name
    "e/latin1.py": ("python", b"# caf\xe9\n\xffrun_tool(a)\n"),
    "e/bytes.py": ("python", b"r\xe9sum\xe9(a)\n.\xff\xfe(b)\n"),
    # `$` belongs to JS identifiers; a shell name with a dash; Rust paths
    "f/dollar.ts": ("typescript", b"const x = $run_tool(a); obj.$get(b);\n"),
    "f/plain.js": ("javascript", b"export function run_tool(a) { return a.run_tool(a) }\n"),
    "g/fn.sh": ("shell", b"my-run_tool() { echo; }\nrun_tool() { :; }\n"),
    "g/lib.rs": ("rust", b"fn main() { tools::run_tool(x); Tool::new(); }\n"),
    "h/empty.py": ("python", b""),
    "h/parens.py": ("python", b"((((run_tool((.run_tool(("),
    # TypeScript's non-null call (`.run_tool!(`), and a bang that is no such call
    "i/bang.ts": ("typescript", b"session.run_tool!({ cmd }); x!(1); .!(2); a.b!!(3)\n"),
}

NEEDLES = [
    b"run_tool(",
    b".run_tool(",
    b"tool(",
    b".tool(",
    b"_tool(",
    b"run_tools(",
    b"my_run_tool(",
    b"\xffrun_tool(",
    b"r\xe9sum\xe9(",
    b".\xff\xfe(",
    b"$run_tool(",
    b".$get(",
    b"my-run_tool(",
    b"x(",
    b"(",
    # not NAME( / .NAME(: answered by the text search, the same way
    b"run_tool (",
    b"::run_tool(",
    b"..run_tool(",
    b"run_tool",
    b"\x00run_tool(",
    b"run_tool\x00(",
    b".(",
    b"",
    b".run_tool!(",
    b"run_tool!(",
    b"x!(",
    b".!(",
    b".b!!(",
    b".b!(",
]


def test_candidates_equal_the_text_search_on_tricky_files() -> None:
    corpus = Corpus(dict(FILES))
    for lang in ("python", "typescript", "javascript", "shell", "rust", "go", "kotlin"):
        for needle in NEEDLES:
            for exclude in ("", "b/start.py", "f/plain.js"):
                want = brute(corpus, lang, needle, exclude)
                assert corpus.candidates(lang, needle, exclude) == want, (lang, needle, exclude)


def test_what_the_index_finds_in_the_tricky_files() -> None:
    corpus = Corpus(dict(FILES))
    assert corpus.candidates("python", b"run_tool(", "") == [
        "a/suffix.py",
        "b/end.py",
        "b/start.py",
        "c/method.py",
        "d/nul.py",
        "e/latin1.py",
        "h/parens.py",
    ]
    assert corpus.candidates("python", b".run_tool(", "") == [
        "b/end.py",
        "c/method.py",
        "h/parens.py",
    ]
    assert corpus.candidates("javascript", b"run_tool(", "f/plain.js") == ["f/dollar.ts"]
    assert corpus.candidates("tsx", b".$get(", "") == ["f/dollar.ts"]
    assert corpus.candidates("rust", b"run_tool(", "") == ["g/lib.rs"]
    assert corpus.candidates("shell", b"run_tool(", "") == ["g/fn.sh"]


def test_the_index_is_built_lazily_once_per_family_and_the_files_never_joined() -> None:
    corpus = Corpus(dict(FILES))
    assert corpus._indexes == {}
    corpus.candidates("python", b"run_tool(", "")
    corpus.candidates("python", b".agent(", "")
    assert list(corpus._indexes) == ["py"]
    index = corpus._indexes["py"]
    corpus.candidates("python", b"tool(", "")
    assert corpus._indexes["py"] is index
    found = corpus.candidates("typescript", b"run_tool (", "")  # not NAME(: the text search
    assert list(corpus._indexes) == ["py"]
    assert found == brute(corpus, "typescript", b"run_tool (", "")
    # nothing in the corpus holds a copy of a family's text (a second corpus in memory)
    sizes = {len(data) for _, data in FILES.values()}
    held = [v for v in vars(corpus).values() if isinstance(v, dict)]
    assert not any(
        isinstance(x, bytes) and len(x) > max(sizes) for d in held for x in _walk(d.values())
    )


def _walk(values: Iterable[object]) -> list[object]:
    """`values` and, inside tuples and lists among them, theirs."""
    out: list[object] = []
    for v in values:
        out.append(v)
        if isinstance(v, (tuple, list)):
            out += _walk(v)
    return out


def test_class_headers_and_quoting_helpers_do_not_run_across_files() -> None:
    files = {
        "a/open.py": ("python", b"class Half(Base,\n"),  # cut short: no `)` in this file
        "b/next.py": ("python", b"x = 1)\nclass Whole(Other):\n    pass\n"),
        "c/def.py": ("python", b"def shell_quote(s):\n    return s\n"),
        "d/idiom.py": ("python", b"Q = \"'\\\\''\"\n"),  # the idiom, no definition here
    }
    corpus = Corpus(files)
    assert corpus.class_bases("py").bases == {"Whole": ("Other",)}
    assert corpus.class_bases("py").declared.as_dict() == {b"Whole": []}
    assert corpus.quoters("py") == frozenset()


def test_prepare_builds_every_familys_tables_as_a_lazy_build_would() -> None:
    files = {
        **FILES,
        "h/base.py": ("python", b"class Tool(Base, mixins.Quiet):\n    pass\n"),
        "h/quote.py": (
            "python",
            b'def sh_quote(s):\n    return "\'" + s.replace("\'", "\'\\\\\'\'") + "\'"\n',
        ),
    }
    prepared, lazy = Corpus(dict(files)), Corpus(dict(files))
    prepared.prepare()
    assert sorted(prepared._indexes) == ["js", "py", "rs", "sh"]
    assert sorted(prepared._bases) == ["js", "py"]
    assert prepared._bases["py"].bases == {"Tool": ("Base", "Quiet", "mixins")}
    assert prepared._quoters["py"] == frozenset({"sh_quote"})
    for family in ("py", "js"):
        assert prepared._bases[family] == lazy.class_bases(family)
    for family in ("js", "py", "rs", "sh"):
        assert prepared._quoters[family] == lazy.quoters(family)
        assert prepared._indexes[family].calls == lazy.index(family).calls
        assert prepared._indexes[family].methods == lazy.index(family).methods
    for needle in (b"run_tool(", b".run_tool(", b"tool(", b"run_tool ("):
        assert prepared.candidates("python", needle, "") == lazy.candidates("python", needle, "")


def test_the_cap_applies_after_the_exclusion() -> None:
    files = {f"m{i:02}.py": ("python", b"x.helper_fn(1)\n") for i in range(MAX_FILES + 3)}
    corpus = Corpus(files)
    got = corpus.candidates("python", b".helper_fn(", "m00.py")
    assert got == [f"m{i:02}.py" for i in range(1, MAX_FILES + 1)]


def test_tokens_of_a_file() -> None:
    index = CallIndex.build(["p", "q"], [b"a.b(c(d.e.f(\xffg( h(", b"x.f( b("])
    assert index.calls.as_dict() == {
        b"b": [0, 1],
        b"c": [0],
        b"f": [0, 1],
        b"h": [0],
        b"g\xff": [0],
    }
    assert index.methods.as_dict() == {b"b": [0], b"f": [0, 1]}
    assert index.lookup(b"f", dotted=False) == ["p", "q"]
    assert index.lookup(b"g", dotted=False) == ["p"]  # `\xffg(` contains `g(`


ALPHABET = b"ab_.( \x00\xff$-:!"


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.binary(max_size=40).map(lambda b: bytes(ALPHABET[x % 12] for x in b))),
    needles=st.lists(
        st.binary(min_size=0, max_size=6).map(lambda b: bytes(ALPHABET[x % 12] for x in b)),
        min_size=1,
        max_size=8,
    ),
)
def test_candidates_equal_the_text_search_on_random_bytes(
    texts: list[bytes], needles: list[bytes]
) -> None:
    langs = ["python", "go", "typescript"]
    corpus = Corpus({f"f{i:03}": (langs[i % 3], t) for i, t in enumerate(texts)})
    for needle in needles:
        for form in (needle, needle + b"(", b"." + needle + b"(", b"." + needle + b"!("):
            for lang in ("python", "go", "tsx"):
                assert corpus.candidates(lang, form, "f000") == brute(corpus, lang, form, "f000")


_PIECES = ["class", "class ", "x", "_", "9", " ", "\n", "(", ")", ":", "{", ";", "$", "A", "B"]
_PIECES += ["extends ", "implements ", "\xff", ","]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_class_headers_are_the_leading_word_boundary_regex(pieces: list[str]) -> None:
    data = "".join(pieces).encode("latin-1")
    for header in _CLASS_HEADER.values():
        bounded = re.compile(rb"\b" + header.pattern)
        want = [(m.span(), m.groups()) for m in bounded.finditer(data)]
        assert [(m.span(), m.groups()) for m in class_headers(header, data)] == want


def test_a_class_header_inside_a_rejected_one_is_found() -> None:
    # `subclass A(` is no header (a word byte before `class`), but its match would swallow
    # the real one that starts inside its parentheses.
    data = b"subclass A(\nclass B(Base):\n"
    header = _CLASS_HEADER["py"]
    assert [m.group(1, 2) for m in class_headers(header, data)] == [(b"B", b"Base")]


def test_a_root_class_declared_without_bases_is_an_ancestor() -> None:
    """`class Base {` (JS/TS) and `class Base:` (Python) declare the root of a hierarchy: the
    ancestors walk, which keeps only declared classes, must reach it."""
    corpus = Corpus(
        {
            "a.ts": (
                "typescript",
                b"export class Base {\n  run(c) {}\n}\nclass Mid extends Base {}\n",
            ),
            "b.ts": ("tsx", b"class Sub extends Mid implements I {}\nclass G<T> {}\n"),
            "a.py": ("python", b"class Base:\n    pass\nclass Mid(Base): pass\n"),
            "b.py": ("python", b"class Sub(Mid): pass\n"),
        }
    )
    assert corpus.ancestors("js", "Sub") == ["Mid", "Base"]
    assert corpus.ancestors("py", "Sub") == ["Mid", "Base"]
    js = corpus.class_bases("js")
    assert (js.declares("Base"), js.declares("G"), js.declares("I")) == (True, True, False)
    assert js.bases == {"Mid": ("Base",), "Sub": ("I", "Mid")}
