"""Abstract values the dataflow engine computes for an expression, and their provenance.

A value is a string template (`Str`: literal `Text` pieces and `Hole`s whose content is not
known statically), an argv-like list (`Lst`), a tokenized string (`Tok`, e.g. `shlex.split`),
a serializer's output (`Ser`, e.g. `json.dumps`), a handle on a process/file/connection
(`Obj`), an opaque value (`Opq`) or a choice between several (`Alts`). Every leaf carries a
`Prov`: the model-output `Origin`s it may come from, whether some part has unknown
provenance, the variables it passed through, and the steps worth showing as related locations.
A value whose provenance has neither origins nor unknown parts is a constant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from boundary_audit.static.ir import Span
from boundary_audit.taxonomy import Contract


@dataclass(frozen=True, slots=True)
class Origin:
    """Where model output enters: a tool-call argument, an LLM response, a parsed action..."""

    kind: str
    """`tool-call`, `llm-response`, `parsed-action` (traced to a source), `tool-entry` (a
    parameter of a registered tool handler), `tool-name` (named like a command inside a tool
    entry's class) or `name` (named like a command, and nothing else: not model-controlled)."""
    label: str
    path: str
    span: Span
    contract: Contract = Contract.UNKNOWN

    @property
    def strong(self) -> bool:
        """True for evidence beyond a name: a traced source or a tool entry's parameter."""
        return self.kind not in NAME_KINDS

    @property
    def counts(self) -> bool:
        """True if this origin alone makes a value model-controlled (a bare name does not)."""
        return self.kind != "name"

    @property
    def level(self) -> str:
        """The evidence level: `traced`, `tool-entry` or `name`."""
        return EVIDENCE_OF.get(self.kind, "traced")


NAME_KINDS = frozenset({"name", "tool-name"})
EVIDENCE_OF = {"tool-entry": "tool-entry", "name": "name", "tool-name": "name"}
EVIDENCE_RANK = {"traced": 3, "tool-entry": 2, "name": 1}
"""Evidence levels, strongest first (`Finding.model_evidence`)."""


@dataclass(frozen=True, slots=True)
class Input:
    """A value from outside the model: configuration, environment, a CLI flag, a person."""

    kind: str
    """`config`, `env`, `cli`, `human`, `mcp-server` or `hook` (`catalogue/sources.toml`,
    `[[input]]` and `[[input_key]]`; recognised by `static.inputs`)."""
    label: str
    """What was read, in words: `environment variable SHELL`, `CLI flag --cmd`."""
    path: str
    span: Span
    field: str = ""
    """How a key or attribute read of this input names the part (`CLI flag --{key}`)."""


@dataclass(frozen=True, slots=True)
class Step:
    """An intermediate location worth showing (a wrapping template, a call crossing)."""

    path: str
    span: Span
    note: str


@dataclass(frozen=True, slots=True)
class Prov:
    """Provenance of a value: model origins, unknown parts, variables and steps passed."""

    origins: frozenset[Origin] = frozenset()
    unknown: bool = False
    vars: frozenset[tuple[str, int, str]] = frozenset()
    """(path, function key, name) of every variable the value was read from."""
    steps: frozenset[Step] = frozenset()
    inputs: frozenset[Input] = frozenset()
    """Non-model sources the value comes from (configuration, environment, flags, a person)."""

    def join(self, other: Prov) -> Prov:
        """The union of two provenances."""
        # NOTE: the hottest call of the dataflow engine: emptiness is tested field by field
        # (what `== EMPTY` compares, without building two tuples), and a union with an
        # empty or identical set is that set.
        if other is self or other is EMPTY:
            return self
        if self is EMPTY:
            return other
        if not (other.origins or other.unknown or other.vars or other.steps or other.inputs):
            return self
        if not (self.origins or self.unknown or self.vars or self.steps or self.inputs):
            return other
        return Prov(
            _union(self.origins, other.origins),
            self.unknown or other.unknown,
            _union(self.vars, other.vars),
            _union(self.steps, other.steps),
            _union(self.inputs, other.inputs),
        )

    def with_var(self, var: tuple[str, int, str]) -> Prov:
        """This provenance, also recording that the value passed through `var`."""
        return Prov(self.origins, self.unknown, self.vars | {var}, self.steps, self.inputs)

    def with_step(self, step: Step) -> Prov:
        """This provenance plus one related step."""
        return Prov(self.origins, self.unknown, self.vars, self.steps | {step}, self.inputs)

    @property
    def constant(self) -> bool:
        """True when no model output and nothing unknown reaches the value: literals, and
        non-model inputs (configuration, environment, flags, a person's text) at most."""
        return not self.origins and not self.unknown

    @property
    def configured(self) -> bool:
        """True when the value is constant but some of it comes from a non-model input."""
        return self.constant and bool(self.inputs)

    @property
    def model(self) -> bool:
        """True when some origin makes the value model-controlled (a bare name does not)."""
        return any(o.counts for o in self.origins)

    @property
    def traced(self) -> bool:
        """True when evidence beyond a name reaches the value (a source or a tool entry)."""
        return any(o.strong for o in self.origins)

    @property
    def evidence(self) -> str | None:
        """The strongest evidence level among the origins, or None."""
        levels = {o.level for o in self.origins}
        return max(levels, key=EVIDENCE_RANK.__getitem__) if levels else None


EMPTY = Prov()
UNKNOWN = Prov(unknown=True)


_T = TypeVar("_T")


def _union(a: frozenset[_T], b: frozenset[_T]) -> frozenset[_T]:
    if a is b or not b:
        return a
    return b if not a else a | b


def join_all(provs: Iterable[Prov]) -> Prov:
    """The union of many provenances."""
    out = EMPTY
    for p in provs:
        out = out.join(p)
    return out


@dataclass(frozen=True, slots=True)
class Text:
    """A literal piece of a string template."""

    text: str
    path: str = ""
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Hole:
    """A piece of a string whose content is not known statically."""

    prov: Prov
    sanitizer: str | None = None
    """Quoting/serialising function applied to exactly this piece (`shlex.quote`...)."""
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Str:
    """A string value as a template of literal and unknown pieces."""

    pieces: tuple[Text | Hole, ...]

    def literal(self) -> str | None:
        """The string if it is fully literal."""
        if all(isinstance(p, Text) for p in self.pieces):
            return "".join(p.text for p in self.pieces if isinstance(p, Text))
        return None


@dataclass(frozen=True, slots=True)
class Lst:
    """An argv-like list; `rest` is the provenance of items of unknown number (spreads)."""

    items: tuple[AValue, ...]
    rest: Prov | None = None
    path: str = ""
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Tok:
    """A string split into argv words by `tokenizer` (`shlex.split`, `str.split`...)."""

    source: AValue
    tokenizer: str
    path: str = ""
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Ser:
    """The output of a serializer (`json.dumps`, `JSON.stringify`...) applied to `prov` data."""

    serializer: str
    prov: Prov
    path: str = ""
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Obj:
    """A handle: `process`, `file`, `ssh`, `container`, `sandbox`, `command` (Rust/Go builder)."""

    kind: str
    api: str
    argv: AValue | None = None
    """The program and arguments of a process or command builder."""
    pty: bool = False
    shell: bool = False
    """True for a process spawned through a shell string (`shell=True`)."""
    target: AValue | None = None
    """The path of a file handle."""
    path: str = ""
    span: Span | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Opq:
    """A value of no useful shape."""

    prov: Prov


@dataclass(frozen=True, slots=True)
class Alts:
    """One of several values (branches, several definitions, several callers)."""

    options: tuple[AValue, ...]


AValue = Str | Lst | Tok | Ser | Obj | Opq | Alts

CONST_OPAQUE = Opq(EMPTY)
UNKNOWN_OPAQUE = Opq(UNKNOWN)
MAX_ALTS = 6


def options(value: AValue) -> Iterator[AValue]:
    """The alternatives of `value` (itself if it is not an `Alts`)."""
    if isinstance(value, Alts):
        yield from value.options
    else:
        yield value


def alts(values: Iterable[AValue]) -> AValue:
    """A choice between `values`, flattened, deduplicated and capped at MAX_ALTS (the rest join)."""
    flat: list[AValue] = []
    for v in values:
        for o in options(v):
            if o not in flat:
                flat.append(o)
    if not flat:
        return UNKNOWN_OPAQUE
    if len(flat) == 1:
        return flat[0]
    if len(flat) > MAX_ALTS:
        keep, extra = flat[: MAX_ALTS - 1], flat[MAX_ALTS - 1 :]
        flat = [*keep, Opq(join_all(prov_of(v) for v in extra))]
    return Alts(tuple(flat))


def prov_of(value: AValue) -> Prov:
    """The provenance of everything inside `value`."""
    if isinstance(value, Str):
        return join_all(p.prov for p in value.pieces if isinstance(p, Hole))
    if isinstance(value, Lst):
        base = join_all(prov_of(v) for v in value.items)
        return base.join(value.rest) if value.rest is not None else base
    if isinstance(value, Tok):
        return prov_of(value.source)
    if isinstance(value, Ser):
        return value.prov
    if isinstance(value, Obj):
        out = EMPTY
        for part in (value.argv, value.target):
            if part is not None:
                out = out.join(prov_of(part))
        return out
    if isinstance(value, Opq):
        return value.prov
    return join_all(prov_of(v) for v in value.options)


def as_str(value: AValue) -> Str:
    """`value` seen as a string: templates stay, anything else becomes one hole."""
    if isinstance(value, Str):
        return value
    sanitizer = value.serializer if isinstance(value, Ser) else None
    return Str((Hole(prov_of(value), sanitizer),))
