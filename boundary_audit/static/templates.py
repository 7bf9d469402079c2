"""Hand-built JSON: BA501 findings at string templates that embed a command in JSON text.

A literal that opens a JSON object with a quoted key (matched by the serialized-command
query) is followed up to the whole string-building expression around it (`+` chains,
f-strings, `.format`, `Sprintf`, `format!`), evaluated, and reported when a model-controlled
value lands under a command-like key without a serializer at the interpolation point.
"""

from __future__ import annotations

import tree_sitter as ts

from boundary_audit.static import classify as C
from boundary_audit.static import findings as F
from boundary_audit.static.checks.base import TemplateSite
from boundary_audit.static.shellsyntax import json_holes, looks_like_json
from boundary_audit.static.sinks import FileContext, Result
from boundary_audit.static.values import Str, join_all, options
from boundary_audit.taxonomy import BoundaryClass as BC


def serialized_templates(sites: list[TemplateSite], ctx: FileContext) -> list[Result]:
    """BA501 findings for hand-built JSON templates holding model-controlled values."""
    out: list[Result] = []
    seen: set[tuple[int, int]] = set()
    eng = ctx.engine
    for site in sites:
        root = template_root(site.span)
        key = (root.start_byte, root.end_byte)
        if key in seen:
            continue
        seen.add(key)
        value = eng.value(root)
        for o in options(value):
            s = o if isinstance(o, Str) else None
            if s is None or not looks_like_json(s):
                continue
            bad = [
                h.hole
                for h in json_holes(s)
                if h.hole.prov.origins
                and not _serializer(h.hole.sanitizer)
                and h.key is not None
                and _command_key(h.key)
            ]
            if not bad:
                continue
            prov = join_all(h.prov for h in bad)
            v = C.Verdict(BC.SERIALIZED, 0, prov, "JSON built by string concatenation")
            primary = F.node_location(ctx.path, root, ctx.commit, "hand-built JSON")
            out.append((F.build(v, primary, eng.ex.lang, "string template", None), False))
            break
    return out


def _command_key(key: str) -> bool:
    """JSON keys that carry a command: `cmd`, `command`, `code`, `script`, `input`, `args`..."""
    from boundary_audit.static.knowledge import is_command_name, is_tool_param

    return (
        is_command_name(key)
        or is_tool_param(key)
        or key in ("input", "args", "params", "exec", "run")
    )


def _serializer(name: str | None) -> bool:
    from boundary_audit.static.knowledge import SANITIZERS, SERIALIZER

    return any(v[0] == name and v[1] == SERIALIZER for v in SANITIZERS.values())


_TEMPLATE_PARENTS = frozenset(
    {
        "binary_operator",
        "concatenated_string",
        "binary_expression",
        "template_string",
        "parenthesized_expression",
        "interpolated_string_expression",
        "token_tree",
        "macro_invocation",
        "argument_list",
        "arguments",
        "call",
        "call_expression",
    }
)


def template_root(node: ts.Node) -> ts.Node:
    """The outermost string-building expression around literal `node`."""
    cur = node
    while cur.parent is not None and cur.parent.type in _TEMPLATE_PARENTS:
        parent = cur.parent
        if parent.type in ("argument_list", "arguments"):
            call = parent.parent
            if call is None or not _formats(call):
                break
            cur = call
            continue
        if parent.type in ("call", "call_expression") and not _formats(parent):
            break
        cur = parent
    return cur


def _formats(call: ts.Node) -> bool:
    fn = call.child_by_field_name("function")
    text = fn.text.decode("utf-8", "replace") if fn is not None and fn.text else ""
    return text.endswith(("format", "Sprintf", "format!"))
