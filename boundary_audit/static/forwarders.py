"""Forwarders: calls that call a callable they are given with the arguments after it.

`asyncio.to_thread(subprocess.run, cmd, shell=True)` runs `subprocess.run(cmd, shell=True)`;
`loop.run_in_executor(None, os.system, cmd)` runs `os.system(cmd)`; `functools.partial(f, a)`
binds `f(a, ...)`. The library forwarders are data (`[[forwarder]]` in catalogue/sinks.toml:
the callee's dotted suffixes and `fn`, the position of the callable argument). A function of
the file is a forwarder when its body calls one of its parameters with its variadic
parameter spread into the call: directly (`fn(*args)`), through an attribute or a `getattr`
of it (`getattr(fn, "aio")(*args, **kwargs)`), or through a library forwarder
(`functools.partial(fn, *args)`, `loop.run_in_executor(None, fn, *args)`).

`forwarded` rewrites a forwarder call into the call it makes, so the dataflow engine sees
`subprocess.run(cmd, shell=True)` where the code says `asyncio.to_thread(subprocess.run, cmd,
shell=True)`; `apis.sites` uses `callable_at` to make the forwarder call a sink site when
the callable is a sink.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static import catalogue
from boundary_audit.static.ir import Attr, Call, Expr, Function, Lit, Param, Ref, Spread

if TYPE_CHECKING:
    from boundary_audit.static.extract.base import Extractor


@dataclass(frozen=True)
class Forwarder:
    """A library forwarder: the callee suffixes and where the callable is."""

    calls: tuple[str, ...]
    fn: int
    binds: bool = False
    """It returns the bound callable (`functools.partial`) instead of calling it."""
    kwargs: bool = True
    """Keyword arguments go on to the callable (`run_in_executor` takes none)."""


@cache
def library(dialect: str) -> tuple[Forwarder, ...]:
    """The `[[forwarder]]` entries of `dialect`."""
    return tuple(
        Forwarder(
            catalogue.strings(e, "calls"),
            int(e["fn"]),
            bool(e.get("binds", False)),
            bool(e.get("kwargs", True)),
        )
        for e in catalogue.entries("sinks", "forwarder")
        if e.get("lang") == dialect
    )


def _suffix(name: str, call: str) -> bool:
    return name == call or name.endswith("." + call)


def library_match(dialect: str, *names: str) -> Forwarder | None:
    """The library forwarder whose suffix one of `names` (callee spellings) ends with."""
    for f in library(dialect):
        if any(_suffix(n, c) for n in names if n for c in f.calls):
            return f
    return None


@cache
def last_names(dialect: str) -> frozenset[str]:
    """Last names of the library forwarders (what a call's callee must end with)."""
    return frozenset(c.rsplit(".", 1)[-1] for f in library(dialect) for c in f.calls)


# -- forwarders of the file ------------------------------------------------------------------

_LOCAL: weakref.WeakKeyDictionary[Extractor, dict[int, tuple[int, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)


def local(ex: Extractor) -> dict[int, tuple[int, frozenset[str]]]:
    """Function key -> (index of the forwarded callable among its parameters, the names of
    its own keyword parameters) for every forwarder function of the file."""
    hit = _LOCAL.get(ex)
    if hit is None:
        hit = _LOCAL[ex] = _find_local(ex)
    return hit


def local_names(ex: Extractor) -> frozenset[str]:
    """Names of the file's forwarder functions."""
    found = local(ex)
    return frozenset(f.name for f in ex.all_functions() if f.key in found) if found else frozenset()


_VARIADIC = re.compile(rb"^(?:\*(?!\*)|\.\.\.|\w+\s+\.\.\.)")
"""`*args`, JS `...rest`, Go `args ...string` (not `fn: Callable[..., R]`)."""
_KEYWORDS = re.compile(rb"^\*\*")


def _variadic(span_text: bytes) -> bool:
    return bool(_VARIADIC.match(span_text))


_PY_GAP = rb"(?:\s|\\|#[^\n]*+)*+"
_C_GAP = rb"(?:\s|//[^\n]*+|/\*.*?\*/)*+"
_NAME = rb"([\w$\x80-\xff]++)"
_SPREAD_NAMES: dict[str, re.Pattern[bytes]] = {
    "python": re.compile(rb"[(,]" + _PY_GAP + rb"(\*\*?)" + _PY_GAP + _NAME),
    "javascript": re.compile(rb"[(,]" + _C_GAP + rb"(\.\.\.)" + _C_GAP + _NAME, re.S),
    "go": re.compile(rb"[(,]" + _C_GAP + _NAME + _C_GAP + rb"(\.\.\.)", re.S),
}
"""A name beside a variadic marker, first in a parameter or argument list (after `(` or
`,`, blanks and comments between): Python `*args` (and `**args`), JS `...rest`, Go `args
...string` and `args...`. A forwarder's variadic parameter is spelt so once in its header
(Python: with one star) and once more where the body spreads it into a call. The gaps are
possessive: a run of commented-out lines after a `(` must not backtrack (exponentially)."""


def may_have_local(dialect: str, data: bytes) -> bool:
    """Cheap test: could the file define a forwarder function (a name spelt twice beside a
    variadic marker, once as a parameter could be)? Without a pattern for `dialect`: if it
    has a marker at all."""
    pattern = _SPREAD_NAMES.get(dialect)
    if pattern is None:
        return b"*" in data or b"..." in data
    group = 1 if dialect == "go" else 2
    seen: dict[bytes, bool] = {}
    for m in pattern.finditer(data):
        name, param = m.group(group), m.group(3 - group) != b"**"
        if name in seen and (param or seen[name]):
            return True
        seen[name] = seen.get(name, False) or param
    return False


def _find_local(ex: Extractor) -> dict[int, tuple[int, frozenset[str]]]:
    from boundary_audit.static.parsing import QUERY_DIALECT

    dialect = QUERY_DIALECT[ex.lang]
    if not may_have_local(dialect, ex.data):
        return {}
    out: dict[int, tuple[int, frozenset[str]]] = {}
    for fn in ex.all_functions():
        texts = [ex.data[p.span.start_byte : p.span.end_byte] for p in fn.params]
        rest = [p.name for p, t in zip(fn.params, texts, strict=True) if _variadic(t)]
        if not rest:
            continue
        plain = {
            p.name: p
            for p, t in zip(fn.params, texts, strict=True)
            if not _variadic(t) and not _KEYWORDS.match(t) and not (fn.self_param and p.index == 0)
        }
        if not plain:
            continue
        found = _forwarded_param(ex, dialect, fn, plain, frozenset(rest))
        if found is not None:
            out[fn.key] = (plain[found].index, frozenset(plain))
    return out


def _forwarded_param(
    ex: Extractor, dialect: str, fn: Function, params: dict[str, Param], rest: frozenset[str]
) -> str | None:
    """The parameter of `fn` its body calls with a variadic parameter spread in, if any."""
    stack = [fn.node]
    while stack:
        node = stack.pop()
        if node.type in ex.CALL_TYPES:
            call = ex.expr(node)
            if isinstance(call, Call):
                name = _head_param(ex, fn, call, dialect, params, rest)
                if name is not None:
                    return name
        stack.extend(node.named_children)
    return None


def _head_param(
    ex: Extractor,
    fn: Function,
    call: Call,
    dialect: str,
    params: dict[str, Param],
    rest: frozenset[str],
) -> str | None:
    head: Expr = call.callee
    args = call.args
    lib = library_match(dialect, ex.canonical(call.name), call.name)
    if lib is not None:
        if len(args) <= lib.fn:
            return None
        head, args = args[lib.fn], args[lib.fn + 1 :]
    if not any(
        isinstance(a, Spread) and isinstance(a.value, Ref) and a.value.name in rest for a in args
    ):
        return None
    name = _param_of(ex, fn, head)
    return name if name in params else None


def _param_of(ex: Extractor, fn: Function, head: Expr) -> str | None:
    """`p` for `p`, `p.aio`, `getattr(p, "aio")` or a local bound once to one of these."""
    for _ in range(3):
        if isinstance(head, Attr):
            head = head.base
        elif isinstance(head, Call) and head.name == "getattr" and head.args:
            head = head.args[0]
        elif isinstance(head, Ref) and fn.param(head.name) is None:
            defs = ex.filled(fn).defs.get(head.name, [])
            if len(defs) != 1:
                return None
            head = defs[0].value
        else:
            break
    return head.name if isinstance(head, Ref) else None


# -- rewriting a forwarder call ----------------------------------------------------------------


def callable_name(expr: Expr) -> str:
    """The dotted callee text of a callable expression (`?` for a part that is no name)."""
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Attr):
        return f"{callable_name(expr.base)}.{expr.name}"
    return "?"


def _callable_ok(expr: Expr) -> bool:
    """A callable we can name: a name, an attribute chain, `getattr(...)`, a partial call."""
    return isinstance(expr, (Ref, Attr, Call)) and not isinstance(expr, Lit)


def forwarded(ex: Extractor, call: Call, cn: str, targets: list[Function] | None) -> Call | None:
    """The call `call` makes when it forwards a callable (None when it is no forwarder).

    `targets` are the file's functions the call may invoke (None if not asked)."""
    from boundary_audit.static.parsing import QUERY_DIALECT

    dialect = QUERY_DIALECT[ex.lang]
    inner = call.callee
    if isinstance(inner, Call):
        bound = forwarded(ex, inner, ex.canonical(inner.name), None)
        lib = library_match(dialect, ex.canonical(inner.name), inner.name)
        if bound is not None and lib is not None and lib.binds:
            return Call(
                call.span,
                bound.callee,
                bound.name,
                (*bound.args, *call.args),
                (*bound.kwargs, *call.kwargs),
            )
        return None
    lib = library_match(dialect, cn, call.name)
    index: int | None = None
    own: frozenset[str] = frozenset()
    keep_kwargs = True
    if lib is not None:
        index, keep_kwargs = lib.fn, lib.kwargs
    elif targets:
        found = local(ex)
        spots = {found.get(t.key, (None, frozenset()))[0] for t in targets}
        target = targets[0]
        if len(spots) != 1 or None in spots:
            return None
        shift = 1 if target.self_param and isinstance(call.callee, Attr) else 0
        index = next(iter(spots))
        assert index is not None
        index -= shift
        own = found[target.key][1]
    if index is None or index < 0 or len(call.args) <= index:
        return None
    if any(isinstance(a, Spread) for a in call.args[: index + 1]):
        return None
    head = call.args[index]
    if not _callable_ok(head):
        return None
    kwargs = tuple((k, v) for k, v in call.kwargs if k not in own) if keep_kwargs else ()
    if isinstance(head, Call):
        bound = forwarded(ex, head, ex.canonical(head.name), None)
        blib = library_match(dialect, ex.canonical(head.name), head.name)
        if bound is None or blib is None or not blib.binds:
            return None
        return Call(
            call.span,
            bound.callee,
            bound.name,
            (*bound.args, *call.args[index + 1 :]),
            (*bound.kwargs, *kwargs),
        )
    return Call(call.span, head, callable_name(head), call.args[index + 1 :], kwargs)


def callable_at(ex: Extractor, call: ts.Node, index: int) -> ts.Node | None:
    """The positional argument node `index` of call node `call`, when no spread precedes it."""
    anode = call.child_by_field_name("arguments")
    if anode is None:
        return None
    positional = [
        a for a in anode.named_children if a.type not in ("comment", "keyword_argument", "pair")
    ]
    if index >= len(positional):
        return None
    if any(a.type in ("list_splat", "spread_element") for a in positional[: index + 1]):
        return None
    return positional[index]


__all__ = [
    "Forwarder",
    "callable_at",
    "callable_name",
    "forwarded",
    "last_names",
    "library",
    "library_match",
    "local",
    "local_names",
]
