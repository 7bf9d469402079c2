"""Shared machinery of the per-language IR extractors.

An `Extractor` wraps one parsed file. It builds the IR lazily: a function's parameters, its
definitions and returns are extracted only when the dataflow engine first asks for them, and
expressions are converted on demand with a depth bound (`TooDeep` past `MAX_DEPTH`). Language
subclasses say which node types are functions, blocks, assignments and calls, and how one
expression node becomes an `Expr`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static.ir import Attr, Call, Def, Expr, Function, Param, Ref, Span, Unknown
from boundary_audit.static.parsing import MAX_DEPTH, TooDeep, language

if TYPE_CHECKING:
    from boundary_audit.static.entries import ToolEntries


@cache
def _internal_query(lang: str, text: str) -> ts.Query:
    return ts.Query(language(lang), text)


def warm(lang: str) -> None:
    """Load `lang`'s extractor and compile its function query (before forking workers)."""
    from boundary_audit.static.extract import extractor_for

    _internal_query(lang, extractor_for(lang).FUNCTION_QUERY)


class Extractor:
    """The IR of one file, extracted lazily. Subclasses fill in the language specifics."""

    FUNCTION_TYPES: frozenset[str] = frozenset()
    BLOCK_TYPES: frozenset[str] = frozenset()
    """Node types whose body runs conditionally or repeatedly (if/else arms, loops, try...)."""
    SCOPE_STOP: frozenset[str] = frozenset()
    """Node types whose subtree belongs to another scope (nested functions, classes)."""
    CALL_TYPES: frozenset[str] = frozenset()
    """Node types of calls (whose callee field is CALLEE_FIELD)."""
    CALLEE_FIELD: str = "function"
    FUNCTION_QUERY: str = ""
    """Internal query capturing every function-definition node as `@fn`."""

    def __init__(self, lang: str, path: str, data: bytes, tree: ts.Tree) -> None:
        self.lang = lang
        self.path = path
        self.data = data
        self.tree = tree
        self.root = tree.root_node
        self._exprs: dict[int, Expr] = {}
        self._functions: dict[int, Function] = {}
        self._function_at: dict[int, Function] = {}
        self._name_nodes: dict[str, list[ts.Node]] = {}
        self._filled: set[int] = set()
        self._calls: dict[str, list[ts.Node]] | None = None
        self._all_functions: list[Function] | None = None
        self._function_nodes: list[ts.Node] | None = None
        self._named: dict[str, list[Function]] = {}
        self._class_defs: dict[str, dict[str, list[Def]]] = {}
        self._class_functions: dict[str, list[Function]] = {}
        self._depth = 0
        self._tools: ToolEntries | None = None
        self.imports: dict[str, str] = self.extract_imports()

    @property
    def tools(self) -> ToolEntries:
        """The file's tool entry points (`entries.ToolEntries`, computed on first use)."""
        if self._tools is None:
            from boundary_audit.static.entries import ToolEntries

            self._tools = ToolEntries(self)
        return self._tools

    # -- text -------------------------------------------------------------------------------
    def text(self, node: ts.Node | None) -> str:
        """Source text of `node` (lenient UTF-8)."""
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, node: ts.Node | None) -> Expr:
        """The IR of an expression node (memoised; bounded depth)."""
        if node is None:
            return Unknown(Span(0, 0, 0, 0, 0, 0))
        hit = self._exprs.get(node.id)
        if hit is not None:
            return hit
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise TooDeep(f"expression nests deeper than {MAX_DEPTH} levels")
            result = self.convert(node)
        finally:
            self._depth -= 1
        self._exprs[node.id] = result
        return result

    def sink_expr(self, node: ts.Node, role: str) -> Expr:
        """The IR of a sink node in `role` (`value`, `argv`, `receiver`); shell overrides."""
        return self.expr(node)

    def convert(self, node: ts.Node) -> Expr:  # pragma: no cover - abstract
        """Language-specific conversion of one expression node."""
        raise NotImplementedError

    # -- functions --------------------------------------------------------------------------
    def function_at(self, node: ts.Node) -> Function:
        """The innermost function containing `node` (the module pseudo-function at top level);
        kept per node, since each `parent` step is a walk down from the root in tree-sitter."""
        fn = self._function_at.get(node.id)
        if fn is not None:
            return fn
        cur = node.parent
        while cur is not None:
            if cur.type in self.FUNCTION_TYPES:
                fn = self.function(cur)
                break
            cur = cur.parent
        else:
            fn = self.module()
        self._function_at[node.id] = fn
        return fn

    def module(self) -> Function:
        """The module's top level as a pseudo-function with key -1."""
        fn = self._functions.get(-1)
        if fn is None:
            fn = Function(-1, "<module>", Span.of(self.root), self.root)
            self._functions[-1] = fn
        return fn

    def function(self, node: ts.Node) -> Function:
        """The Function for a function-definition node (header facts only; body is lazy)."""
        fn = self._functions.get(node.start_byte)
        if fn is None:
            fn = self.describe_function(node)
            self._functions[node.start_byte] = fn
        return fn

    def describe_function(self, node: ts.Node) -> Function:  # pragma: no cover - abstract
        """Name, class, parameters and decorators of a function node."""
        raise NotImplementedError

    def enclosing_function(self, node: ts.Node) -> Function | None:
        """The function lexically enclosing function-node `node`, if any."""
        cur = node.parent
        while cur is not None:
            if cur.type in self.FUNCTION_TYPES:
                return self.function(cur)
            cur = cur.parent
        return None

    def found_functions(self, nodes: list[ts.Node]) -> None:
        """The nodes `FUNCTION_QUERY` matches in this extractor's tree, found by a pass that
        matched it there with other queries (`queries.FUNCTIONS`): `all_functions` then
        runs no query of its own."""
        if self._all_functions is None:
            self._function_nodes = nodes

    def all_functions(self) -> list[Function]:
        """Every function of the file in document order (headers only)."""
        if self._all_functions is None:
            nodes = self._function_nodes
            if nodes is None:
                query = _internal_query(self.lang, self.FUNCTION_QUERY)
                nodes = [caps["fn"][0] for _, caps in ts.QueryCursor(query).matches(self.root)]
            nodes = sorted(nodes, key=lambda n: n.start_byte)
            self._all_functions = [self.function(n) for n in nodes]
        return self._all_functions

    def functions_named(self, name: str) -> list[Function]:
        """Functions and methods called `name` in this file (found by text, not by a tree walk)."""
        hit = self._named.get(name)
        if hit is None:
            hit = self._named[name] = self._functions_named(name)
        return hit

    def _functions_named(self, name: str) -> list[Function]:
        found: dict[int, Function] = {}
        for node in self.name_nodes(name):
            cur = node.parent
            for _ in range(3):
                if cur is None:
                    break
                value = cur.child_by_field_name("value")
                target = (
                    cur
                    if cur.type in self.FUNCTION_TYPES
                    else (
                        value if value is not None and value.type in self.FUNCTION_TYPES else None
                    )
                )
                if target is None and value is not None and value.type in self.CALL_TYPES:
                    # `run = wrap("run")(function* (input) {…})`: a function the holder names
                    # (the extractor's naming decides which wrappers pass their name on)
                    anode = value.child_by_field_name("arguments")
                    for arg in anode.named_children if anode is not None else ():
                        if arg.type in self.FUNCTION_TYPES and self.function(arg).name == name:
                            target = arg
                if target is not None:
                    fn = self.function(target)
                    if fn.name == name:
                        found[fn.key] = fn
                    break
                cur = cur.parent
        return [found[k] for k in sorted(found)]

    def class_functions(self, fn: Function) -> list[Function]:
        """The functions defined in the same class (or impl block) as `fn` (kept per class;
        not to be changed by the caller)."""
        if fn.cls is None:
            return [fn]
        kept = self._class_functions.get(fn.cls)
        if kept is None:
            kept = [f for f in self.all_functions() if f.cls == fn.cls]
            self._class_functions[fn.cls] = kept
        return kept

    def class_defs(self, cls: str) -> dict[str, list[Def]]:
        """Definitions made in the body of class `cls` itself (class attributes such as
        `COMMANDS = {...}`), by name; read as `self.COMMANDS`. Languages without them: none."""
        return {}

    def name_nodes(self, name: str) -> list[ts.Node]:
        """Leaf nodes whose text is exactly `name` (located by a byte search; kept per name)."""
        kept = self._name_nodes.get(name)
        if kept is None:
            kept = self._name_nodes[name] = self._find_name_nodes(name)
        return list(kept)

    def _find_name_nodes(self, name: str) -> list[ts.Node]:
        if not name or not name.replace("_", "a").replace("$", "a").isalnum():
            return []
        needle = name.encode()
        out: list[ts.Node] = []
        start = self.data.find(needle)
        while start >= 0:
            end = start + len(needle)
            before = self.data[start - 1 : start]
            after = self.data[end : end + 1]
            if not (before.isalnum() or before in (b"_", b"$")) and not (
                after.isalnum() or after in (b"_", b"$")
            ):
                node = self.root.descendant_for_byte_range(start, end)
                if node is not None and node.start_byte == start and node.end_byte == end:
                    out.append(node)
            start = self.data.find(needle, end)
        return out

    DESCEND: frozenset[str] = frozenset()
    """Statement-level node types whose children hold further statements. Definitions are
    looked for only there: expressions are visited but not walked into."""

    def filled(self, fn: Function) -> Function:
        """`fn` with its definitions, returns and blocks extracted."""
        if fn.key not in self._filled:
            self._filled.add(fn.key)
            body = self.body_of(fn)
            if body is not None:
                for node in self.statements(body):
                    self.visit(fn, node)
            for defs in fn.defs.values():
                _maps_last(defs)
        return fn

    def statements(self, top: ts.Node) -> Iterator[ts.Node]:
        """`top` and the statement-level nodes below it, not entering other scopes."""
        stack = [top]
        while stack:
            node = stack.pop()
            yield node
            if node is not top and (node.type in self.SCOPE_STOP or node.type not in self.DESCEND):
                continue
            stack.extend(reversed(node.children))

    def body_of(self, fn: Function) -> ts.Node | None:
        """The node whose statements make up `fn` (the root for the module)."""
        return fn.node if fn.key == -1 else fn.node.child_by_field_name("body")

    def visit(self, fn: Function, node: ts.Node) -> None:
        """Record what `node` contributes to `fn` (blocks, definitions, returns)."""
        if node.type in self.BLOCK_TYPES:
            fn.blocks.append((node.start_byte, node.end_byte))
        for d in self.defs_of(node):
            fn.defs.setdefault(d.target, []).append(d)
        ret = self.return_of(node)
        if ret is not None:
            fn.returns.append(ret)

    def defs_of(self, node: ts.Node) -> Iterator[Def]:  # pragma: no cover - abstract
        """Definitions made by `node` (assignments, loop targets, mutations)."""
        raise NotImplementedError

    def return_of(self, node: ts.Node) -> Expr | None:
        """The returned expression if `node` is a return statement."""
        return None

    # -- calls ------------------------------------------------------------------------------
    def call_nodes(self, name: str) -> list[ts.Node]:
        """Call nodes in this file whose final callee name is `name` (found by text)."""
        hit = self._calls.get(name) if self._calls is not None else None
        if hit is not None:
            return hit
        calls: list[ts.Node] = []
        for node in self.name_nodes(name):
            call = self.call_of_callee(node)
            if call is not None:
                calls.append(call)
        if self._calls is None:
            self._calls = {}
        self._calls[name] = calls
        return calls

    def call_of_callee(self, node: ts.Node) -> ts.Node | None:
        """The call whose callee ends with the name `node`, if `node` is in that position."""
        cur = node
        for _ in range(3):
            parent = cur.parent
            if parent is None:
                return None
            if parent.type in self.CALL_TYPES:
                callee = parent.child_by_field_name(
                    self.CALLEE_FIELD
                ) or parent.child_by_field_name("constructor")
                # TypeScript's non-null assertion on the callee: `session.execCommand!(…)`
                bang = callee is not None and callee.type == "non_null_expression"
                if callee is not None and callee.end_byte == node.end_byte + int(bang):
                    return parent
                return None
            cur = parent
        return None

    def unqualified_call_ok(self, call: Call) -> bool:
        """True if an attribute call `x.f(...)` may call this file's plain function `f`.

        Only calls through `self`/`this` qualify by default: `subprocess.run(...)` must not be
        taken for a call of a local `run`. Languages with free functions on objects override.
        """
        return (
            isinstance(call.callee, Attr)
            and isinstance(call.callee.base, Ref)
            and (call.callee.base.name in ("self", "this"))
        )

    # -- imports ----------------------------------------------------------------------------
    def extract_imports(self) -> dict[str, str]:
        """Local name -> canonical dotted name for imported modules and symbols."""
        return {}

    TOP_CONTAINERS: frozenset[str] = frozenset(
        {
            "if_statement",
            "try_statement",
            "block",
            "else_clause",
            "except_clause",
            "finally_clause",
            "elif_clause",
            "import_declaration",
            "import_spec_list",
            "use_declaration",
        }
    )

    def top_statements(self) -> Iterator[ts.Node]:
        """Top-level statements, also inside top-level if/try blocks (where imports live)."""
        stack = list(reversed(self.root.children))
        while stack:
            node = stack.pop()
            yield node
            if node.type in self.TOP_CONTAINERS:
                stack.extend(reversed(node.children))

    def resolve_callee(self, node: ts.Node) -> str:
        """The canonical name of the callee of call node `node` ('' if not a name)."""
        if node.type == "composite_literal":
            return self.canonical(self.text(node.child_by_field_name("type")).replace(" ", ""))
        call = self.expr(node)
        return self.callee_name(call.callee) if isinstance(call, Call) else ""

    def callee_name(self, callee: Expr) -> str:
        """Canonical dotted name of a callee expression, through imports and the dynamic
        spellings `getattr(mod, "f")`, `__import__("mod")`, `importlib.import_module("mod")`
        and `require("mod")`; '' when the callee is not a name."""
        if isinstance(callee, Ref):
            return self.canonical(callee.name)
        if isinstance(callee, Attr):
            base = self.callee_name(callee.base)
            return f"{base}.{callee.name}" if base else ""
        if isinstance(callee, Call):
            from boundary_audit.static.ir import Lit

            fname = callee.name.rsplit(".", 1)[-1]
            args = callee.args
            if fname == "getattr" and len(args) >= 2 and isinstance(args[1], Lit):
                base = self.callee_name(args[0])
                return f"{base}.{args[1].text}" if base else ""
            if fname in ("__import__", "import_module", "require") and args:
                if isinstance(args[0], Lit):
                    return args[0].text
        return ""

    def canonical(self, dotted: str) -> str:
        """`dotted` with its first component replaced by what it was imported as."""
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target

    def new_param(
        self,
        name: str,
        index: int,
        node: ts.Node,
        default: Expr | None = None,
        annotation: str = "",
        field: str | None = None,
    ) -> Param:
        """A Param for `node`."""
        return Param(name, index, Span.of(node), default, annotation, field)


def _maps_last(defs: list[Def]) -> None:
    """Move a loop's reading as a map (made when the loop is visited, before its body)
    after the definitions inside the loop: it takes effect when the loop is done."""
    for d in [d for d in defs if d.kind == "map"]:
        defs.remove(d)
        at = len(defs)
        while at > 0 and defs[at - 1].pos > d.pos:
            at -= 1
        defs.insert(at, d)
