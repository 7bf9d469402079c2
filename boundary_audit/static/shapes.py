"""Helpers over abstract values: attribute and handle reads, templates, list concatenation.

Shared by the dataflow engine (`dataflow.py`), call evaluation (`calls.py`) and handles
(`handles.py`): what a dotted name reads, which model-output origin an attribute or key
read is, how a value contributes pieces to a string template, and how `a + b` joins lists.
"""

from __future__ import annotations

import re

from boundary_audit.static import knowledge as K
from boundary_audit.static.ir import Attr, Expr, Ref, Span
from boundary_audit.static.values import (
    UNKNOWN,
    Alts,
    AValue,
    Hole,
    Lst,
    Obj,
    Opq,
    Origin,
    Prov,
    Ser,
    Str,
    Text,
    Tok,
    options,
    prov_of,
)
from boundary_audit.taxonomy import Contract


def dotted(expr: Expr) -> str:
    """`a.b.c` for a chain of names and attribute reads; '' otherwise."""
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Attr):
        base = dotted(expr.base)
        return f"{base}.{expr.name}" if base else ""
    return ""


def attr_origin(name: str, base: str, path: str, span: Span) -> Origin | None:
    """The model-output origin an attribute or key read represents, if any."""
    last = base.rsplit(".", 1)[-1]
    name = K.normal_attr(name)
    if name in K.TOOL_ARG_ATTRS and not (name == "arguments" and last in K.PERSON_INPUTS):
        return Origin("tool-call", f"{base or '…'}.{name}", path, span, Contract.NATIVE)
    if name in K.TOOL_INPUT_ATTRS and last and K.TOOL_RECEIVER.search(last):
        return Origin("tool-call", f"{base}.{name}", path, span, Contract.NATIVE)
    if name in K.ACTION_ATTRS:
        return Origin("parsed-action", f"{base or '…'}.{name}", path, span, Contract.RAW)
    return None


def handle_attr(handle: Obj, name: str) -> AValue:
    """`proc.stdin`, `file.name` and friends on a handle value."""
    if handle.kind == "process" and name in ("stdin", "stdin_writer"):
        return Obj(
            "stdin",
            handle.api,
            handle.argv,
            handle.pty,
            handle.shell,
            None,
            handle.path,
            handle.span,
            handle.notes,
        )
    if handle.kind == "file" and name == "name" and handle.target is not None:
        return handle.target
    return Opq(prov_of(handle))


def tag_var(value: AValue, var: tuple[str, int, str]) -> AValue:
    """`value` with every unknown piece recording that it was read from variable `var`."""
    if isinstance(value, Opq):
        return Opq(value.prov.with_var(var))
    if isinstance(value, Ser):
        return Ser(value.serializer, value.prov.with_var(var), value.path, value.span)
    if isinstance(value, Str):
        return Str(
            tuple(
                Hole(p.prov.with_var(var), p.sanitizer, p.span) if isinstance(p, Hole) else p
                for p in value.pieces
            )
        )
    if isinstance(value, Obj) and value.kind == "file":
        return value
    return value


def with_origin(value: AValue, origin: Origin) -> AValue:
    """`value` with `origin` added to every part of it that is not constant: the literal
    words of a shape stay literal, its holes, opaque parts and unknown rest now come from
    `origin` too (a tool entry's parameter in the shape its callers give it)."""
    prov = Prov(frozenset({origin}))

    def add(p: Prov) -> Prov:
        return p if p.constant else p.join(prov)

    if isinstance(value, Str):
        return Str(
            tuple(
                Hole(add(p.prov), p.sanitizer, p.span) if isinstance(p, Hole) else p
                for p in value.pieces
            )
        )
    if isinstance(value, Lst):
        items = tuple(with_origin(i, origin) for i in value.items)
        rest = add(value.rest) if value.rest is not None else None
        return Lst(items, rest, value.path, value.span)
    if isinstance(value, Tok):
        return Tok(with_origin(value.source, origin), value.tokenizer, value.path, value.span)
    if isinstance(value, Ser):
        return Ser(value.serializer, add(value.prov), value.path, value.span)
    if isinstance(value, Opq):
        return Opq(add(value.prov))
    if isinstance(value, Alts):
        return Alts(tuple(with_origin(o, origin) for o in value.options))
    return value


def str_pieces(value: AValue) -> list[Text | Hole]:
    """The pieces `value` contributes when it is interpolated into a string."""
    if isinstance(value, Str):
        return list(value.pieces)
    if isinstance(value, Ser):
        return [Hole(value.prov, value.serializer, value.span)]
    if isinstance(value, Obj) and value.kind == "file" and value.target is not None:
        return str_pieces(value.target)
    opts = list(options(value))
    if len(opts) > 1 and all(isinstance(o, Str) for o in opts):
        return [Hole(prov_of(value), _common_sanitizer(opts))]
    return [Hole(prov_of(value))]


def _common_sanitizer(opts: list[AValue]) -> str | None:
    names: set[str | None] = set()
    for o in opts:
        if isinstance(o, Str):
            holes = [p for p in o.pieces if isinstance(p, Hole)]
            names.update(h.sanitizer for h in holes)
            if not holes:
                continue
    names.discard(None)
    return names.pop() if len(names) == 1 else None


_FIELD = re.compile(r"\{\{|\}\}|\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}")


def format_template(template: Str, positional: list[AValue], named: dict[str, AValue]) -> Str:
    """`template.format(*positional, **named)` (Python's str.format): each replacement field
    of the literal pieces becomes the pieces of its argument; `{{`/`}}` stay literal braces.
    A field naming no given argument becomes a hole of unknown content."""
    out: list[Text | Hole] = []
    auto = 0
    for piece in template.pieces:
        if isinstance(piece, Hole):
            out.append(piece)
            continue
        at = 0
        for m in _FIELD.finditer(piece.text):
            out.append(Text(piece.text[at : m.start()], piece.path, piece.span))
            at = m.end()
            if m.group(1) is None:
                out.append(Text(m.group(0)[0], piece.path, piece.span))
                continue
            name = re.split(r"[.\[]", m.group(1), maxsplit=1)[0]
            value: AValue | None
            if not name:
                value = positional[auto] if auto < len(positional) else None
                auto += 1
            elif name.isdigit():
                value = positional[int(name)] if int(name) < len(positional) else None
            else:
                value = named.get(name)
            out.extend(str_pieces(value) if value is not None else [Hole(UNKNOWN)])
        out.append(Text(piece.text[at:], piece.path, piece.span))
    return Str(tuple(merge_text([p for p in out if not (isinstance(p, Text) and not p.text)])))


def merge_text(pieces: list[Text | Hole]) -> list[Text | Hole]:
    """Adjacent literal pieces merged (keeping the first piece's location)."""
    out: list[Text | Hole] = []
    for p in pieces:
        if isinstance(p, Text) and out and isinstance(out[-1], Text):
            prev = out[-1]
            out[-1] = Text(prev.text + p.text, prev.path or p.path, prev.span or p.span)
        else:
            out.append(p)
    return out


def concat_lists(parts: list[AValue], path: str, span: Span) -> Lst:
    """`a + b` where some operands are lists: one list, unknown operands become `rest`."""
    items: list[AValue] = []
    rest: Prov | None = None
    for p in parts:
        if isinstance(p, Lst):
            items.extend(p.items)
            if p.rest is not None:
                rest = p.rest if rest is None else rest.join(p.rest)
        else:
            best = next((o for o in options(p) if isinstance(o, Lst)), None)
            if best is not None:
                items.extend(best.items)
            else:
                rest = prov_of(p) if rest is None else rest.join(prov_of(p))
    return Lst(tuple(items), rest, path, span)
