"""Project-local shell-quoting helpers are found by their name and the POSIX idiom."""

from __future__ import annotations

import pytest

from boundary_audit.static.quoters import find

CASES = [
    (
        "py",
        b'def sh_quote(s):\n    return "\'" + s.replace("\'", "\'\\\\\'\'") + "\'"\n',
        {"sh_quote"},
    ),
    ("py", b'def q(s):\n    return "\'" + s.replace("\'", "\'\\\\\'\'") + "\'"\n', set()),
    (
        "py",
        b'def escape_arg(s):\n    return "\'" + s.replace("\'", "\'\\"\'\\"\'") + "\'"\n',
        {"escape_arg"},
    ),
    ("py", b"def shell_quote(s):\n    return s\n", set()),
    (
        "js",
        b"export function shellQuote(value: string): string {\n"
        b"  return `'${value.replace(/'/g, \"'\\\\''\")}'`;\n}\n",
        {"shellQuote"},
    ),
    (
        "js",
        b'const quoteArg = (s) => "\'" + s.split("\'").join("\'\\\\\'\'") + "\'";\n',
        {"quoteArg"},
    ),
    (
        "js",
        b"class Sh {\n  static escapeShellArg(s: string): string {\n"
        b'    return "\'" + s.replaceAll("\'", "\'\\\\\'\'") + "\'";\n  }\n}\n',
        {"escapeShellArg"},
    ),
    (
        "go",
        b"func shellQuote(s string) string {\n"
        b"\treturn \"'\" + strings.ReplaceAll(s, \"'\", `'\\''`) + \"'\"\n}\n",
        {"shellQuote"},
    ),
    (
        "rs",
        b"fn quote_word(s: &str) -> String {\n"
        b"    format!(\"'{}'\", s.replace('\\'', \"'\\\\''\"))\n}\n",
        {"quote_word"},
    ),
    ("sh", b"quote() { printf \"'%s'\" \"${1//\\'/\\'\\\\\\'\\'}\"; }\n", set()),
]


@pytest.mark.parametrize(("family", "text", "names"), CASES)
def test_helpers_are_named_by_what_they_do(family: str, text: bytes, names: set[str]) -> None:
    assert find(text, family) == frozenset(names)


def test_a_header_too_far_before_the_idiom_is_not_its_function() -> None:
    text = (
        b"def shell_quote(s):\n"
        + b"    x = 1\n" * 60
        + b"    return s.replace(\"'\", \"'\\\\''\")\n"
    )
    assert find(text, "py") == frozenset()
