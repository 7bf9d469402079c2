"""Rust macro calls as IR: `format!` and friends as templates, `vec![...]` as sequences.

tree-sitter leaves a macro's arguments as an unparsed token tree; a small parser here reads
the comma-separated items back as expressions (paths, field reads, method calls, literals,
nested macros and `name = value` pairs), enough for the argv and format strings that reach
a process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static.extract.strings import split_brace_format
from boundary_audit.static.ir import Attr, Call, Expr, Lit, Op, Ref, Seq, Span, Tmpl, Unknown

TEMPLATE_MACROS = frozenset({"format", "format_args", "concat"})


class RustMacros:
    """Mixin for the Rust extractor: macro invocations and their token trees."""

    if TYPE_CHECKING:  # provided by Extractor

        def expr(self, node: ts.Node | None) -> Expr: ...

        def text(self, node: ts.Node | None) -> str: ...

    def macro(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        name = self.text(node.child_by_field_name("macro")).rsplit("::", 1)[-1]
        trees = [c for c in node.children if c.type == "token_tree"]
        items = self.token_items(trees[0]) if trees else []
        if name == "vec":
            return Seq(span, tuple(items))
        if name in TEMPLATE_MACROS and items and isinstance(items[0], Lit):
            return self.format_template(items[0].span, items[0].text, items[1:])
        return Op(span, tuple(items))

    def format_template(self, span: Span, fmt: str, args: list[Expr]) -> Expr:
        named = {}
        positional = []
        for a in args:
            if (
                isinstance(a, Call)
                and a.name == "="
                and len(a.args) == 2
                and isinstance(a.args[0], Ref)
            ):
                named[a.args[0].name] = a.args[1]
            else:
                positional.append(a)
        parts: list[Expr] = []
        for piece in split_brace_format(fmt):
            if isinstance(piece, str):
                parts.append(Lit(span, piece))
            elif isinstance(piece, int):
                parts.append(positional[piece] if piece < len(positional) else Unknown(span))
            else:
                parts.append(named.get(piece[0], Ref(span, piece[0])))
        return Tmpl(span, tuple(parts), "format")

    def token_items(self, tree: ts.Node) -> list[Expr]:
        """The comma-separated items of a macro's token tree, each parsed as an expression."""
        groups: list[list[ts.Node]] = [[]]
        for c in tree.children[1:-1]:
            if c.type == ",":
                groups.append([])
            elif "comment" not in c.type:
                groups[-1].append(c)
        return [self.token_expr(g) for g in groups if g]

    def token_expr(self, toks: list[ts.Node]) -> Expr:
        """A small expression parser over macro tokens: paths, fields, calls, literals, `=`."""
        span = Span(
            toks[0].start_byte,
            toks[-1].end_byte,
            toks[0].start_point[0],
            toks[0].start_point[1],
            toks[-1].end_point[0],
            toks[-1].end_point[1],
        )
        eq = next((i for i, t in enumerate(toks) if t.type == "="), None)
        if eq is not None and eq > 0:
            return Call(
                span,
                Ref(span, "="),
                "=",
                (self.token_expr(toks[:eq]), self.token_expr(toks[eq + 1 :])),
            )
        i = 0
        while i < len(toks) and toks[i].type in ("&", "*", "mutable_specifier", "mut"):
            i += 1
        if i >= len(toks):
            return Unknown(span)
        first = toks[i]
        if (
            first.type == "identifier"
            and i + 2 < len(toks)
            and toks[i + 1].type == "!"
            and toks[i + 2].type == "token_tree"
        ):
            fake_items = self.token_items(toks[i + 2])
            name = self.text(first)
            value: Expr = (
                self.format_template(fake_items[0].span, fake_items[0].text, fake_items[1:])
                if name in TEMPLATE_MACROS and fake_items and isinstance(fake_items[0], Lit)
                else Seq(span, tuple(fake_items))
                if name == "vec"
                else Op(span, tuple(fake_items))
            )
            i += 3
        elif first.type in (
            "string_literal",
            "raw_string_literal",
            "integer_literal",
            "identifier",
            "self",
        ):
            value = self.expr(first)
            i += 1
        else:
            return Op(
                span,
                tuple(self.expr(t) for t in toks if t.type in ("identifier", "string_literal")),
            )
        while i < len(toks):
            tok = toks[i]
            if tok.type == "." and i + 1 < len(toks) and toks[i + 1].type == "identifier":
                name = self.text(toks[i + 1])
                if i + 2 < len(toks) and toks[i + 2].type == "token_tree":
                    args = tuple(self.token_items(toks[i + 2]))
                    value = Call(span, Attr(span, value, name), f"?.{name}", args)
                    i += 3
                else:
                    value = Attr(span, value, name)
                    i += 2
            elif tok.type == "::" and i + 1 < len(toks) and toks[i + 1].type == "identifier":
                path = f"{self.text(first)}::{self.text(toks[i + 1])}"
                value = Ref(span, path)
                i += 2
            elif tok.type == "token_tree" and self.text(tok).startswith("("):
                value = Call(
                    span,
                    value,
                    self.text(first) if isinstance(value, Ref) else "?",
                    tuple(self.token_items(tok)),
                )
                i += 1
            elif tok.type in ("?", "as"):
                i += 1 if tok.type == "?" else len(toks)
            else:
                return Op(span, (value,))
        return value
