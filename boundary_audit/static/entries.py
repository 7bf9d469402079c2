"""Tool entry points: the functions of a file that a harness registers as tools.

A tool's handler takes its arguments from a tool call the model wrote, so its parameters are
model output whatever its other callers pass (evidence `tool-entry`). The conventions are
data (`catalogue/sources.toml`, `[[tool]]`, one entry per framework); this module applies
them to one file's tree:

- decorators on a function, or on its class (`@register_tool class Terminal`);
- classes deriving from a tool base class, whose run-like methods are the handler
  (`class Shell(BaseTool): def _run(self, command)`);
- wrapper calls that register the function they are given: `FunctionTool(self.execute)`,
  `FunctionTool(on_invoke_tool=self._invoke)`, `tool({execute: async ({cmd}) => ...})`,
  `server.tool("x", schema, handler)`;
- (JavaScript) tool objects, `{name, description, parameters, run: async (args) => ...}`,
  and values of a tool type (`const impl: ToolImpl = async (args) => ...`);
- (Rust) `#[tool]` functions and the methods of `impl Tool for X`;
- (Go) handlers stored in a composite-literal field (`BuiltinFunc: SysExec`) or given to
  `AddTool`, and the methods of a type that has every method of a tool interface
  (`Name`, `Description`, `Call`).

`ToolEntries.entry(fn)` says whether (and by which convention) `fn` is a tool entry;
`tool_class(cls)` whether a class holds one (a name alone is evidence only there).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, cast

import tree_sitter as ts

from boundary_audit.static import catalogue
from boundary_audit.static.extract.javascript import CLASS_TYPES as JS_CLASS_TYPES
from boundary_audit.static.parsing import QUERY_DIALECT

if TYPE_CHECKING:
    from boundary_audit.static.extract.base import Extractor
    from boundary_audit.static.ir import Function


@dataclass(frozen=True)
class Wrapper:
    """A call that registers the function given at a position or under a keyword."""

    call: str
    positional: tuple[int, ...]
    keywords: tuple[str, ...]


@dataclass(frozen=True)
class ToolObject:
    """(JavaScript) an object literal with these keys whose handler key holds a function."""

    keys: tuple[str, ...]
    schema: tuple[str, ...]
    handlers: tuple[str, ...]


@dataclass
class Conventions:
    """Every `[[tool]]` entry of one dialect, merged."""

    decorators: set[str] = field(default_factory=set)
    class_decorators: set[str] = field(default_factory=set)
    bases: dict[str, set[str]] = field(default_factory=dict)
    """base class (last name) -> handler method names."""
    dispatched: set[str] = field(default_factory=set)
    """Bases of `names_in_class = false` entries: their handlers are entered by interface
    dispatch, and the rest of the class is not a tool's (a name there is only a name)."""
    wrappers: list[Wrapper] = field(default_factory=list)
    objects: list[ToolObject] = field(default_factory=list)
    types: set[str] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)
    traits: list[tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=list)
    """(trait names or required method set, handler method names)."""
    fields: set[str] = field(default_factory=set)
    derives: set[str] = field(default_factory=set)
    """Derive macros that make a struct a tool whose handler is the inherent method named
    like the struct in snake case (swiftide's `#[derive(Tool)] struct ResetFile` runs
    `ResetFile::reset_file`)."""


@cache
def conventions(dialect: str) -> Conventions:
    """The tool conventions of `dialect`, from `catalogue/sources.toml`."""
    out = Conventions()
    for e in catalogue.entries("sources", "tool"):
        if e.get("lang") != dialect:
            continue
        S = catalogue.strings
        out.decorators.update(S(e, "decorators"))
        out.class_decorators.update(S(e, "class_decorators"))
        methods = set(S(e, "methods"))
        for base in S(e, "bases"):
            out.bases.setdefault(base.rsplit(".", 1)[-1], set()).update(methods)
            if e.get("names_in_class") is False:
                out.dispatched.add(base.rsplit(".", 1)[-1])
        for w in e.get("wrappers", ()):
            out.wrappers.append(
                Wrapper(
                    str(w["call"]),
                    tuple(int(i) for i in w.get("positional", ())),
                    tuple(str(k) for k in w.get("keywords", ())),
                )
            )
        for o in e.get("objects", ()):
            out.objects.append(
                ToolObject(tuple(S(o, "keys")), tuple(S(o, "schema")), tuple(S(o, "handlers")))
            )
        out.types.update(S(e, "types"))
        out.attributes.update(S(e, "attributes"))
        out.derives.update(S(e, "derives"))
        out.fields.update(S(e, "fields"))
        if S(e, "traits"):
            out.traits.append((S(e, "traits"), frozenset(methods)))
    return out


def _dotted_matches(name: str, wanted: str) -> bool:
    """`self.register` matches `self.register`; `x.y.FunctionTool` matches `FunctionTool`."""
    return name == wanted or name.endswith("." + wanted) or name.rsplit(".", 1)[-1] == wanted


class ToolEntries:
    """The tool entry points of one file (computed on first use)."""

    def __init__(self, ex: Extractor) -> None:
        # NOTE(h2): a proxy: the extractor owns this (`Extractor.tools`); a reference back
        # kept the file's tree alive until the collector ran (tests/test_static_no_cycles.py).
        self.ex: Extractor = cast("Extractor", weakref.proxy(ex))
        self.dialect = QUERY_DIALECT[ex.lang]
        self.conv = conventions(self.dialect)
        self._by_key: dict[int, str] | None = None
        self._classes: set[str] = set()
        self._dispatched: set[int] = set()
        """Entries reached by interface dispatch: they do not make their class a tool's."""
        self._derived: set[str] | None = None

    def entry(self, fn: Function) -> str | None:
        """Why `fn` is a tool entry (the convention, for messages), or None."""
        return self._entries().get(fn.key)

    def tool_class(self, cls: str | None) -> bool:
        """True if class (or impl/receiver type) `cls` has a tool entry method."""
        self._entries()
        return cls is not None and cls in self._classes

    # -- computing --------------------------------------------------------------------------
    def _entries(self) -> dict[int, str]:
        if self._by_key is None:
            self._by_key = {}
            finder = getattr(self, f"_find_{self.dialect}", None)
            if finder is not None:
                finder()
            self._wrapped()
            for fn in self.ex.all_functions():
                if fn.key in self._by_key and fn.key not in self._dispatched and fn.cls:
                    self._classes.add(fn.cls)
        return self._by_key

    def _mark(self, fn: Function | None, why: str) -> None:
        if fn is not None and self._by_key is not None and fn.key not in self._by_key:
            self._by_key[fn.key] = why

    def _find_python(self) -> None:
        conv = self.conv
        classes = self._python_classes()
        for fn in self.ex.all_functions():
            for d in fn.decorators:
                if any(_dotted_matches(d, want) for want in conv.decorators):
                    self._mark(fn, f"@{d}")
            if fn.cls is None or fn.cls not in classes:
                continue
            decorators, bases = classes[fn.cls]
            public = not fn.name.startswith("_") and fn.is_method
            for d in decorators:
                if public and any(_dotted_matches(d, w) for w in conv.class_decorators):
                    self._mark(fn, f"method of @{d} class {fn.cls}")
            for b in bases:
                last = b.rsplit(".", 1)[-1]
                if fn.name in conv.bases.get(last, ()):
                    if last in conv.dispatched and fn.key not in (self._by_key or {}):
                        self._dispatched.add(fn.key)
                    self._mark(fn, f"{b}.{fn.name} of {fn.cls}")

    def _python_classes(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """class name -> (decorators, base names) for the classes of the file."""
        out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        data = self.ex.data
        if b"class" not in data:
            return out
        for node in self.ex.name_nodes("class"):
            cls = node.parent
            if cls is None or cls.type != "class_definition":
                continue
            name = self.ex.text(cls.child_by_field_name("name"))
            supers = cls.child_by_field_name("superclasses")
            bases = tuple(
                self.ex.text(b).split("[", 1)[0]
                for b in (supers.named_children if supers is not None else ())
                if b.type in ("identifier", "attribute", "subscript")
            )
            decorators: tuple[str, ...] = ()
            if cls.parent is not None and cls.parent.type == "decorated_definition":
                decorators = tuple(
                    self.ex.text(d).lstrip("@").split("(", 1)[0].strip()
                    for d in cls.parent.named_children
                    if d.type == "decorator"
                )
            out[name] = (decorators, bases)
        return out

    def _find_javascript(self) -> None:
        conv = self.conv
        for fn in self.ex.all_functions():
            node = fn.node
            parent = node.parent
            # a value of a tool type: `const impl: ToolImpl = async (args) => ...`
            if parent is not None and parent.type == "variable_declarator":
                if self._typed_tool(parent):
                    self._mark(fn, "value of a tool type")
            # a handler inside a tool object: `{name, description, parameters, run() {}}`
            obj, key = object_slot(node)
            if obj is None or key is None:
                continue
            keys = _object_keys(self.ex, obj)
            for spec in conv.objects:
                if (
                    key in spec.handlers
                    and all(k in keys for k in spec.keys)
                    and any(k in keys for k in spec.schema)
                ):
                    self._mark(fn, f"`{key}` of a tool object")
            holder = obj.parent
            if holder is not None and holder.type == "variable_declarator":
                if self._typed_tool(holder) and key in {
                    h for spec in conv.objects for h in spec.handlers
                }:
                    self._mark(fn, f"`{key}` of a tool-typed object")
        for cls_name, bases in self._js_classes().items():
            for fn in self.ex.all_functions():
                if fn.cls == cls_name:
                    for b in bases:
                        if fn.name in conv.bases.get(b, ()):
                            if b in conv.dispatched and fn.key not in (self._by_key or {}):
                                self._dispatched.add(fn.key)
                            self._mark(fn, f"{b}.{fn.name} of {cls_name}")

    def _typed_tool(self, declarator: ts.Node) -> bool:
        ann = declarator.child_by_field_name("type")
        if ann is None:
            return False
        text = self.ex.text(ann).lstrip(":").strip()
        head = text.split("<", 1)[0].strip().rsplit(".", 1)[-1]
        return head in self.conv.types

    def _js_classes(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for node in self.ex.name_nodes("class"):
            cls = node.parent
            if cls is None or cls.type not in JS_CLASS_TYPES:
                continue
            name = self.ex.text(cls.child_by_field_name("name"))
            bases: list[str] = []
            for c in cls.named_children:
                if c.type == "class_heritage":
                    for part in c.named_children:
                        bases.extend(
                            self.ex.text(ident).split("<", 1)[0].rsplit(".", 1)[-1]
                            for ident in part.named_children or [part]
                        )
            out[name] = tuple(bases)
        return out

    def _find_rust(self) -> None:
        conv = self.conv
        for fn in self.ex.all_functions():
            node = fn.node
            prev = node.prev_named_sibling
            while prev is not None and prev.type == "attribute_item":
                attr = self.ex.text(prev).lstrip("#[").split("(", 1)[0].rstrip("]").strip()
                if attr in conv.attributes:
                    self._mark(fn, f"#[{attr}]")
                prev = prev.prev_named_sibling
            impl = _ancestor(node, "impl_item")
            if impl is None:
                continue
            trait = impl.child_by_field_name("trait")
            if trait is None:
                owner = self.ex.text(impl.child_by_field_name("type")).split("<", 1)[0]
                if owner in self._derived_tools() and fn.name == _snake(owner):
                    # the struct's fields are its constructor's (configuration), the tool's
                    # arguments are the method's parameters: not a class of tool arguments
                    self._dispatched.add(fn.key)
                    self._mark(fn, f"#[derive(Tool)] struct {owner}")
                continue
            tname = self.ex.text(trait).split("<", 1)[0]
            for traits, methods in conv.traits:
                if fn.name in methods and any(
                    tname == t or tname.rsplit("::", 1)[-1] == t.rsplit("::", 1)[-1] for t in traits
                ):
                    self._mark(fn, f"impl {tname}::{fn.name}")

    def _derived_tools(self) -> set[str]:
        """Structs of this file with one of the conventions' derive macros (`#[derive(Tool)]`)."""
        if self._derived is None:
            self._derived = set()
            wanted = {d.rsplit("::", 1)[-1] for d in self.conv.derives}
            stack = [self.ex.root]
            while stack and wanted:
                node = stack.pop()
                for child in node.named_children:
                    if child.type in ("mod_item", "declaration_list"):
                        stack.append(child)
                    if child.type != "struct_item":
                        continue
                    prev = child.prev_named_sibling
                    while prev is not None and prev.type == "attribute_item":
                        text = self.ex.text(prev)
                        if text.startswith("#[derive(") and any(
                            w.rsplit("::", 1)[-1] in wanted
                            for w in re.findall(r"[\w:]+", text[len("#[derive(") :])
                        ):
                            self._derived.add(self.ex.text(child.child_by_field_name("name")))
                        prev = prev.prev_named_sibling
        return self._derived

    def _find_go(self) -> None:
        conv = self.conv
        methods_of: dict[str, set[str]] = {}
        for fn in self.ex.all_functions():
            if fn.cls:
                methods_of.setdefault(fn.cls, set()).add(fn.name)
        for fn in self.ex.all_functions():
            if not fn.cls:
                continue
            for traits, handlers in conv.traits:
                if fn.name in handlers and set(traits) <= methods_of.get(fn.cls, set()):
                    self._mark(fn, f"{fn.cls}.{fn.name} (a tool interface)")
        for name in conv.fields:
            for node in self.ex.name_nodes(name):
                elem = node.parent
                while elem is not None and elem.type == "literal_element":
                    elem = elem.parent
                if elem is None or elem.type != "keyed_element":
                    continue
                kids = elem.named_children
                if len(kids) < 2 or node.start_byte >= kids[1].start_byte:
                    continue
                self._mark_node(kids[1], f"`{name}` of a tool table")

    def _wrapped(self) -> None:
        """Functions handed to a registering call (`FunctionTool(self.run)`)."""
        for w in self.conv.wrappers:
            if w.call == "*":
                self._keyword_anywhere(w)
                continue
            last = w.call.rsplit(".", 1)[-1]
            names = {last} | {
                alias
                for alias, target in self.ex.imports.items()
                if target.replace("::", ".").rsplit(".", 1)[-1] == last
            }
            for local in sorted(names):
                for call in self.ex.call_nodes(local):
                    callee = call.child_by_field_name(
                        self.ex.CALLEE_FIELD
                    ) or call.child_by_field_name("constructor")
                    name = self.ex.text(callee).replace("?.", ".").replace("::", ".")
                    full = self.ex.canonical(name)
                    if not (_dotted_matches(name, w.call) or _dotted_matches(full, w.call)):
                        continue
                    for arg in _registered_args(self.ex, call, w):
                        self._mark_node(arg, f"given to {w.call}()")

    def _keyword_anywhere(self, w: Wrapper) -> None:
        """A keyword that registers a handler in any call (`on_invoke_tool=self._invoke`)."""
        for key in w.keywords:
            for node in self.ex.name_nodes(key):
                parent = node.parent
                if parent is None or parent.child_by_field_name("name") != node:
                    continue
                if parent.type == "keyword_argument":
                    value = parent.child_by_field_name("value")
                    if value is not None:
                        self._mark_node(value, f"given as {key}=")

    def _mark_node(self, node: ts.Node, why: str) -> None:
        """Mark the function that `node` (a function literal or a reference) denotes."""
        while node.type in ("parenthesized_expression", "await_expression") and node.named_children:
            node = node.named_children[0]
        if node.type in self.ex.FUNCTION_TYPES:
            self._mark(self.ex.function(node), why)
            return
        text = self.ex.text(node)
        head, _, name = text.rpartition(".")
        if not name or not name.replace("_", "a").isalnum():
            return
        here = self.ex.function_at(node)
        candidates = self.ex.functions_named(name)
        if head in ("self", "this", "cls"):
            own = [f for f in candidates if f.cls == here.cls] or candidates
            for f in own:
                self._mark(f, why)
        elif not head:
            for f in candidates:
                self._mark(f, why)
        else:
            for f in candidates:
                if f.is_method:
                    self._mark(f, why)


def _snake(name: str) -> str:
    """`ResetFile` -> `reset_file`, `HTTPServer` -> `http_server`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _ancestor(node: ts.Node, kind: str) -> ts.Node | None:
    cur = node.parent
    while cur is not None:
        if cur.type == kind:
            return cur
        cur = cur.parent
    return None


def object_slot(fn: ts.Node) -> tuple[ts.Node | None, str | None]:
    """(object literal, key) when a function is the value of a key or a method of an object."""
    parent = fn.parent
    if fn.type == "method_definition":
        if parent is not None and parent.type == "object":
            name = fn.child_by_field_name("name")
            return parent, name.text.decode() if name is not None and name.text else None
        return None, None
    if parent is not None and parent.type == "pair" and parent.parent is not None:
        if parent.parent.type == "object":
            key = parent.child_by_field_name("key")
            text = key.text.decode().strip("'\"") if key is not None and key.text else None
            return parent.parent, text
    return None, None


def _object_keys(ex: Extractor, obj: ts.Node) -> set[str]:
    keys: set[str] = set()
    for c in obj.named_children:
        if c.type == "pair":
            k = c.child_by_field_name("key")
            keys.add(ex.text(k).strip("'\"`"))
        elif c.type == "method_definition":
            keys.add(ex.text(c.child_by_field_name("name")))
        elif c.type == "shorthand_property_identifier":
            keys.add(ex.text(c))
    return keys


def _registered_args(ex: Extractor, call: ts.Node, w: Wrapper) -> list[ts.Node]:
    """The argument nodes of `call` that `w` says are registered functions."""
    anode = call.child_by_field_name("arguments")
    if anode is None:
        return []
    kids = [a for a in anode.named_children if a.type != "comment"]
    positional = [a for a in kids if a.type not in ("keyword_argument",)]
    out: list[ts.Node] = []
    for i in w.positional:
        if -len(positional) <= i < len(positional):
            arg = positional[i]
            if arg.type != "object":
                out.append(arg)
    for a in kids:
        if a.type == "keyword_argument":
            if ex.text(a.child_by_field_name("name")) in w.keywords:
                value = a.child_by_field_name("value")
                if value is not None:
                    out.append(value)
        elif a.type == "object":
            for c in a.named_children:
                if c.type == "pair":
                    key = ex.text(c.child_by_field_name("key")).strip("'\"")
                    value = c.child_by_field_name("value")
                    if key in w.keywords and value is not None:
                        out.append(value)
                elif c.type == "method_definition":
                    if ex.text(c.child_by_field_name("name")) in w.keywords:
                        out.append(c)
                elif c.type == "shorthand_property_identifier" and ex.text(c) in w.keywords:
                    out.append(c)
    return out


__all__ = ["Conventions", "ToolEntries", "conventions", "object_slot"]
