"""Go → IR.

`fmt.Sprintf`/`fmt.Errorf` with a literal format become templates (`%q` slots are quoted by
`strconv.Quote`, recorded as a language-quote sanitizer); `+` on strings is concatenation;
slice literals are sequences and struct literals maps; `x...` in a call is a spread;
`[]byte(x)`/`string(x)` conversions are transparent. Definitions come from `:=`, `=`,
`var`, `+=`, `range` clauses and `x = append(x, ...)`. Imports map the package name (or
alias) to its path, so `exec.Command` canonicalises to `os/exec.Command`.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.extract.strings import percent_verbs, split_percent_format, unescape
from boundary_audit.static.ir import (
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
        "parenthesized_expression",
        "unary_expression",
        "type_conversion_expression",
        "type_assertion_expression",
    }
)
_FORMATTERS = frozenset({"fmt.Sprintf", "fmt.Errorf"})


_STRUCT_PROCESSES = frozenset({"os/exec.Cmd"})
"""Struct types whose composite literal is a process builder (see `handles.exec_struct`)."""


class GoExtractor(Extractor):
    """IR extraction for Go files."""

    FUNCTION_TYPES = frozenset({"function_declaration", "method_declaration", "func_literal"})
    BLOCK_TYPES = frozenset({"block"})
    SCOPE_STOP = FUNCTION_TYPES
    CALL_TYPES = frozenset({"call_expression"})
    FUNCTION_QUERY = "[(function_declaration) (method_declaration)] @fn"
    DESCEND = frozenset(
        {
            "source_file",
            "block",
            "statement_list",
            "if_statement",
            "for_statement",
            "expression_switch_statement",
            "type_switch_statement",
            "expression_case",
            "default_case",
            "type_case",
            "select_statement",
            "communication_case",
            "labeled_statement",
            "var_declaration",
            "var_spec_list",
            "expression_statement",
        }
    )

    def convert(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        t = node.type
        if t in ("identifier", "field_identifier", "package_identifier"):
            return Ref(span, self.text(node))
        if t == "interpreted_string_literal":
            return Lit(span, unescape("".join(self.text(c) for c in node.named_children)))
        if t == "raw_string_literal":
            return Lit(span, self.text(node)[1:-1])
        if t in ("int_literal", "float_literal", "true", "false", "nil", "rune_literal"):
            return Lit(span, self.text(node), is_str=False)
        if t == "selector_expression":
            return Attr(
                span,
                self.expr(node.child_by_field_name("operand")),
                self.text(node.child_by_field_name("field")),
            )
        if t == "index_expression":
            return Index(
                span,
                self.expr(node.child_by_field_name("operand")),
                self.expr(node.child_by_field_name("index")),
            )
        if t == "slice_expression":
            return Index(span, self.expr(node.child_by_field_name("operand")), None)
        if t == "call_expression":
            return self.call(node)
        if t == "variadic_argument":
            return Spread(span, self.expr(node.named_children[0] if node.named_children else None))
        if t == "binary_expression" and self.text(node.child_by_field_name("operator")) == "+":
            left, right = (
                self.expr(node.child_by_field_name("left")),
                self.expr(node.child_by_field_name("right")),
            )
            parts = left.parts if isinstance(left, Tmpl) and left.kind == "concat" else (left,)
            return Tmpl(span, (*parts, right), "concat")
        if t == "composite_literal":
            return self.composite(node)
        if t in _TRANSPARENT:
            operand = node.child_by_field_name("operand")
            kids = (
                [operand]
                if operand is not None
                else [c for c in node.named_children if c.type != "comment"]
            )
            return self.expr(kids[-1]) if kids else Unknown(span)
        if t == "func_literal":
            return Unknown(span)
        return Op(span, tuple(self.expr(c) for c in node.named_children if c.type != "comment"))

    def call(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        fnode = node.child_by_field_name("function")
        anode = node.child_by_field_name("arguments")
        args = (
            tuple(self.expr(a) for a in anode.named_children if a.type != "comment")
            if anode
            else ()
        )
        name = self.dotted(fnode)
        if self.canonical(name) in _FORMATTERS and args and isinstance(args[0], Lit):
            return self.sprintf(args[0].span, args[0].text, args[1:])
        if name in ("string", "[]byte") and args:
            return args[0]
        return Call(span, self.expr(fnode), name, args)

    def sprintf(self, span: Span, fmt: str, args: tuple[Expr, ...]) -> Expr:
        verbs = percent_verbs(fmt)
        parts: list[Expr] = []
        for piece in split_percent_format(fmt):
            if isinstance(piece, str):
                parts.append(Lit(span, piece))
            elif isinstance(piece, int):
                value = args[piece] if piece < len(args) else Unknown(span)
                if piece < len(verbs) and verbs[piece] == "q":
                    value = Call(span, Ref(span, "strconv.Quote"), "strconv.Quote", (value,))
                parts.append(value)
        return Tmpl(span, tuple(parts), "sprintf")

    def composite(self, node: ts.Node) -> Expr:
        body = node.child_by_field_name("body")
        elems = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        if any(e.type == "keyed_element" for e in elems):
            items: list[tuple[str | None, Expr]] = []
            for e in elems:
                if e.type == "keyed_element" and len(e.named_children) == 2:
                    key, value = (self.element(k) for k in e.named_children)
                    name = (
                        key.name
                        if isinstance(key, Ref)
                        else key.text
                        if isinstance(key, Lit)
                        else None
                    )
                    items.append((name, value))
            tnode = node.child_by_field_name("type")
            tname = self.text(tnode).replace(" ", "") if tnode is not None else ""
            if tnode is not None and self.canonical(tname) in _STRUCT_PROCESSES:
                # NOTE: `exec.Cmd{Path: p, Args: argv}` builds a command like a constructor call.
                kwargs = tuple((k, v) for k, v in items if k is not None)
                return Call(Span.of(node), Ref(Span.of(tnode), tname), tname, (), kwargs)
            return Map(Span.of(node), tuple(items))
        return Seq(Span.of(node), tuple(self.element(e) for e in elems))

    def element(self, node: ts.Node) -> Expr:
        if node.type == "literal_element" and node.named_children:
            return self.expr(node.named_children[0])
        return self.expr(node)

    def dotted(self, node: ts.Node | None) -> str:
        """`a.b.c` for selector chains; other bases become `?`."""
        if node is None:
            return "?"
        if node.type == "selector_expression":
            operand = self.dotted(node.child_by_field_name("operand"))
            return f"{operand}.{self.text(node.child_by_field_name('field'))}"
        if node.type == "identifier":
            return self.text(node)
        if node.type == "slice_type":
            return self.text(node)
        return "?"

    # -- functions --------------------------------------------------------------------------
    def describe_function(self, node: ts.Node) -> Function:
        name = self.text(node.child_by_field_name("name")) or "<func>"
        cls = None
        receiver = node.child_by_field_name("receiver")
        if receiver is not None:
            cls = self.text(receiver).strip("()").split()[-1].lstrip("*")
        fn = Function(
            node.start_byte,
            name,
            Span.of(node),
            node,
            cls=cls,
            parent=self.enclosing_function(node),
            is_method=receiver is not None,
        )
        params = node.child_by_field_name("parameters")
        out: list[Param] = []
        for decl in params.named_children if params is not None else ():
            names = decl.children_by_field_name("name")
            for n in names:
                out.append(
                    self.new_param(
                        self.text(n),
                        len(out),
                        decl,
                        None,
                        self.text(decl.child_by_field_name("type")),
                    )
                )
        fn.params = tuple(out)
        return fn

    def defs_of(self, node: ts.Node) -> Iterator[Def]:
        t = node.type
        if t == "call_expression":
            yield from self.decode_into(node)
        if t in ("short_var_declaration", "assignment_statement"):
            op = (
                self.text(node.child_by_field_name("operator"))
                if t == "assignment_statement"
                else ":="
            )
            lefts = self.exprs(node.child_by_field_name("left"))
            rights = self.exprs(node.child_by_field_name("right"))
            yield from self.pairs(node, lefts, rights, op == "+=")
            for rhs in rights:  # `err := json.Unmarshal(b, &v)` (also an `if` initializer)
                if rhs.type == "call_expression":
                    yield from self.decode_into(rhs)
        elif t == "var_spec":
            names = node.children_by_field_name("name")
            rights = self.exprs(node.child_by_field_name("value"))
            yield from self.pairs(node, names, rights, False)
        elif t == "range_clause":
            lefts = self.exprs(node.child_by_field_name("left"))
            right = self.expr(node.child_by_field_name("right"))
            body = node.parent.child_by_field_name("body") if node.parent is not None else None
            pos = body.start_byte if body is not None else node.end_byte
            for i, left in enumerate(lefts):
                target = self.target(left)
                if target and target != "_":
                    value = (
                        Index(Span.of(node), right, None)
                        if i == len(lefts) - 1
                        else Lit(Span.of(node), "0", False)
                    )
                    yield Def(target, value, pos, Span.of(node), "loop")

    def decode_into(self, node: ts.Node) -> Iterator[Def]:
        """`json.Unmarshal(data, &v)` and `dec.Decode(&v)` define `v` from the decoded data."""
        name = self.dotted(node.child_by_field_name("function"))
        if not name.endswith(("Unmarshal", ".Decode")):
            return
        anode = node.child_by_field_name("arguments")
        args = [a for a in anode.named_children if a.type != "comment"] if anode is not None else []
        out = args[-1] if args else None
        if out is None or out.type != "unary_expression" or not out.named_children:
            return
        target = self.target(out.named_children[-1])
        source = (
            self.expr(args[0]) if len(args) > 1 else self.expr(node.child_by_field_name("function"))
        )
        if target:
            yield Def(target, source, node.end_byte, Span.of(node), "decode")

    def exprs(self, node: ts.Node | None) -> list[ts.Node]:
        if node is None:
            return []
        if node.type == "expression_list":
            return [c for c in node.named_children if c.type != "comment"]
        return [node]

    def pairs(
        self, stmt: ts.Node, lefts: list[ts.Node], rights: list[ts.Node], augment: bool
    ) -> Iterator[Def]:
        for i, left in enumerate(lefts):
            target = self.target(left)
            if not target or target == "_":
                continue
            if len(rights) == len(lefts):
                value = self.expr(rights[i])
            elif len(rights) == 1:
                value = self.expr(rights[0])
                if len(lefts) > 1:
                    value = Index(value.span, value, Lit(value.span, str(i), False))
            else:
                continue
            if augment:
                value = Tmpl(Span.of(stmt), (self.expr(left), value))
            yield Def(
                target, value, stmt.end_byte, Span.of(stmt), "augment" if augment else "assign"
            )

    def target(self, node: ts.Node | None) -> str:
        """`x` or `c.Stdin` for an assignable place; '' otherwise."""
        if node is None:
            return ""
        if node.type == "identifier":
            return self.text(node)
        if node.type == "selector_expression":
            base = self.target(node.child_by_field_name("operand"))
            return f"{base}.{self.text(node.child_by_field_name('field'))}" if base else ""
        return ""

    def return_of(self, node: ts.Node) -> Expr | None:
        if node.type == "return_statement" and node.named_children:
            values = self.exprs(node.named_children[0])
            return self.expr(values[0]) if values else None
        return None

    # -- imports ----------------------------------------------------------------------------
    def extract_imports(self) -> dict[str, str]:
        table: dict[str, str] = {}
        for node in self.top_statements():
            if node.type == "import_spec":
                path_node = node.child_by_field_name("path")
                path = self.text(path_node).strip('"`') if path_node is not None else ""
                alias = node.child_by_field_name("name")
                local = self.text(alias) if alias is not None else path.rsplit("/", 1)[-1]
                if path and local not in ("_", "."):
                    table[local] = path
        return table

    def unqualified_call_ok(self, call: Call) -> bool:
        """Go functions of the same package are called by bare name."""
        return False
