"""Receiver types: the classes a method call `obj.m(...)` may invoke, from what the code says.

A method with a common name (`run`, `execute`) cannot be matched across files by its name
alone: every `.run(` of the corpus would be taken for a call of it. What the caller's own code
says about the receiver narrows it down: `self.interpreter = SubprocessInterpreter(...)` in any
method of the caller's class, `x = Runner()` or `const x = new Runner()` in the caller, a
parameter annotated `r: Runner` / `Optional[Runner]` / `r *Runner`, and `self`/`this` itself.
Only names written in the code are used (no inference across assignments of other objects), so
an answer is a set of class names the call may reach; an empty set means the code does not say.
"""

from __future__ import annotations

import re

from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.extract.javascript import CLASS_TYPES as JS_CLASS_TYPES
from boundary_audit.static.ir import Alt, Attr, Call, Expr, Function, Ref

SELF_NAMES = ("self", "this")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_CLASSES = frozenset({"Optional", "Union", "List", "Dict", "Any", "None", "Type", "Box", "Arc"})


def class_of(name: str) -> str | None:
    """The class a constructor call's callee names (`mod.Foo` -> `Foo`, `Foo::new` -> `Foo`)."""
    parts = [p for p in re.split(r"\.|::", name) if p]
    if len(parts) >= 2 and parts[-1] in ("new", "default", "create"):
        parts = parts[:-1]
    last = parts[-1] if parts else ""
    if last.startswith("new "):
        last = last[4:].strip()
    if last and last[0].isupper() and not last.isupper():
        return last
    return None


def constructed(value: Expr) -> set[str]:
    """Class names `value` is built from: `Foo(...)`, `new Foo()`, either side of a choice."""
    if isinstance(value, Alt):
        out: set[str] = set()
        for option in value.options:
            out |= constructed(option)
        return out
    if isinstance(value, Call):
        cls = class_of(value.name)
        return {cls} if cls else set()
    return set()


def annotated(annotation: str) -> set[str]:
    """Class names an annotation mentions (`Optional[Runner]`, `*exec.Runner`, `A | B`)."""
    return {
        w
        for w in _WORD.findall(annotation)
        if w[0].isupper() and not w.isupper() and w not in _NOT_CLASSES
    }


def receiver_classes(ex: Extractor, call: Call, caller: Function) -> set[str]:
    """The classes whose method `call` may invoke, as far as the caller's code says."""
    callee = call.callee
    if not isinstance(callee, Attr):
        return set()
    base = callee.base
    if isinstance(base, Ref) and base.name in SELF_NAMES:
        return {caller.cls} if caller.cls else set()
    if isinstance(base, Call):
        return constructed(base)  # `LocalRunner().run(cmd)`
    out: set[str] = set()
    if isinstance(base, Attr) and isinstance(base.base, Ref) and base.base.name in SELF_NAMES:
        target = f"{base.base.name}.{base.name}"
        for fn in ex.class_functions(caller):
            for d in ex.filled(fn).defs.get(target, []):
                out |= constructed(d.value)
        if not out and caller.cls:
            out |= declared(ex, caller.cls, base.name)
    elif isinstance(base, Ref):
        scope: Function | None = caller
        seen_module = False
        while scope is not None:
            seen_module = seen_module or scope.key == -1
            for d in ex.filled(scope).defs.get(base.name, []):
                out |= constructed(d.value)
            p = scope.param(base.name)
            if p is not None:
                out |= annotated(p.annotation)
                return out
            scope = scope.parent
        if not seen_module:
            # a module-level object (`operating_system = OperatingSystem()`)
            for d in ex.filled(ex.module()).defs.get(base.name, []):
                out |= constructed(d.value)
    return out


_FIELD_TYPES = {
    "python": ("assignment", "left", "type"),
    "typescript": ("public_field_definition", "name", "type"),
    "tsx": ("public_field_definition", "name", "type"),
    "javascript": ("field_definition", "property", ""),
}
"""Per language: a class-body field's node type and its name and type fields."""


def declared(ex: Extractor, cls: str, attr: str) -> set[str]:
    """Classes a class body declares for its field `attr`: a pydantic/dataclass field
    (`execute_code: ExecuteNbCode = Field(default_factory=ExecuteNbCode)`), a TypeScript
    property (`private runner: Runner = new Runner()`)."""
    shape = _FIELD_TYPES.get(ex.lang)
    if shape is None:
        return set()
    kind, name_field, type_field = shape
    out: set[str] = set()
    for node in ex.name_nodes(cls):
        owner = node.parent
        if owner is None or owner.child_by_field_name("name") != node:
            continue
        body = owner.child_by_field_name("body")
        if (owner.type != "class_definition" and owner.type not in JS_CLASS_TYPES) or body is None:
            continue
        stack = list(body.named_children)
        while stack:
            item = stack.pop()
            if item.type == "expression_statement":
                stack.extend(item.named_children)
                continue
            if item.type != kind or ex.text(item.child_by_field_name(name_field)) != attr:
                continue
            if type_field:
                out |= annotated(ex.text(item.child_by_field_name(type_field)))
            value = item.child_by_field_name("right") or item.child_by_field_name("value")
            if value is not None:
                out |= constructed(ex.expr(value))
                factory = value.child_by_field_name("arguments")
                for arg in factory.named_children if factory is not None else ():
                    if arg.type == "keyword_argument" and ex.text(
                        arg.child_by_field_name("name")
                    ) in ("default_factory", "default"):
                        out |= {
                            c for c in [class_of(ex.text(arg.child_by_field_name("value")))] if c
                        }
    return out
