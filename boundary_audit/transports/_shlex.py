"""`shlex.split(s)` in linear time: the same tokens, the same ValueError messages.

`shlex.shlex.read_token` grows each token with `self.token += nextchar` on an attribute,
which CPython cannot do in place, so one long token costs time quadratic in its length (a
1 MB reply took 24 s, a 10 MB one ran for more than 15 minutes). `split` below is the same
state machine for the mode `shlex.split` uses (posix, whitespace_split, no commenters, no
punctuation_chars) that consumes whole runs of ordinary characters with one regex match and
builds each token from a list of pieces.

The rules it reproduces (Python 3.11 `shlex.py`, `read_token`):

- whitespace is exactly `' \\t\\r\\n'`; any other character (NUL, `#`, `;`, non-ASCII, other
  Unicode spaces) is part of a word;
- outside quotes a backslash takes the next character literally, a backslash at the end is
  `ValueError("No escaped character")`;
- `'...'` is literal; inside `"..."` a backslash escapes only `\\` and `"` (before any other
  character it is kept: `"\\$"` gives `\\$`), and a backslash at the end is again
  `No escaped character`;
- an unterminated quote is `ValueError("No closing quotation")`;
- quotes join the word around them, and an empty quoted word (`''`, `""`) is a token.

`tests/test_transport_argv_shlex.py` checks equality with `shlex.split` by property tests.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[^ \t\r\n'\"\\]+")
"""A run of word characters outside quotes."""
_SPACE = re.compile(r"[ \t\r\n]+")
_IN_DOUBLE = re.compile(r'[^"\\]+')
"""A run of characters inside double quotes that neither closes them nor escapes."""


def split(s: str) -> list[str]:
    """`shlex.split(s)`, in time linear in `len(s)`."""
    tokens: list[str] = []
    pieces: list[str] = []
    in_word = False  # a token is open (it may still be empty: `''`)
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t\r\n":
            if in_word:
                tokens.append("".join(pieces))
                pieces, in_word = [], False
            i = _SPACE.match(s, i).end()  # type: ignore[union-attr]
        elif c == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            pieces.append(s[i + 1])
            in_word = True
            i += 2
        elif c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            pieces.append(s[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i = _double_quoted(s, i + 1, pieces)
            in_word = True
        else:
            end = _PLAIN.match(s, i).end()  # type: ignore[union-attr]
            pieces.append(s[i:end])
            in_word = True
            i = end
    if in_word:
        tokens.append("".join(pieces))
    return tokens


def _double_quoted(s: str, i: int, pieces: list[str]) -> int:
    """Consume a double-quoted part whose body starts at `i`; return the index after it."""
    n = len(s)
    while True:
        if i >= n:
            raise ValueError("No closing quotation")
        c = s[i]
        if c == '"':
            return i + 1
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            nxt = s[i + 1]
            pieces.append(nxt if nxt in '\\"' else "\\" + nxt)
            i += 2
        else:
            end = _IN_DOUBLE.match(s, i).end()  # type: ignore[union-attr]
            pieces.append(s[i:end])
            i = end
