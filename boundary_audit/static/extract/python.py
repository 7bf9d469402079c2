"""Python → IR: expressions, functions, definitions and imports from tree-sitter-python trees.

Covers f-strings, implicit concatenation, `+`, `str.format` and `%` formatting as templates;
lists/tuples as sequences; `x = ...`, `self.x = ...`, tuple unpacking, `+=`, `for`/`with`
targets, the walrus, and in-place `append`/`extend`/`insert` as definitions; `import` and
`from ... import` as the alias table.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter as ts

from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.extract.strings import split_brace_format, split_percent_format, unescape
from boundary_audit.static.ir import (
    Alt,
    Attr,
    Call,
    Def,
    Each,
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

_MUTATORS = frozenset({"append", "extend", "insert", "appendleft"})
_SCALARS = frozenset({"integer", "float", "true", "false", "none", "ellipsis"})
_TEXT_CONVERSIONS = frozenset({"str", "os.fspath"})
"""Calls that make one argv item text without changing it (`[str(c) for c in argv]`)."""


class PythonExtractor(Extractor):
    """IR extraction for Python files."""

    FUNCTION_TYPES = frozenset({"function_definition"})
    BLOCK_TYPES = frozenset({"block"})
    SCOPE_STOP = frozenset({"function_definition", "class_definition", "lambda"})
    CALL_TYPES = frozenset({"call"})
    FUNCTION_QUERY = "(function_definition) @fn"
    DESCEND = frozenset(
        {
            "module",
            "block",
            "expression_statement",
            "if_statement",
            "elif_clause",
            "else_clause",
            "for_statement",
            "while_statement",
            "try_statement",
            "except_clause",
            "except_group_clause",
            "finally_clause",
            "with_statement",
            "with_clause",
            "match_statement",
            "case_clause",
            "decorated_definition",
        }
    )

    # -- expressions ------------------------------------------------------------------------
    def convert(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        t = node.type
        if t == "identifier":
            return Ref(span, self.text(node))
        if t == "string":
            return self.string(node)
        if t == "concatenated_string":
            return Tmpl(span, tuple(self.expr(c) for c in node.named_children), "concat")
        if t in _SCALARS:
            return Lit(span, self.text(node), is_str=False)
        if t == "attribute":
            return Attr(
                span,
                self.expr(node.child_by_field_name("object")),
                self.text(node.child_by_field_name("attribute")),
            )
        if t == "subscript":
            sub = node.child_by_field_name("subscript")
            key = None if sub is None or sub.type == "slice" else self.expr(sub)
            return Index(span, self.expr(node.child_by_field_name("value")), key)
        if t == "call":
            return self.call(node)
        if t == "binary_operator":
            return self.binary(node)
        if t in ("list", "tuple", "set", "expression_list", "pattern_list"):
            return Seq(
                span, tuple(self.expr(c) for c in node.named_children if c.type != "comment")
            )
        if t in ("list_splat", "dictionary_splat", "list_splat_pattern"):
            return Spread(span, self.expr(node.named_children[0] if node.named_children else None))
        if t == "dictionary":
            return self.dictionary(node)
        if t == "conditional_expression":
            kids = node.named_children
            return (
                Alt(span, (self.expr(kids[0]), self.expr(kids[2]))) if len(kids) == 3 else Op(span)
            )
        if t == "boolean_operator" and self.text(node.child_by_field_name("operator")) == "or":
            return Alt(
                span,
                (
                    self.expr(node.child_by_field_name("left")),
                    self.expr(node.child_by_field_name("right")),
                ),
            )
        if t in ("parenthesized_expression", "await", "named_expression", "as_pattern"):
            kids = [c for c in node.named_children if c.type != "comment"]
            return (
                self.expr(kids[-1] if t == "named_expression" else kids[0])
                if kids
                else Unknown(span)
            )
        if t in ("generator_expression", "list_comprehension", "set_comprehension"):
            return self.comprehension(node)
        if t in ("lambda", "dictionary_comprehension"):
            return Unknown(span)
        return Op(span, tuple(self.expr(c) for c in node.named_children if c.type != "comment"))

    def string(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        start = node.children[0] if node.children else None
        prefix = (
            self.text(start).lower() if start is not None and start.type == "string_start" else ""
        )
        raw = "r" in prefix
        is_f = "f" in prefix
        parts: list[Expr] = []
        for child in node.children:
            if child.type == "string_content":
                text = self.text(child)
                if is_f:
                    text = text.replace("{{", "{").replace("}}", "}")
                parts.append(Lit(Span.of(child), text if raw else unescape(text)))
            elif child.type == "interpolation":
                inner = child.child_by_field_name("expression")
                value = self.expr(inner)
                conv = child.child_by_field_name("type_conversion")
                if conv is not None and self.text(conv) == "!r":
                    value = Call(Span.of(child), Ref(Span.of(child), "repr"), "repr", (value,))
                parts.append(value)
            elif child.type == "escape_interpolation":
                parts.append(Lit(Span.of(child), self.text(child)[0]))
        if all(isinstance(p, Lit) for p in parts):
            return Lit(span, "".join(p.text for p in parts if isinstance(p, Lit)))
        return Tmpl(span, tuple(parts), "fstring")

    def call(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        fnode = node.child_by_field_name("function")
        anode = node.child_by_field_name("arguments")
        args: list[Expr] = []
        kwargs: list[tuple[str, Expr]] = []
        if anode is not None and anode.type == "argument_list":
            for a in anode.named_children:
                if a.type == "keyword_argument":
                    kwargs.append(
                        (
                            self.text(a.child_by_field_name("name")),
                            self.expr(a.child_by_field_name("value")),
                        )
                    )
                elif a.type != "comment":
                    args.append(self.expr(a))
        elif anode is not None:
            args.append(self.expr(anode))
        if fnode is not None and fnode.type == "attribute":
            obj = fnode.child_by_field_name("object")
            meth = self.text(fnode.child_by_field_name("attribute"))
            if obj is not None and obj.type == "string" and meth == "format":
                fmt = self.expr(obj)
                if isinstance(fmt, Lit):
                    return _fill(fmt.span, split_brace_format(fmt.text), args, kwargs, "format")
        return Call(span, self.expr(fnode), self.dotted(fnode), tuple(args), tuple(kwargs))

    def binary(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        op = self.text(node.child_by_field_name("operator"))
        left = self.expr(node.child_by_field_name("left"))
        right = self.expr(node.child_by_field_name("right"))
        if op == "+":
            parts = left.parts if isinstance(left, Tmpl) and left.kind == "concat" else (left,)
            return Tmpl(span, (*parts, right), "concat")
        if op == "%" and isinstance(left, Lit) and left.is_str:
            items = right.items if isinstance(right, Seq) else (right,)
            if isinstance(right, Map):
                return _fill(
                    left.span,
                    split_percent_format(left.text),
                    [],
                    list(_str_items(right)),
                    "percent",
                )
            return _fill(left.span, split_percent_format(left.text), list(items), [], "percent")
        return Op(span, (left, right))

    def dictionary(self, node: ts.Node) -> Expr:
        items: list[tuple[str | None, Expr]] = []
        for pair in node.named_children:
            if pair.type == "pair":
                key = self.expr(pair.child_by_field_name("key"))
                name = key.text if isinstance(key, Lit) else None
                items.append((name, self.expr(pair.child_by_field_name("value"))))
            elif pair.type == "dictionary_splat":
                items.append((None, self.expr(pair)))
        return Map(Span.of(node), tuple(items))

    def comprehension(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        body = node.child_by_field_name("body")
        clauses = [c for c in node.named_children if c.type == "for_in_clause"]
        sources = [self.expr(c.child_by_field_name("right")) for c in clauses]
        if (
            len(clauses) == 1
            and len(node.named_children) == 2
            and node.type != "set_comprehension"
            and self._converts_each(body, clauses[0].child_by_field_name("left"))
        ):
            # `[str(c) for c in argv]`: each item made text, in order; the list keeps its shape
            return Seq(span, (Spread(span, sources[0]),))
        inner = Op(span, tuple(sources))
        if body is not None and body.type == "call":
            name = self.dotted(body.child_by_field_name("function"))
            return Call(span, Ref(span, name), name, (inner,))
        return inner

    def _converts_each(self, body: ts.Node | None, var: ts.Node | None) -> bool:
        """True if a comprehension's body is its loop variable, or that variable made text
        (`str(c)`, `os.fspath(c)`): the result has the iterable's items, one for one."""
        if body is None or var is None or var.type != "identifier":
            return False
        name = self.text(var)
        if body.type == "identifier":
            return self.text(body) == name
        if body.type != "call":
            return False
        args = body.child_by_field_name("arguments")
        kids = [c for c in args.named_children if c.type != "comment"] if args else []
        return (
            self.dotted(body.child_by_field_name("function")) in _TEXT_CONVERSIONS
            and len(kids) == 1
            and kids[0].type == "identifier"
            and self.text(kids[0]) == name
        )

    def dotted(self, node: ts.Node | None) -> str:
        """Dotted text of a callee (`a.b.c`); non-name bases become `?`."""
        parts: list[str] = []
        cur = node
        while cur is not None and cur.type == "attribute":
            parts.append(self.text(cur.child_by_field_name("attribute")))
            cur = cur.child_by_field_name("object")
        parts.append(self.text(cur) if cur is not None and cur.type == "identifier" else "?")
        return ".".join(reversed(parts))

    # -- functions --------------------------------------------------------------------------
    def describe_function(self, node: ts.Node) -> Function:
        name = self.text(node.child_by_field_name("name"))
        cls: str | None = None
        cur = node.parent
        while cur is not None and cur.type not in ("function_definition",):
            if cur.type == "class_definition":
                cls = self.text(cur.child_by_field_name("name"))
                break
            cur = cur.parent
        decorators: tuple[str, ...] = ()
        if node.parent is not None and node.parent.type == "decorated_definition":
            decorators = tuple(
                self.text(d).lstrip("@").split("(", 1)[0].strip()
                for d in node.parent.named_children
                if d.type == "decorator"
            )
        fn = Function(
            node.start_byte,
            name,
            Span.of(node),
            node,
            cls=cls,
            decorators=decorators,
            parent=self.enclosing_function(node),
        )
        fn.params = tuple(self.params(node.child_by_field_name("parameters")))
        fn.is_method = fn.self_param = (
            cls is not None and bool(fn.params) and fn.params[0].name in ("self", "cls")
        )
        return fn

    def params(self, node: ts.Node | None) -> Iterator[Param]:
        if node is None:
            return
        index = 0
        for p in node.named_children:
            name_node: ts.Node | None = p
            default = None
            annotation = ""
            if p.type in ("default_parameter", "typed_default_parameter"):
                name_node = p.child_by_field_name("name")
                default = self.expr(p.child_by_field_name("value"))
            if p.type in ("typed_parameter", "typed_default_parameter"):
                annotation = self.text(p.child_by_field_name("type"))
                if p.type == "typed_parameter":
                    name_node = p.named_children[0] if p.named_children else None
            if name_node is not None and name_node.type in (
                "list_splat_pattern",
                "dictionary_splat_pattern",
            ):
                name_node = name_node.named_children[0] if name_node.named_children else None
            if name_node is None or name_node.type != "identifier":
                continue
            yield self.new_param(self.text(name_node), index, p, default, annotation)
            index += 1

    def class_defs(self, cls: str) -> dict[str, list[Def]]:
        hit = self._class_defs.get(cls)
        if hit is not None:
            return hit
        out: dict[str, list[Def]] = {}
        for name in self.name_nodes(cls):
            node = name.parent
            if node is None or node.type != "class_definition":
                continue
            body = node.child_by_field_name("body")
            for stmt in body.named_children if body is not None else ():
                if stmt.type != "expression_statement" or not stmt.named_children:
                    continue
                for d in self.defs_of(stmt.named_children[0]):
                    out.setdefault(d.target, []).append(d)
        self._class_defs[cls] = out
        return out

    def defs_of(self, node: ts.Node) -> Iterator[Def]:
        t = node.type
        if t == "assignment":
            yield from self.assign(
                node, node.child_by_field_name("left"), node.child_by_field_name("right")
            )
        elif t == "augmented_assignment":
            left = node.child_by_field_name("left")
            target = self.target(left)
            if target is not None and self.text(node.child_by_field_name("operator")) == "+=":
                value = Tmpl(
                    Span.of(node), (self.expr(left), self.expr(node.child_by_field_name("right")))
                )
                yield Def(target, value, node.end_byte, Span.of(node), "augment")
        elif t == "named_expression":
            yield from self.assign(
                node, node.child_by_field_name("name"), node.child_by_field_name("value")
            )
        elif t == "for_statement":
            right = node.child_by_field_name("right")
            body = node.child_by_field_name("body")
            if right is not None:
                item = Index(Span.of(right), self.expr(right), None)
                pos = body.start_byte if body is not None else node.end_byte
                yield from self.assign(
                    node, node.child_by_field_name("left"), None, item, "loop", pos
                )
                mapped = self.map_loop(node)
                if mapped is not None:
                    yield mapped
        elif t == "with_item":
            managed = node.child_by_field_name("value")
            if managed is not None and managed.type == "as_pattern":
                alias = managed.child_by_field_name("alias")
                bound = (
                    alias.named_children[0] if alias is not None and alias.named_children else None
                )
                yield from self.assign(node, bound, managed.named_children[0], kind="with")
        elif t == "call":
            yield from self.mutation(node)

    def assign(
        self,
        stmt: ts.Node,
        left: ts.Node | None,
        right: ts.Node | None,
        value: Expr | None = None,
        kind: str = "assign",
        pos: int | None = None,
    ) -> Iterator[Def]:
        if left is None:
            return
        if right is not None and right.type == "assignment":
            yield from self.assign(
                stmt, right.child_by_field_name("left"), right.child_by_field_name("right")
            )
            value = self.expr(right.child_by_field_name("right"))
        elif value is None:
            if right is None:
                return
            value = self.expr(right)
        at = stmt.end_byte if pos is None else pos
        if left.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
            elems = [c for c in left.named_children if c.type != "comment"]
            for i, elem in enumerate(elems):
                item = (
                    value.items[i]
                    if isinstance(value, Seq) and len(value.items) == len(elems)
                    else Index(value.span, value, Lit(value.span, str(i), is_str=False))
                )
                yield from self.assign(
                    stmt, elem, None, item, "destructure" if kind == "assign" else kind, at
                )
            return
        target = self.target(left)
        if target is not None:
            yield Def(target, value, at, Span.of(stmt), kind)

    def map_loop(self, node: ts.Node) -> Def | None:
        """The list a `for v in src:` loop rebuilds, one item per iteration (an `Each`).

        The loop appends to a list `out` exactly once on every path through its body: each
        `out.append(x)` is followed by `continue` or ends the body, every `continue` follows
        one, and the body ends with one. Nothing else in the loop (nor a nested loop) changes
        `out` or `v`, there is no `break` or `else:`, and each appended value is computed
        from `v` (reads `v` or a name the body assigns). Otherwise None: the appends stay
        plain mutations (today's reading: the items are the loop variable's whole list)."""
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        body = node.child_by_field_name("body")
        if (
            left is None
            or left.type != "identifier"
            or right is None
            or body is None
            or node.child_by_field_name("alternative") is not None
        ):
            return None
        var = self.text(left)
        appends: dict[str, list[tuple[ts.Node, ts.Node]]] = {}
        continues: list[ts.Node] = []
        assigned: set[str] = set()
        stack: list[tuple[ts.Node, bool]] = [(c, False) for c in reversed(body.children)]
        while stack:
            cur, nested = stack.pop()
            t = cur.type
            if t == "break_statement" and not nested:
                return None
            if t == "continue_statement" and not nested:
                continues.append(cur)
            appended = self._appended(cur)
            if appended is not None and not nested:
                appends.setdefault(appended[0], []).append(appended[1:])
            else:
                assigned.update(d.target for d in self.defs_of(cur))
            if t in self.SCOPE_STOP or t not in self.DESCEND:
                continue
            inner = nested or t in ("for_statement", "while_statement")
            stack.extend((c, inner) for c in reversed(cur.children))
        if var in assigned:
            return None
        last = _last_statement(body)
        outer = _enclosing_loop(node, self.SCOPE_STOP)
        for target, found in appends.items():
            stmts = [stmt for _, stmt in found]
            if (
                (outer is not None and not self._starts_in(outer, target))
                or target in assigned
                or target == var
                or last not in stmts
                or any(_previous_statement(c) not in stmts for c in continues)
                or any(
                    s != last and _next_statement(s, "continue_statement") is None for s in stmts
                )
                or not all(self._reads_any(arg, assigned | {var}) for arg, _ in found)
            ):
                continue
            items = tuple(self.expr(arg) for arg, _ in found)
            value = Each(Span.of(node), target, var, self.expr(right), items)
            return Def(target, value, node.end_byte, Span.of(node), "map")
        return None

    def _starts_in(self, loop: ts.Node, target: str) -> bool:
        """Whether the body of `loop` assigns `target` anew (`out = []`) at its top level:
        a list rebuilt inside it starts over on each of its iterations."""
        body = loop.child_by_field_name("body")
        for stmt in _statements(body) if body is not None else ():
            inner = stmt.named_children[0] if stmt.named_children else None
            if (
                stmt.type == "expression_statement"
                and inner is not None
                and inner.type == "assignment"
                and self.target(inner.child_by_field_name("left")) == target
            ):
                return True
        return False

    def _appended(self, node: ts.Node) -> tuple[str, ts.Node, ts.Node] | None:
        """(list, value, statement) for a statement `list.append(value)` (one positional
        argument)."""
        stmt = node.parent
        if node.type != "call" or stmt is None or stmt.type != "expression_statement":
            return None
        fnode = node.child_by_field_name("function")
        anode = node.child_by_field_name("arguments")
        if fnode is None or fnode.type != "attribute" or anode is None:
            return None
        if self.text(fnode.child_by_field_name("attribute")) != "append":
            return None
        args = [a for a in anode.named_children if a.type != "comment"]
        target = self.target(fnode.child_by_field_name("object"))
        if target is None or len(args) != 1 or args[0].type == "keyword_argument":
            return None
        return target, args[0], stmt

    def _reads_any(self, node: ts.Node, names: set[str]) -> bool:
        """Whether expression `node` reads one of `names`."""
        stack = [node]
        while stack:
            cur = stack.pop()
            if cur.type == "identifier" and self.text(cur) in names:
                return True
            stack.extend(cur.children)
        return False

    def mutation(self, node: ts.Node) -> Iterator[Def]:
        fnode = node.child_by_field_name("function")
        if fnode is None or fnode.type != "attribute":
            return
        meth = self.text(fnode.child_by_field_name("attribute"))
        obj = fnode.child_by_field_name("object")
        target = self.target(obj)
        if meth not in _MUTATORS or target is None:
            return
        anode = node.child_by_field_name("arguments")
        args = [self.expr(a) for a in anode.named_children] if anode is not None else []
        if not args:
            return
        added: Expr = args[-1] if meth == "extend" else Seq(Span.of(node), (args[-1],))
        value = Tmpl(Span.of(node), (self.expr(obj), added))
        yield Def(target, value, node.end_byte, Span.of(node), "mutate")

    def target(self, node: ts.Node | None) -> str | None:
        """`x` or `a.b.c` for an assignable name or attribute chain; None otherwise."""
        if node is None:
            return None
        if node.type == "identifier":
            return self.text(node)
        if node.type == "attribute":
            base = self.target(node.child_by_field_name("object"))
            return f"{base}.{self.text(node.child_by_field_name('attribute'))}" if base else None
        return None

    def return_of(self, node: ts.Node) -> Expr | None:
        if node.type == "return_statement" and node.named_children:
            return self.expr(node.named_children[0])
        return None

    # -- imports ----------------------------------------------------------------------------
    def extract_imports(self) -> dict[str, str]:
        """Imports anywhere in the file (a function-level import may not rebind a module-level
        name: harnesses import optional SDKs inside the function that uses them)."""
        table: dict[str, str] = {}
        nodes = [
            n.parent
            for n in self.name_nodes("import")
            if n.parent is not None
            and n.parent.type in ("import_statement", "import_from_statement")
        ]
        nodes.sort(key=lambda n: (n.parent is not None and n.parent.type != "module", n.start_byte))
        for node in nodes:
            top = node.parent is not None and node.parent.type == "module"
            put = table.__setitem__ if top else table.setdefault
            if node.type == "import_statement":
                for item in node.named_children:
                    if item.type == "aliased_import":
                        put(
                            self.text(item.child_by_field_name("alias")),
                            self.text(item.child_by_field_name("name")),
                        )
                    elif item.type == "dotted_name":
                        full = self.text(item)
                        table.setdefault(full.split(".")[0], full.split(".")[0])
            else:
                module = self.text(node.child_by_field_name("module_name"))
                for item in node.children_by_field_name("name"):
                    if item.type == "aliased_import":
                        put(
                            self.text(item.child_by_field_name("alias")),
                            f"{module}.{self.text(item.child_by_field_name('name'))}",
                        )
                    else:
                        put(self.text(item), f"{module}.{self.text(item)}")
        return table


def _str_items(m: Map) -> Iterator[tuple[str, Expr]]:
    for k, v in m.items:
        if k is not None:
            yield k, v


def _fill(
    span: Span,
    pieces: list[str | int | tuple[str]],
    args: list[Expr],
    kwargs: list[tuple[str, Expr]],
    kind: str,
) -> Expr:
    """A template from format `pieces` with positional `args` and keyword `kwargs` filled in."""
    named = dict(kwargs)
    parts: list[Expr] = []
    for p in pieces:
        if isinstance(p, str):
            parts.append(Lit(span, p))
        elif isinstance(p, int):
            parts.append(args[p] if p < len(args) else Unknown(span))
        else:
            parts.append(named.get(p[0], Unknown(span)))
    return Tmpl(span, tuple(parts), kind)


def _statements(block: ts.Node) -> list[ts.Node]:
    return [c for c in block.named_children if c.type != "comment"]


def _enclosing_loop(node: ts.Node, stop: frozenset[str]) -> ts.Node | None:
    """The loop `node` is nested in, within its function."""
    cur = node.parent
    while cur is not None and cur.type not in stop:
        if cur.type in ("for_statement", "while_statement"):
            return cur
        cur = cur.parent
    return None


def _last_statement(block: ts.Node) -> ts.Node | None:
    """The last statement of a block (comments aside)."""
    stmts = _statements(block)
    return stmts[-1] if stmts else None


def _previous_statement(node: ts.Node) -> ts.Node | None:
    """The statement before `node` in its block (comments aside)."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    return prev


def _next_statement(node: ts.Node, kind: str) -> ts.Node | None:
    """The statement after `node` in its block if it is of type `kind`."""
    nxt = node.next_named_sibling
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    return nxt if nxt is not None and nxt.type == kind else None
