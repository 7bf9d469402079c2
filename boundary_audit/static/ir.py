"""The language-neutral intermediate representation the dataflow engine reads.

Per-language extractors (`static/extract/`) turn tree-sitter nodes into these values:
expressions (literals, names, attribute reads, calls, string templates, sequences...) and
functions with their parameters, definitions (`x = ...`, `self.x = ...`, loop and `with`
targets, in-place mutations such as `argv.append(x)`) and return values. Expressions compare
by identity (`eq=False`) so the engine can memoise on them cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter as ts


@dataclass(frozen=True, slots=True)
class Span:
    """A byte and 0-based line/column range of the source."""

    start_byte: int
    end_byte: int
    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @classmethod
    def of(cls, node: ts.Node) -> Span:
        """The span of a tree-sitter node."""
        (sl, sc), (el, ec) = node.start_point, node.end_point
        return cls(node.start_byte, node.end_byte, sl, sc, el, ec)


class Expr:
    """Base of every IR expression; each has a `span`."""

    __slots__ = ()
    span: Span


@dataclass(frozen=True, slots=True, eq=False)
class Lit(Expr):
    """A literal: `text` is the value a string literal denotes (quotes and escapes resolved)."""

    span: Span
    text: str
    is_str: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class Ref(Expr):
    """A read of a local, parameter or global name."""

    span: Span
    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Attr(Expr):
    """`base.name` (also Rust/Go field access and shell-free member reads)."""

    span: Span
    base: Expr
    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Index(Expr):
    """`base[key]` (key is None for slices)."""

    span: Span
    base: Expr
    key: Expr | None


@dataclass(frozen=True, slots=True, eq=False)
class Call(Expr):
    """A call; `name` is the dotted callee text (`subprocess.run`, `self.proc.stdin.write`)."""

    span: Span
    callee: Expr
    name: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()

    def kwarg(self, key: str) -> Expr | None:
        """The keyword (or options-object) argument `key`, if given."""
        for k, v in self.kwargs:
            if k == key:
                return v
        return None


@dataclass(frozen=True, slots=True, eq=False)
class Tmpl(Expr):
    """A string built from parts (f-string, concatenation, format, template literal, Sprintf)."""

    span: Span
    parts: tuple[Expr, ...]
    kind: str = "concat"


@dataclass(frozen=True, slots=True, eq=False)
class Spread(Expr):
    """`*x` / `...x` inside a sequence or call."""

    span: Span
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Seq(Expr):
    """A list/tuple/array/slice/vec literal."""

    span: Span
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Map(Expr):
    """A dict/object/struct literal; keys are literal names or None when computed."""

    span: Span
    items: tuple[tuple[str | None, Expr], ...]

    def get(self, key: str) -> Expr | None:
        """The value stored under literal key `key`."""
        for k, v in self.items:
            if k == key:
                return v
        return None


@dataclass(frozen=True, slots=True, eq=False)
class Alt(Expr):
    """One of several values (conditional expression, `a or b`)."""

    span: Span
    options: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Each(Expr):
    """A list rebuilt by a loop: `target` after `for var in source:` appends one item per
    iteration, each one of `items` (`out.append(part)`, `out.append(rel.as_posix())`); the
    span is the loop's. The list read before the loop, then one item per source item."""

    span: Span
    target: str
    var: str
    source: Expr
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Op(Expr):
    """Any other computation; data flows from every child."""

    span: Span
    children: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Unknown(Expr):
    """Something the extractor does not model (a lambda, a comprehension...)."""

    span: Span


@dataclass(frozen=True, slots=True)
class Param:
    """A function parameter."""

    name: str
    index: int
    """Position among the parameters (including `self`)."""
    span: Span
    default: Expr | None = None
    annotation: str = ""
    field: str | None = None
    """For a destructured parameter (`({command}) => ...`): the key read from argument `index`."""


@dataclass(frozen=True, slots=True, eq=False)
class Def:
    """An assignment-like definition of `target` (`x` or `self.x`) inside a function."""

    target: str
    value: Expr
    pos: int
    """Byte offset where the definition takes effect (end of the statement)."""
    span: Span
    kind: str = "assign"
    """assign | augment | loop | with | mutate | destructure | map (an `Each`, after the loop)."""


@dataclass(eq=False)
class Function:
    """A function, method, closure, or the module's top level (key -1)."""

    key: int
    name: str
    span: Span
    node: ts.Node
    cls: str | None = None
    params: tuple[Param, ...] = ()
    decorators: tuple[str, ...] = ()
    parent: Function | None = None
    defs: dict[str, list[Def]] = field(default_factory=dict)
    returns: list[Expr] = field(default_factory=list)
    blocks: list[tuple[int, int]] = field(default_factory=list)
    """Byte ranges of conditional/loop blocks inside the body (for reaching definitions)."""
    is_method: bool = False
    """Called through a receiver (`obj.f(...)`), not as a bare name."""
    self_param: bool = False
    """The receiver is the first declared parameter (Python's `self`): arguments shift by one."""

    def param(self, name: str) -> Param | None:
        """The parameter called `name`."""
        for p in self.params:
            if p.name == name:
                return p
        return None

    def block_path(self, pos: int) -> tuple[int, ...]:
        """Start bytes of the blocks that contain byte `pos`, outermost first."""
        return tuple(start for start, end in self.blocks if start <= pos < end)
