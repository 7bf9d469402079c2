"""Rust → IR.

Calls keep their `::` paths (`Command::new`, canonicalised through `use` items to
`std::process::Command::new`); method chains become attribute calls, so a builder such as
`Command::new("bash").arg("-c").arg(x)` evaluates to a command handle with its argv.
`format!` is a template, `vec![...]` a sequence; both are read from the macro's token tree
by a small token parser. `&x`, `x?`, `x.await`, `x as T` are transparent; an `if` expression
is a choice between its arms' final expressions. A statement `c.arg(x);` on a builder
variable, or `v.push(x);`, redefines the variable.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.extract.rust_macros import RustMacros
from boundary_audit.static.extract.strings import unescape
from boundary_audit.static.ir import (
    Alt,
    Attr,
    Call,
    Def,
    Expr,
    Function,
    Index,
    Lit,
    Map,
    Op,
    Param,
    Ref,
    Seq,
    Span,
    Spread,
    Tmpl,
    Unknown,
)

_TRANSPARENT = frozenset(
    {
        "reference_expression",
        "try_expression",
        "await_expression",
        "parenthesized_expression",
        "type_cast_expression",
        "unary_expression",
    }
)
_BUILDER = frozenset(
    {
        "arg",
        "args",
        "env",
        "envs",
        "current_dir",
        "stdin",
        "stdout",
        "stderr",
        "push",
        "push_str",
        "extend",
        "env_clear",
        "kill_on_drop",
    }
)


class RustExtractor(RustMacros, Extractor):
    """IR extraction for Rust files."""

    FUNCTION_TYPES = frozenset({"function_item", "closure_expression"})
    BLOCK_TYPES = frozenset({"block", "match_arm", "else_clause"})
    SCOPE_STOP = frozenset(
        {"function_item", "closure_expression", "impl_item", "trait_item", "mod_item"}
    )
    CALL_TYPES = frozenset({"call_expression"})
    FUNCTION_QUERY = "(function_item) @fn"
    DESCEND = frozenset(
        {
            "source_file",
            "block",
            "expression_statement",
            "if_expression",
            "else_clause",
            "match_expression",
            "match_block",
            "match_arm",
            "for_expression",
            "while_expression",
            "loop_expression",
            "unsafe_block",
            "async_block",
            "let_chain",
        }
    )

    def convert(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        t = node.type
        if t in ("identifier", "self", "shorthand_field_identifier"):
            return Ref(span, self.text(node))
        if t == "string_literal":
            return Lit(span, unescape("".join(self.text(c) for c in node.named_children)))
        if t == "raw_string_literal":
            return Lit(span, self.text(node).split('"', 1)[1].rsplit('"', 1)[0])
        if t in ("integer_literal", "float_literal", "boolean_literal", "char_literal"):
            return Lit(span, self.text(node), is_str=False)
        if t == "field_expression":
            return Attr(
                span,
                self.expr(node.child_by_field_name("value")),
                self.text(node.child_by_field_name("field")),
            )
        if t == "index_expression":
            kids = node.named_children
            key = (
                None if len(kids) < 2 or kids[1].type == "range_expression" else self.expr(kids[1])
            )
            return Index(span, self.expr(kids[0] if kids else None), key)
        if t == "call_expression":
            fnode = node.child_by_field_name("function")
            anode = node.child_by_field_name("arguments")
            args = (
                tuple(
                    self.expr(a)
                    for a in anode.named_children
                    if a.type not in ("line_comment", "block_comment")
                )
                if anode
                else ()
            )
            return Call(span, self.expr(fnode), self.dotted(fnode), args)
        if t == "macro_invocation":
            return self.macro(node)
        if t == "array_expression":
            return Seq(
                span, tuple(self.expr(c) for c in node.named_children if "comment" not in c.type)
            )
        if t == "struct_expression":
            return self.struct(node)
        if t == "if_expression":
            arms = [
                node.child_by_field_name("consequence"),
                node.child_by_field_name("alternative"),
            ]
            return Alt(span, tuple(self.expr(a) for a in arms if a is not None))
        if t in ("block", "else_clause"):
            tail = [c for c in node.named_children if "comment" not in c.type]
            return (
                self.expr(tail[-1])
                if tail and tail[-1].type != "expression_statement"
                else Unknown(span)
            )
        if t in _TRANSPARENT:
            kids = [
                c
                for c in node.named_children
                if c.type not in ("mutable_specifier",) and "comment" not in c.type
            ]
            return self.expr(kids[0]) if kids else Unknown(span)
        if t == "binary_expression" and self.text(node.child_by_field_name("operator")) == "+":
            left, right = (
                self.expr(node.child_by_field_name("left")),
                self.expr(node.child_by_field_name("right")),
            )
            parts = left.parts if isinstance(left, Tmpl) else (left,)
            return Tmpl(span, (*parts, right), "concat")
        if t == "closure_expression":
            return Unknown(span)
        if t == "scoped_identifier":
            return Ref(span, self.text(node))
        return Op(span, tuple(self.expr(c) for c in node.named_children if "comment" not in c.type))

    def struct(self, node: ts.Node) -> Expr:
        items: list[tuple[str | None, Expr]] = []
        body = node.child_by_field_name("body")
        for f in body.named_children if body is not None else ():
            if f.type == "field_initializer":
                items.append(
                    (
                        self.text(f.child_by_field_name("field")),
                        self.expr(f.child_by_field_name("value")),
                    )
                )
            elif f.type == "shorthand_field_initializer" and f.named_children:
                items.append((self.text(f.named_children[0]), self.expr(f.named_children[0])))
        return Map(Span.of(node), tuple(items))

    def dotted(self, node: ts.Node | None) -> str:
        """`a.b.c` for field chains, `A::b` for paths; other bases become `?`."""
        if node is None:
            return "?"
        if node.type == "field_expression":
            value = self.dotted(node.child_by_field_name("value"))
            return f"{value}.{self.text(node.child_by_field_name('field'))}"
        if node.type in ("identifier", "self", "scoped_identifier"):
            return self.text(node)
        if node.type in _TRANSPARENT and node.named_children:
            return self.dotted(node.named_children[0])
        return "?"

    # -- macros -----------------------------------------------------------------------------

    # -- functions --------------------------------------------------------------------------
    def describe_function(self, node: ts.Node) -> Function:
        name = self.text(node.child_by_field_name("name")) or "<closure>"
        cls = None
        cur = node.parent
        while cur is not None and cur.type not in self.FUNCTION_TYPES:
            if cur.type in ("impl_item", "trait_item"):
                cls = self.text(cur.child_by_field_name("type") or cur.child_by_field_name("name"))
                break
            cur = cur.parent
        fn = Function(
            node.start_byte,
            name,
            Span.of(node),
            node,
            cls=cls,
            parent=self.enclosing_function(node),
        )
        params = node.child_by_field_name("parameters")
        plist = (
            [p for p in params.named_children if p.type in ("parameter", "self_parameter")]
            if params
            else []
        )
        fn.is_method = any(p.type == "self_parameter" for p in plist)
        out: list[Param] = []
        for p in plist:
            pat = p.child_by_field_name("pattern")
            if p.type == "parameter" and pat is not None:
                while pat.named_children and pat.type != "identifier":
                    pat = pat.named_children[-1]
                out.append(
                    self.new_param(
                        self.text(pat), len(out), p, None, self.text(p.child_by_field_name("type"))
                    )
                )
        fn.params = tuple(out)
        return fn

    def defs_of(self, node: ts.Node) -> Iterator[Def]:
        t = node.type
        if t == "let_declaration":
            value = node.child_by_field_name("value")
            if value is not None:
                yield from self.bind(node, node.child_by_field_name("pattern"), self.expr(value))
        elif t == "assignment_expression":
            yield from self.bind(
                node, node.child_by_field_name("left"), self.expr(node.child_by_field_name("right"))
            )
        elif t == "compound_assignment_expr":
            left = node.child_by_field_name("left")
            target = self.target(left)
            if target:
                joined = Tmpl(
                    Span.of(node), (self.expr(left), self.expr(node.child_by_field_name("right")))
                )
                yield Def(target, joined, node.end_byte, Span.of(node), "augment")
        elif t == "for_expression":
            body = node.child_by_field_name("body")
            item = Index(Span.of(node), self.expr(node.child_by_field_name("value")), None)
            yield from self.bind(
                node,
                node.child_by_field_name("pattern"),
                item,
                body.start_byte if body is not None else node.end_byte,
                "loop",
            )
        elif (
            t == "expression_statement"
            and node.named_children
            and node.named_children[0].type == "call_expression"
        ):
            yield from self.builder_statement(node, node.named_children[0])

    def bind(
        self,
        stmt: ts.Node,
        pat: ts.Node | None,
        value: Expr,
        pos: int | None = None,
        kind: str = "assign",
    ) -> Iterator[Def]:
        if pat is None:
            return
        at = stmt.end_byte if pos is None else pos
        if pat.type in ("tuple_pattern", "slice_pattern"):
            for i, elem in enumerate(pat.named_children):
                yield from self.bind(
                    stmt, elem, Index(value.span, value, Lit(value.span, str(i), False)), at, kind
                )
            return
        if pat.type == "mut_pattern" and pat.named_children:
            pat = pat.named_children[-1]
        target = self.target(pat)
        if target:
            yield Def(target, value, at, Span.of(stmt), kind)

    def builder_statement(self, stmt: ts.Node, call: ts.Node) -> Iterator[Def]:
        """`c.arg("-c").arg(x);` or `v.push(x);` redefine `c` / `v`."""
        cur = call
        methods = []
        while cur is not None and cur.type == "call_expression":
            fnode = cur.child_by_field_name("function")
            if fnode is None or fnode.type != "field_expression":
                return
            methods.append(self.text(fnode.child_by_field_name("field")))
            nxt = fnode.child_by_field_name("value")
            if nxt is None:
                return
            cur = nxt
        target = self.target(cur)
        if not target or not methods or not all(m in _BUILDER for m in methods):
            return
        if methods == ["push"] or methods == ["push_str"] or methods == ["extend"]:
            args = call.child_by_field_name("arguments")
            added = [self.expr(a) for a in args.named_children] if args is not None else []
            tail: Expr = (
                Seq(Span.of(call), tuple(added))
                if methods != ["push_str"]
                else (added[0] if added else Unknown(Span.of(call)))
            )
            if methods == ["extend"] and added:
                tail = Spread(Span.of(call), added[0])
                tail = Seq(Span.of(call), (tail,))
            yield Def(
                target,
                Tmpl(Span.of(call), (self.expr(cur), tail)),
                stmt.end_byte,
                Span.of(stmt),
                "mutate",
            )
            return
        yield Def(target, self.expr(call), stmt.end_byte, Span.of(stmt), "mutate")

    def target(self, node: ts.Node | None) -> str:
        """`x` or `self.a.b` for an assignable place; '' otherwise."""
        if node is None:
            return ""
        if node.type in ("identifier", "self"):
            return self.text(node)
        if node.type == "field_expression":
            base = self.target(node.child_by_field_name("value"))
            return f"{base}.{self.text(node.child_by_field_name('field'))}" if base else ""
        return ""

    def return_of(self, node: ts.Node) -> Expr | None:
        if node.type == "return_expression" and node.named_children:
            return self.expr(node.named_children[0])
        return None

    def filled(self, fn: Function) -> Function:
        """A function's tail expression is also a return value."""
        if fn.key in self._filled:
            return fn
        super().filled(fn)
        body = fn.node.child_by_field_name("body") if fn.key != -1 else None
        if body is not None:
            tail = [c for c in body.named_children if "comment" not in c.type]
            if (
                tail
                and tail[-1].type != "expression_statement"
                and not tail[-1].type.endswith(("declaration", "_item"))
            ):
                fn.returns.append(self.expr(tail[-1]))
            elif body.type != "block":
                fn.returns.append(self.expr(body))
        return fn

    # -- imports ----------------------------------------------------------------------------
    def canonical(self, dotted: str) -> str:
        """Resolve the first path segment through `use` items (keeping `::`)."""
        head, sep, rest = dotted.partition("::")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}{sep}{rest}" if rest else target

    def extract_imports(self) -> dict[str, str]:
        table: dict[str, str] = {}
        for node in self.top_statements():
            if node.type == "use_declaration":
                arg = node.child_by_field_name("argument")
                if arg is not None:
                    self.use_tree(arg, "", table)
        return table

    def use_tree(self, node: ts.Node, prefix: str, table: dict[str, str]) -> None:
        t = node.type

        def join(s: str) -> str:
            return f"{prefix}::{s}" if prefix else s

        if t in ("scoped_identifier", "identifier", "crate", "self"):
            full = join(self.text(node))
            table[full.rsplit("::", 1)[-1]] = full
        elif t == "use_as_clause":
            full = join(self.text(node.child_by_field_name("path")))
            table[self.text(node.child_by_field_name("alias"))] = full
        elif t == "scoped_use_list":
            path = node.child_by_field_name("path")
            inner = join(self.text(path)) if path is not None else prefix
            lst = node.child_by_field_name("list")
            for c in lst.named_children if lst is not None else ():
                self.use_tree(c, inner, table)
        elif t == "use_list":
            for c in node.named_children:
                self.use_tree(c, prefix, table)
