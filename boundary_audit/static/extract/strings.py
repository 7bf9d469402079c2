"""Helpers shared by the extractors for string literals and format strings.

Resolves backslash escapes the way C-like languages do, and splits `str.format`, `%` and
`printf`-style format strings into literal pieces and argument slots, so that a call such as
`'bash -c "{}"'.format(cmd)` becomes the same template as `f'bash -c "{cmd}"'`.
"""

from __future__ import annotations

import re

_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "`": "`",
    "$": "$",
    "e": "\x1b",
}
_ESCAPE_RE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|.)", re.S)


def unescape(text: str) -> str:
    """`text` with C-style backslash escapes resolved; unknown escapes keep their backslash."""
    if "\\" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] == "x" and len(code) == 3:
            return chr(int(code[1:], 16))
        if code[0] == "u" and len(code) > 1:
            digits = code[2:-1] if code[1] == "{" else code[1:]
            try:
                return chr(int(digits, 16))
            except ValueError:
                return m.group(0)
        if code == "\n":
            return ""
        return _ESCAPES.get(code, m.group(0))

    return _ESCAPE_RE.sub(sub, text)


_BRACE_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def split_brace_format(fmt: str) -> list[str | int | tuple[str]]:
    """Pieces of a `str.format` / Rust `format!` string: literal str, positional int, or (name,).

    `{}` slots are numbered in order; `{0}` keeps its number; `{name}` / `{name:?}` become
    `(name,)`. Doubled braces are literal.
    """
    pieces: list[str | int | tuple[str]] = []
    auto = 0
    last = 0
    for m in _BRACE_FIELD.finditer(fmt):
        if m.start() > last:
            pieces.append(fmt[last : m.start()])
        last = m.end()
        token = m.group(0)
        if token in ("{{", "}}"):
            pieces.append(token[0])
            continue
        field = re.split(r"[!:.\[]", m.group(1), maxsplit=1)[0].strip()
        if field == "":
            pieces.append(auto)
            auto += 1
        elif field.isdigit():
            pieces.append(int(field))
        else:
            pieces.append((field,))
    if last < len(fmt):
        pieces.append(fmt[last:])
    return _merge(pieces)


_PERCENT_FIELD = re.compile(
    r"%(?:\(([^)]*)\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlLqjzt]*([a-zA-Z%])"
)


def split_percent_format(fmt: str) -> list[str | int | tuple[str]]:
    """Pieces of a `%` / printf / Sprintf format: literal str, positional int or (name,).

    `%%` is literal; `%(name)s` becomes `(name,)`. The conversion letters (to spot Go's `%q`)
    come from `percent_verbs`.
    """
    pieces: list[str | int | tuple[str]] = []
    index = 0
    last = 0
    for m in _PERCENT_FIELD.finditer(fmt):
        if m.start() > last:
            pieces.append(fmt[last : m.start()])
        last = m.end()
        if m.group(2) == "%":
            pieces.append("%")
            continue
        if m.group(1) is not None:
            pieces.append((m.group(1),))
        else:
            pieces.append(index)
            index += 1
    if last < len(fmt):
        pieces.append(fmt[last:])
    return _merge(pieces)


def percent_verbs(fmt: str) -> list[str]:
    """The conversion letters of the positional slots of a printf-style format, in order."""
    return [
        m.group(2) for m in _PERCENT_FIELD.finditer(fmt) if m.group(2) != "%" and m.group(1) is None
    ]


def _merge(pieces: list[str | int | tuple[str]]) -> list[str | int | tuple[str]]:
    out: list[str | int | tuple[str]] = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + p
        else:
            out.append(p)
    return out
