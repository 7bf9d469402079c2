"""A Python port of npm `shell-quote` 1.x `parse(s)` (checked against 1.12.0), as OpenHands uses.

`parse` splits a command line into entries: strings (words, with bash-like quote removal and
`$VAR` expansion against `env`, an empty mapping by default, so unset variables become "" and
a lone `$` stays `$`), `{"op": ...}` for control operators (`|`, `&&`, `;`, `>`, `<(` ...),
`{"op": "glob", "pattern": ...}` for words with an unquoted `*` or `?`, and
`{"comment": ...}` for an unquoted `#` that starts a word (everything after it is dropped).
OpenHands' launcher keeps only the strings (`parse(value).filter(e => typeof e === "string")`),
which `argv()` reproduces: operators, globs and comments vanish without a trace.

Only the default options are ported (no custom escape character, no `splitUnquoted`, string
env values only). JavaScript's `\\s` (Unicode spaces) and ASCII-only `\\w`/`\\d` are spelled
out, because Python's differ. The test vectors in tests/test_transport_argv_shell_quote.py
were recorded from the real package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeAlias

Entry: TypeAlias = "str | dict[str, str]"

_WS = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
"""JavaScript's `\\s` class (Python's `\\s` differs at \\x1c-\\x1f, \\x85 and \\ufeff)."""

_CONTROL = (
    "(?:"
    + "|".join(
        [
            r"\|\|",
            r"\&(?:\&|>>?)",
            r";;\&?",
            r"[;|]\&",
            r"\<\(",
            r"\<\<\<",
            r"\<\<-",
            r"\<\<(?!\()",
            r">>",
            r">[&|(]",
            r"<[&>]",
            r"[&;()|<>]",
        ]
    )
    + ")"
)
_CONTROL_RE = re.compile(_CONTROL + r"\Z")
_META = r"|&;()<> \t"
"""shell-quote's META, as the inside of a regex character class (`\\t` is a tab)."""
_SINGLE_QUOTE = "'([^']*?)'"
_ANSI_C_BODY = r"(?:\\[\s\S]|[^\\'])*?"
_ANSI_C_QUOTE = r"\$'" + _ANSI_C_BODY + "'"
_ANSI_C_AT = re.compile(r"\$'" + _ANSI_C_BODY + r"(?:(')|\\?\Z)")
_ANSI_C_ESCAPE = re.compile(
    r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|c(?:\\\\|[\s\S])|"
    r"[abeEfnrtv\\'\"?])"
)
_ANSI_C_LETTERS = "abeEfnrtv"
_ANSI_C_CHARS = "\x07\b\x1b\x1b\f\n\r\t\v"
_BAREWORD = (
    r"(\\['\"$\\"
    + _META
    + r"]|\$\$|\$(?!"
    + _ANSI_C_QUOTE[2:]
    + r")|[^"
    + _WS
    + r"'\"$"
    + _META
    + r"])+"
)
_DOUBLE_QUOTE = r'"(?:\\[\s\S]|[^"\\])*"'
_CHUNKER = re.compile(
    "("
    + _CONTROL
    + ")|("
    + _ANSI_C_QUOTE
    + "|"
    + _BAREWORD
    + "|"
    + _DOUBLE_QUOTE
    + "|"
    + _SINGLE_QUOTE
    + ")+"
)
_VAR_NAME_END = re.compile(r"[^A-Za-z0-9_]")


class ShellQuoteError(ValueError):
    """What shell-quote throws (`Bad substitution: ...`)."""


def parse(s: str, env: Mapping[str, str] | None = None) -> list[Entry]:
    """`require("shell-quote").parse(s, env)` with default options."""
    env = {} if env is None else env
    entries: list[Entry] = []
    commented = False
    for match in _match_all(s):
        token = match.group(0)
        if not token or commented:
            continue
        if _CONTROL_RE.match(token):
            entries.append({"op": token})
            continue
        parsed, commented = _parse_word(token, s, match.start(), env)
        entries.extend(parsed)
    return entries


def argv(s: str, env: Mapping[str, str] | None = None) -> list[str]:
    """OpenHands' `parseCommand`: the string entries of `parse(s)`, everything else dropped."""
    return [e for e in parse(s, env) if isinstance(e, str)]


def _match_all(s: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    pos = 0
    while pos <= len(s):
        match = _CHUNKER.search(s, pos)
        if match is None:
            break
        found.append(match)
        pos = match.end() if match.end() > match.start() else match.start() + 1
    return found


def _get_var(env: Mapping[str, str], key: str) -> str:
    value = env.get(key)
    if value is None:
        return "" if key != "" else "$"
    return value


def _parse_word(
    token: str, whole: str, offset: int, env: Mapping[str, str]
) -> tuple[list[Entry], bool]:
    """One chunk of the input: a word, or a word plus the comment that ends the input."""
    quote = ""
    escaped = False
    out: list[str] = []
    is_glob = False
    i = 0
    while i < len(token):
        c = token[i]
        is_glob = is_glob or (not quote and c in "*?")
        if escaped:
            out.append(c)
            escaped = False
        elif quote:
            i, closed = _in_quote(token, i, quote, out, env)
            if closed:
                quote = ""
        elif c in "\"'":
            quote = c
        elif _CONTROL_RE.match(c):
            return [{"op": token}], False
        elif c == "#":
            comment: dict[str, str] = {"comment": whole[offset + i + 1 :]}
            word = "".join(out)
            return ([word, comment] if word else [comment]), True
        elif c == "\\":
            escaped = True
        elif c == "$" and token[i + 1 : i + 2] == "'" and _closes_ansi_c(token, i):
            end = _ANSI_C_AT.search(token, i)
            assert end is not None
            out.append(_expand_ansi_c(token[i + 2 : end.end() - 1]))
            i = end.end() - 1
        elif c == "$":
            value, i = _parse_env_var(token, i, env)
            out.append(value)
        else:
            out.append(c)
        i += 1
    word = "".join(out)
    if is_glob:
        return [{"op": "glob", "pattern": word}], False
    return [word], False


def _in_quote(
    token: str, i: int, quote: str, out: list[str], env: Mapping[str, str]
) -> tuple[int, bool]:
    """Handle token[i] inside `quote`: (index of the last character consumed, quote closed)."""
    c = token[i]
    if c == quote:
        return i, True
    if quote == "'":
        out.append(c)
    elif c == "\\":
        i += 1
        c = token[i : i + 1]
        out.append(c if c in ('"', "\\", "$") else "\\" + c)
    elif c == "$":
        value, i = _parse_env_var(token, i, env)
        out.append(value)
    else:
        out.append(c)
    return i, False


def _parse_env_var(token: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """Expand the variable whose `$` is at token[i]; return its value and its last index."""
    i += 1
    char = token[i : i + 1]
    if char == "{":
        i += 1
        if token[i : i + 1] == "}":
            raise ShellQuoteError("Bad substitution: " + token[i - 2 : i + 1])
        depth, end = 1, i
        while depth > 0 and end < len(token):
            if token[end] == "{" and token[end - 1] == "$":
                depth += 1
            elif token[end] == "}":
                depth -= 1
            end += 1
        if depth != 0:
            raise ShellQuoteError("Bad substitution: " + token[i:])
        end -= 1
        return _get_var(env, token[i:end]), end
    if char and char in "*@#?$!-":
        return _get_var(env, char), i
    rest = token[i:]
    stop = _VAR_NAME_END.search(rest)
    if stop is None:
        return _get_var(env, rest), len(token)
    return _get_var(env, rest[: stop.start()]), i + stop.start() - 1


def _closes_ansi_c(token: str, i: int) -> bool:
    match = _ANSI_C_AT.search(token, i)
    return bool(match and match.start() == i and match.group(1))


def _expand_ansi_c(body: str) -> str:
    return _ANSI_C_ESCAPE.sub(_expand_escape, body).split("\0")[0]


def _expand_escape(m: re.Match[str]) -> str:
    escape = m.group(1)
    kind = escape[0]
    if kind == "c":
        ctrl = escape[1]
        return "\x7f" if ctrl == "?" else chr(ord(ctrl) & 0x1F)
    if kind in "xuU":
        cp = int(escape[1:], 16)
        return m.group(0) if cp > 0x10FFFF else chr(cp)
    if "0" <= kind <= "7":
        return chr(int(escape, 8) & 0xFF)
    letter = _ANSI_C_LETTERS.find(escape)
    return escape if letter < 0 else _ANSI_C_CHARS[letter]
