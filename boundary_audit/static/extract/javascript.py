"""JavaScript / TypeScript / TSX → IR (the three grammars share the node types used here).

Covers template literals and `+` as templates, tagged templates (`` $`...` ``) as calls,
arrays and object literals, `const`/`let`/assignments with destructuring, `+=`, `for..of`,
`argv.push(x)`, `this.x = ...`; functions, arrow functions and methods (an arrow function
takes the name of the variable or object key it is bound to); ES imports and `require`.
Which functions are tool handlers is `entries.py`'s business.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from boundary_audit.static.extract.base import Extractor
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

_SCALARS = frozenset({"number", "true", "false", "null", "undefined"})
_WRAPPERS = frozenset(
    {
        "parenthesized_expression",
        "await_expression",
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "type_assertion",
    }
)


def _module(spec: str) -> str:
    return spec[5:] if spec.startswith("node:") else spec


CLASS_TYPES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
"""A class declaration, a TypeScript `abstract class`, a class expression."""

FUNCTION_WRAPPERS = frozenset(
    {
        "Effect.fn",
        "Effect.fnUntraced",
        "useCallback",
        "React.useCallback",
        "memoize",
        "_.memoize",
        "once",
        "_.once",
        "debounce",
        "_.debounce",
        "throttle",
        "_.throttle",
    }
)
"""Calls that return a function calling the one they are given with the same arguments
(Effect's traced functions, React's memoised callbacks, lodash's wrappers): the function
takes the name of the variable or property holding the result."""


class JavaScriptExtractor(Extractor):
    """IR extraction for JavaScript and TypeScript files."""

    FUNCTION_TYPES = frozenset(
        {
            "function_declaration",
            "function_expression",
            "function",
            "arrow_function",
            "method_definition",
            "generator_function_declaration",
            "generator_function",
        }
    )
    BLOCK_TYPES = frozenset({"statement_block", "switch_case", "else_clause", "catch_clause"})
    SCOPE_STOP = FUNCTION_TYPES | CLASS_TYPES
    CALL_TYPES = frozenset({"call_expression", "new_expression"})
    FUNCTION_QUERY = (
        "[(function_declaration) (function_expression) (arrow_function) "
        "(method_definition) (generator_function_declaration)] @fn"
    )
    DESCEND = frozenset(
        {
            "program",
            "statement_block",
            "expression_statement",
            "lexical_declaration",
            "variable_declaration",
            "if_statement",
            "else_clause",
            "for_statement",
            "for_in_statement",
            "while_statement",
            "do_statement",
            "try_statement",
            "catch_clause",
            "finally_clause",
            "switch_statement",
            "switch_body",
            "switch_case",
            "switch_default",
            "labeled_statement",
            "export_statement",
        }
    )

    # -- expressions ------------------------------------------------------------------------
    def convert(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        t = node.type
        if t in ("identifier", "shorthand_property_identifier", "this"):
            return Ref(span, self.text(node))
        if t == "string":
            return Lit(span, unescape("".join(self.text(c) for c in node.named_children)))
        if t == "template_string":
            return self.template(node)
        if t == "regex":
            return Lit(span, self.text(node))
        if t in _SCALARS:
            return Lit(span, self.text(node), is_str=False)
        if t == "member_expression":
            return Attr(
                span,
                self.expr(node.child_by_field_name("object")),
                self.text(node.child_by_field_name("property")),
            )
        if t == "subscript_expression":
            return Index(
                span,
                self.expr(node.child_by_field_name("object")),
                self.expr(node.child_by_field_name("index")),
            )
        if t in ("call_expression", "new_expression"):
            return self.call(node)
        if t == "binary_expression":
            return self.binary(node)
        if t == "ternary_expression":
            return Alt(
                span,
                (
                    self.expr(node.child_by_field_name("consequence")),
                    self.expr(node.child_by_field_name("alternative")),
                ),
            )
        if t == "array":
            return Seq(
                span, tuple(self.expr(c) for c in node.named_children if c.type != "comment")
            )
        if t == "spread_element":
            return Spread(span, self.expr(node.named_children[0] if node.named_children else None))
        if t == "object":
            return self.obj(node)
        if t in _WRAPPERS:
            kids = [c for c in node.named_children if c.type != "comment"]
            return self.expr(kids[0]) if kids else Unknown(span)
        if t in self.FUNCTION_TYPES:
            return Unknown(span)
        return Op(span, tuple(self.expr(c) for c in node.named_children if c.type != "comment"))

    def template(self, node: ts.Node) -> Expr:
        parts: list[Expr] = []
        for c in node.named_children:
            if c.type == "string_fragment":
                parts.append(Lit(Span.of(c), self.text(c)))
            elif c.type == "escape_sequence":
                parts.append(Lit(Span.of(c), unescape(self.text(c))))
            elif c.type == "template_substitution":
                inner = [k for k in c.named_children if k.type != "comment"]
                parts.append(self.expr(inner[0]) if inner else Unknown(Span.of(c)))
        if all(isinstance(p, Lit) for p in parts):
            return Lit(Span.of(node), "".join(p.text for p in parts if isinstance(p, Lit)))
        return Tmpl(Span.of(node), tuple(parts), "template")

    def call(self, node: ts.Node) -> Expr:
        fnode = node.child_by_field_name("function") or node.child_by_field_name("constructor")
        anode = node.child_by_field_name("arguments")
        args: list[Expr] = []
        if anode is not None and anode.type == "template_string":
            args.append(self.expr(anode))
        elif anode is not None:
            args.extend(self.expr(a) for a in anode.named_children if a.type != "comment")
        return Call(Span.of(node), self.expr(fnode), self.dotted(fnode), tuple(args))

    def binary(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        op = self.text(node.child_by_field_name("operator"))
        left = self.expr(node.child_by_field_name("left"))
        right = self.expr(node.child_by_field_name("right"))
        if op == "+":
            parts = left.parts if isinstance(left, Tmpl) and left.kind == "concat" else (left,)
            return Tmpl(span, (*parts, right), "concat")
        if op in ("||", "??"):
            return Alt(span, (left, right))
        return Op(span, (left, right))

    def obj(self, node: ts.Node) -> Expr:
        items: list[tuple[str | None, Expr]] = []
        for c in node.named_children:
            if c.type == "pair":
                key = c.child_by_field_name("key")
                name = (
                    self.text(key).strip("'\"`")
                    if key is not None and key.type != "computed_property_name"
                    else None
                )
                items.append((name, self.expr(c.child_by_field_name("value"))))
            elif c.type == "shorthand_property_identifier":
                items.append((self.text(c), self.expr(c)))
            elif c.type == "spread_element":
                items.append((None, self.expr(c)))
        return Map(Span.of(node), tuple(items))

    def dotted(self, node: ts.Node | None) -> str:
        """Dotted callee text; non-name bases become `?`."""
        parts: list[str] = []
        cur = node
        while cur is not None and cur.type == "member_expression":
            parts.append(self.text(cur.child_by_field_name("property")))
            cur = cur.child_by_field_name("object")
        while cur is not None and cur.type in _WRAPPERS and cur.named_children:
            cur = cur.named_children[0]
        parts.append(
            self.text(cur) if cur is not None and cur.type in ("identifier", "this") else "?"
        )
        return ".".join(reversed(parts))

    # -- functions --------------------------------------------------------------------------
    def describe_function(self, node: ts.Node) -> Function:
        name, cls, is_method = self.naming(node)
        fn = Function(
            node.start_byte,
            name,
            Span.of(node),
            node,
            cls=cls,
            parent=self.enclosing_function(node),
            is_method=is_method,
        )
        params = node.child_by_field_name("parameters")
        single = node.child_by_field_name("parameter")
        fn.params = (
            tuple(self.params(params))
            if params is not None
            else ((self.new_param(self.text(single), 0, single),) if single is not None else ())
        )
        return fn

    def _wrapped_in(self, node: ts.Node) -> tuple[str, ts.Node] | None:
        """(name, holder) for a function handed to a `FUNCTION_WRAPPERS` call whose result a
        variable or property holds (`const run = Effect.fn("run")(function* (input) {…})`):
        calling `run(...)` calls the function with those arguments, so it takes the name."""
        args = node.parent
        call = args.parent if args is not None and args.type == "arguments" else None
        if call is None or call.type != "call_expression":
            return None
        callee = call.child_by_field_name("function")
        if callee is not None and callee.type == "call_expression":  # curried: Effect.fn("n")(f)
            callee = callee.child_by_field_name("function")
        if callee is None or "".join(self.text(callee).split()) not in FUNCTION_WRAPPERS:
            return None
        holder = call.parent
        if holder is not None and holder.type == "variable_declarator":
            return self.text(holder.child_by_field_name("name")), holder
        if holder is not None and holder.type == "pair":
            return self.text(holder.child_by_field_name("key")), holder
        return None

    def naming(self, node: ts.Node) -> tuple[str, str | None, bool]:
        named = node.child_by_field_name("name")
        parent = node.parent
        if named is not None:
            name = self.text(named)
        elif parent is not None and parent.type == "variable_declarator":
            name = self.text(parent.child_by_field_name("name"))
        elif parent is not None and parent.type == "pair":
            name = self.text(parent.child_by_field_name("key"))
        elif parent is not None and parent.type == "assignment_expression":
            name = self.text(parent.child_by_field_name("left")).rsplit(".", 1)[-1]
        elif (holder := self._wrapped_in(node)) is not None:
            name, parent = holder
        else:
            name = "<anonymous>"
        cls = None
        cur = node.parent
        while cur is not None and cur.type not in self.FUNCTION_TYPES:
            if cur.type in CLASS_TYPES:
                cls = self.text(cur.child_by_field_name("name")) or "<class>"
                break
            cur = cur.parent
        return (
            name,
            cls,
            node.type == "method_definition" or (parent is not None and parent.type == "pair"),
        )

    def params(self, node: ts.Node) -> Iterator[Param]:
        for index, p in enumerate(c for c in node.named_children if c.type != "comment"):
            pat = (
                p.child_by_field_name("pattern")
                if p.type in ("required_parameter", "optional_parameter")
                else p
            )
            default = None
            if pat is not None and pat.type == "assignment_pattern":
                default = self.expr(pat.child_by_field_name("right"))
                pat = pat.child_by_field_name("left")
            if pat is not None and pat.type == "rest_pattern" and pat.named_children:
                pat = pat.named_children[0]
            if pat is None:
                continue
            if pat.type == "identifier":
                yield self.new_param(self.text(pat), index, p, default)
            elif pat.type == "object_pattern":
                for key, local in self.object_pattern(pat):
                    yield self.new_param(local, index, p, None, field=key)

    def object_pattern(self, pat: ts.Node) -> Iterator[tuple[str, str]]:
        """(key, local name) pairs of a destructuring pattern `{a, b: c}`."""
        for c in pat.named_children:
            if c.type == "shorthand_property_identifier_pattern":
                yield self.text(c), self.text(c)
            elif c.type == "pair_pattern":
                value = c.child_by_field_name("value")
                if value is not None and value.type == "assignment_pattern":
                    value = value.child_by_field_name("left")
                if value is not None and value.type == "identifier":
                    yield self.text(c.child_by_field_name("key")), self.text(value)
            elif c.type == "object_assignment_pattern":
                left = c.child_by_field_name("left")
                if left is not None:
                    yield self.text(left), self.text(left)

    def defs_of(self, node: ts.Node) -> Iterator[Def]:
        t = node.type
        if t == "variable_declarator":
            yield from self.bind(
                node, node.child_by_field_name("name"), node.child_by_field_name("value")
            )
        elif t == "assignment_expression":
            yield from self.bind(
                node, node.child_by_field_name("left"), node.child_by_field_name("right")
            )
        elif t == "augmented_assignment_expression":
            left = node.child_by_field_name("left")
            target = self.target(left)
            if target and self.text(node.child_by_field_name("operator")) == "+=":
                value = Tmpl(
                    Span.of(node), (self.expr(left), self.expr(node.child_by_field_name("right")))
                )
                yield Def(target, value, node.end_byte, Span.of(node), "augment")
        elif t == "for_in_statement":
            right = node.child_by_field_name("right")
            body = node.child_by_field_name("body")
            item = Index(Span.of(node), self.expr(right), None)
            yield from self.bind(
                node,
                node.child_by_field_name("left"),
                None,
                item,
                "loop",
                body.start_byte if body is not None else node.end_byte,
            )
        elif t == "call_expression":
            yield from self.mutation(node)

    def bind(
        self,
        stmt: ts.Node,
        left: ts.Node | None,
        right: ts.Node | None,
        value: Expr | None = None,
        kind: str = "assign",
        pos: int | None = None,
    ) -> Iterator[Def]:
        if left is None or (right is None and value is None):
            return
        if value is None:
            assert right is not None
            if right.type in self.FUNCTION_TYPES:
                return
            value = self.expr(right)
        at = stmt.end_byte if pos is None else pos
        if left.type == "object_pattern":
            for key, local in self.object_pattern(left):
                yield Def(local, Attr(value.span, value, key), at, Span.of(stmt), "destructure")
            return
        if left.type == "array_pattern":
            for i, elem in enumerate(c for c in left.named_children if c.type != "comment"):
                item = Index(value.span, value, Lit(value.span, str(i), is_str=False))
                yield from self.bind(stmt, elem, None, item, "destructure", at)
            return
        target = self.target(left)
        if target:
            yield Def(target, value, at, Span.of(stmt), kind)

    def mutation(self, node: ts.Node) -> Iterator[Def]:
        fnode = node.child_by_field_name("function")
        if fnode is None or fnode.type != "member_expression":
            return
        if self.text(fnode.child_by_field_name("property")) != "push":
            return
        obj = fnode.child_by_field_name("object")
        target = self.target(obj)
        anode = node.child_by_field_name("arguments")
        if not target or anode is None:
            return
        args = tuple(self.expr(a) for a in anode.named_children if a.type != "comment")
        value = Tmpl(Span.of(node), (self.expr(obj), Seq(Span.of(node), args)))
        yield Def(target, value, node.end_byte, Span.of(node), "mutate")

    def target(self, node: ts.Node | None) -> str:
        """`x` or `this.a.b` for an assignable name or member chain; '' otherwise."""
        if node is None:
            return ""
        if node.type in ("identifier", "this"):
            return self.text(node)
        if node.type == "member_expression":
            base = self.target(node.child_by_field_name("object"))
            return f"{base}.{self.text(node.child_by_field_name('property'))}" if base else ""
        return ""

    def return_of(self, node: ts.Node) -> Expr | None:
        if node.type == "return_statement" and node.named_children:
            return self.expr(node.named_children[0])
        if node.type == "arrow_function":
            return None
        return None

    def filled(self, fn: Function) -> Function:
        """Arrow functions with an expression body return that expression."""
        if fn.key in self._filled:
            return fn
        super().filled(fn)
        body = fn.node.child_by_field_name("body") if fn.key != -1 else None
        if body is not None and fn.node.type == "arrow_function" and body.type != "statement_block":
            fn.returns.append(self.expr(body))
        return fn

    def unqualified_call_ok(self, call: Call) -> bool:
        """Functions may be called as `obj.f(...)` in JavaScript (exports, object members)."""
        return True

    # -- imports ----------------------------------------------------------------------------
    def extract_imports(self) -> dict[str, str]:
        table: dict[str, str] = {}
        for node in self.top_statements():
            if node.type == "import_statement":
                self.es_import(node, table)
            elif node.type in ("lexical_declaration", "variable_declaration"):
                for decl in node.named_children:
                    if decl.type == "variable_declarator":
                        self.require(decl, table)
        return table

    def es_import(self, node: ts.Node, table: dict[str, str]) -> None:
        source = node.child_by_field_name("source")
        module = (
            _module(unescape("".join(self.text(c) for c in source.named_children)))
            if source
            else ""
        )
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    table[self.text(part)] = module
                elif part.type == "namespace_import":
                    for ident in part.named_children:
                        table[self.text(ident)] = module
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type == "import_specifier":
                            name = self.text(spec.child_by_field_name("name"))
                            alias = spec.child_by_field_name("alias")
                            table[self.text(alias) if alias else name] = f"{module}.{name}"

    def require(self, decl: ts.Node, table: dict[str, str]) -> None:
        value = decl.child_by_field_name("value")
        while value is not None and value.type in _WRAPPERS and value.named_children:
            value = value.named_children[0]
        if value is None or value.type != "call_expression":
            return
        if self.text(value.child_by_field_name("function")) != "require":
            return
        args = value.child_by_field_name("arguments")
        strings = [a for a in args.named_children if a.type == "string"] if args else []
        if not strings:
            return
        module = _module(unescape("".join(self.text(c) for c in strings[0].named_children)))
        name = decl.child_by_field_name("name")
        if name is None:
            return
        if name.type == "identifier":
            table[self.text(name)] = module
        elif name.type == "object_pattern":
            for key, local in self.object_pattern(name):
                table[local] = f"{module}.{key}"
