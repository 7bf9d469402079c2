"""Property tests: the scanner never raises and is deterministic on random and mutated input.

Mutations start from the check fixtures (every language): deleted and duplicated byte
ranges, random Unicode or random bytes (invalid UTF-8) spliced in, and deep nesting wrapped
around a sink's argument. Each input is analysed twice in-process; both results must be
equal, and the only allowed skip is "too deeply nested".
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundary_audit.static.analyze import analyze_file
from boundary_audit.static.parsing import LANGUAGES, detect_language

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
SOURCES = sorted(
    (p.relative_to(FIXTURES).as_posix(), p.read_bytes()) for p in FIXTURES.rglob("*") if p.is_file()
)
EXTENSION = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "tsx": "tsx",
    "rust": "rs",
    "go": "go",
    "shell": "sh",
}
OPENERS = {
    "python": (b"[", b"]"),
    "javascript": (b"[", b"]"),
    "typescript": (b"(", b")"),
    "tsx": (b"(", b")"),
    "rust": (b"(", b")"),
    "go": (b"(", b")"),
    "shell": (b"$(", b")"),
}


def analyse(path: str, data: bytes) -> tuple[object, ...]:
    lang = detect_language(path, data[:256])
    assert lang is not None
    first = analyze_file(path, data, lang, commit="0" * 40)
    second = analyze_file(path, data, lang, commit="0" * 40)
    assert first.findings == second.findings
    assert first.skipped == second.skipped
    if first.skipped is not None:
        assert first.skipped.reason.startswith("too deeply nested")
    for f in first.findings:
        assert f.primary.path == path
        assert 1 <= f.primary.start_line <= data.count(b"\n") + 1
    return tuple(first.findings)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    path, data = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        n = len(data)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 64)))
        kind = draw(st.sampled_from(["delete", "duplicate", "unicode", "bytes"]))
        if kind == "delete":
            data = data[:i] + data[j:]
        elif kind == "duplicate":
            data = data[:j] + data[i:j] + data[j:]
        elif kind == "unicode":
            data = data[:i] + draw(st.text(max_size=20)).encode("utf-8", "surrogatepass") + data[i:]
        else:
            data = data[:i] + draw(st.binary(max_size=20)) + data[i:]
    return path, data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_fixtures_never_crash_and_are_deterministic(case: tuple[str, bytes]) -> None:
    analyse(*case)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(LANGUAGES), st.binary(max_size=400))
def test_random_bytes_never_crash(lang: str, data: bytes) -> None:
    analyse(f"random.{EXTENSION[lang]}", data)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(LANGUAGES), st.integers(50, 3000))
def test_deep_nesting_is_skipped_or_scanned_never_a_crash(lang: str, depth: int) -> None:
    open_, close = OPENERS[lang]
    inner = open_ * depth + b"cmd" + close * depth
    sinks = {
        "python": b"import os\nos.system(" + inner + b")\n",
        "javascript": b"const cp = require('child_process');\ncp.exec(" + inner + b");\n",
        "typescript": b"import { exec } from 'child_process';\nexec(" + inner + b");\n",
        "tsx": b"import { exec } from 'child_process';\nexec(" + inner + b");\n",
        "rust": b"fn f() { std::process::Command::new(" + inner + b").output(); }\n",
        "go": b'package m\nimport "os/exec"\nfunc f() { exec.Command(' + inner + b").Run() }\n",
        "shell": b"bash -c " + inner + b"\n",
    }
    analyse(f"deep.{EXTENSION[lang]}", sinks[lang])
