"""Short, exact descriptions of how two byte strings differ, for validator failure reasons.

`describe_difference(expected, actual)` names the first differing byte offset, both sizes when
they differ, and an escaped excerpt of both sides around the offset, e.g.
`first difference at byte 15 (got 97 bytes, expected 57): expected …"k\\slash and `date` here…"…
got …"k\\slash and Mon Nov 30 …"…`; an excerpt ends without … where the data ends. Escaping is
unambiguous and one line: printable ASCII stays, `\\n`, `\\t`, `\\\\`, `\\"` and `\\xNN` otherwise,
with valid non-ASCII UTF-8 shown as is (C1 controls and line separators as `\\uNNNN`).
"""

from __future__ import annotations

CONTEXT = 12
"""Bytes of context shown before the first difference."""
EXCERPT = 24
"""Bytes shown from the first difference onwards."""

_ESCAPES = {
    ord("\n"): "\\n",
    ord("\t"): "\\t",
    ord("\r"): "\\r",
    ord("\\"): "\\\\",
    ord('"'): '\\"',
}


def escape(data: bytes) -> str:
    """One-line, unambiguous rendering of `data` (without surrounding quotes)."""
    out: list[str] = []
    text = data.decode("utf-8", "surrogateescape")
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code in _ESCAPES:
            out.append(_ESCAPES[code])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def quoted(data: bytes, limit: int = 60) -> str:
    """`data` escaped and double-quoted, cut with … beyond `limit` bytes."""
    if len(data) > limit:
        return f'"{escape(data[:limit])}"…'
    return f'"{escape(data)}"'


def first_difference(expected: bytes, actual: bytes) -> int | None:
    """Offset of the first byte where the two differ (a length difference counts), or None."""
    if expected == actual:
        return None
    for i, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return i
    return min(len(expected), len(actual))


def _excerpt(data: bytes, at: int) -> str:
    start = max(0, at - CONTEXT)
    lead = "…" if start > 0 else ""
    tail = "…" if at + EXCERPT < len(data) else ""
    return f'{lead}"{escape(data[start : at + EXCERPT])}"{tail}'


def describe_difference(expected: bytes, actual: bytes, actual_size: int | None = None) -> str:
    """Why `actual` is not `expected` in one line; "" when they are equal.

    `actual_size` is the true size when `actual` is only the start of something larger.
    """
    at = first_difference(expected, actual)
    size = len(actual) if actual_size is None else actual_size
    if at is None and size == len(expected):
        return ""
    at = len(expected) if at is None else at
    head = f"first difference at byte {at}"
    if size != len(expected):
        head += f" (got {size} bytes, expected {len(expected)})"
    return f"{head}: expected {_excerpt(expected, at)} got {_excerpt(actual, at)}"
