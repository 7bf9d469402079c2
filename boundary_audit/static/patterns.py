"""What text each query pattern needs in a file before it can match there, read from the
pattern itself, so a process compiles only the patterns its files can match.

Compiling a pattern costs tree-sitter an analysis of the grammar: about 2.5 ms for a Python
`call` pattern, 60 ms for the 26 patterns of the Python sink pass, most of a small scan's
query cost. A pattern with `(#eq? @c "exec_run")` or `(#any-of? @c "write" "writelines")` on
a capture it always makes can only match a file that contains one of those strings, since a
node's text is a slice of the file. So each such predicate gives a group of strings, one of
which the file must contain; a pattern with no such predicate (only `#match?`, or predicates
on optional captures) is always needed. A capture is always made when it is not under a `?`
or `*` quantifier and, inside an alternation `[...]`, it is made by every branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Need = tuple[tuple[bytes, ...], ...]
"""Groups of strings: a file must contain at least one string of every group."""

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+) | (?P<comment>;[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<capture>@[\w.\-]+)
  | (?P<open>[(\[]) | (?P<close>[)\]])
  | (?P<quant>[?*+])
  | (?P<field>!?[\w\-]+:?)
  | (?P<anchor>\.)
  | (?P<predicate>\#[\w\-]+[?!]?)
    """,
    re.VERBOSE,
)
_STRING_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_EQUALS = frozenset({"#eq?", "#any-eq?"})
_ONE_OF = frozenset({"#any-of?"})


@dataclass
class _Element:
    kind: str
    """"(" a node, "[" an alternation, "#" a predicate, "atom" a bare node or string."""
    children: list[_Element] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)
    quantifier: str = ""
    args: list[tuple[str, str]] = field(default_factory=list)
    """A predicate's name and arguments: ("name", "#eq?"), ("capture", "_m"), ("string", s)."""


def _unquote(token: str) -> str:
    out: list[str] = []
    i = 1
    while i < len(token) - 1:
        ch = token[i]
        if ch == "\\" and i + 1 < len(token) - 1:
            i += 1
            out.append(_STRING_ESCAPES.get(token[i], token[i]))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected {text[pos : pos + 20]!r} in a query pattern")
        kind = m.lastgroup or ""
        if kind not in ("ws", "comment"):
            out.append((kind, m.group()))
        pos = m.end()
    return out


def _parse(tokens: list[tuple[str, str]]) -> list[_Element]:
    """The elements of a token sequence (one pattern, or several)."""
    stack: list[_Element] = [_Element("(")]
    for kind, text in tokens:
        top = stack[-1]
        if kind == "open":
            element = _Element("(" if text == "(" else "[")
            top.children.append(element)
            stack.append(element)
        elif kind == "close":
            if len(stack) == 1:
                raise ValueError("unbalanced ')' in a query pattern")
            stack.pop()
        elif top.kind == "#":
            if kind == "capture":
                top.args.append(("capture", text[1:]))
            elif kind == "string":
                top.args.append(("string", _unquote(text)))
            else:
                top.args.append(("other", text))
        elif kind == "predicate" and top.kind == "(" and not top.children:
            top.kind = "#"
            top.args.append(("name", text))
        elif kind == "capture" and top.children:
            top.children[-1].captures.append(text[1:])
        elif kind == "quant" and top.children:
            top.children[-1].quantifier = text
        elif kind == "string" or (kind == "field" and not text.endswith(":")):
            top.children.append(_Element("atom"))
        # field names, anchors and negated fields do not change what is captured
    if len(stack) != 1:
        raise ValueError("unbalanced '(' in a query pattern")
    return stack[0].children


def _always_captures(element: _Element, name: str) -> bool:
    if element.quantifier in ("?", "*") or element.kind == "#":
        return False
    if name in element.captures:
        return True
    if element.kind == "[":
        return bool(element.children) and all(_always_captures(c, name) for c in element.children)
    return any(_always_captures(c, name) for c in element.children)


def _predicates(element: _Element) -> list[_Element]:
    found = [element] if element.kind == "#" else []
    for child in element.children:
        found.extend(_predicates(child))
    return found


def pattern_need(text: str) -> Need:
    """The strings a file must contain for the pattern `text` (one top-level pattern, with
    its captures and predicates) to match there; () when nothing is known."""
    roots = _parse(_tokens(text))
    groups: list[tuple[bytes, ...]] = []
    for root in roots:
        for pred in _predicates(root):
            name = pred.args[0][1] if pred.args else ""
            rest = pred.args[1:]
            if name not in _EQUALS and name not in _ONE_OF:
                continue
            if not rest or rest[0][0] != "capture" or len(rest) < 2:
                continue
            strings = [value for kind, value in rest[1:] if kind == "string"]
            if len(strings) != len(rest) - 1 or (name in _EQUALS and len(strings) != 1):
                continue
            if not any(_always_captures(r, rest[0][1]) for r in roots):
                continue
            groups.append(tuple(sorted({s.encode("utf-8") for s in strings})))
    return tuple(sorted(set(groups)))


def split_patterns(text: str) -> list[str]:
    """The top-level patterns of a query source, each with what follows it up to the next
    one (its captures, quantifier, comments); text before the first is dropped."""
    starts: list[int] = []
    depth = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ";":
            nl = text.find("\n", i)
            i = len(text) if nl < 0 else nl
        elif ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "([":
            if depth == 0:
                starts.append(i)
            depth += 1
        elif ch in ")]":
            depth -= 1
        i += 1
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]


def wanted(needs: tuple[Need, ...], data: bytes) -> frozenset[int]:
    """The indices of the patterns whose needs `data` meets."""
    present: dict[bytes, bool] = {}

    def has(s: bytes) -> bool:
        hit = present.get(s)
        if hit is None:
            hit = present[s] = s in data
        return hit

    return frozenset(
        i for i, need in enumerate(needs) if all(any(has(s) for s in group) for group in need)
    )
