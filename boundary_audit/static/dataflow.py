"""The def-use engine: what value can reach an expression, and where it came from.

`Engine.value(node)` evaluates the IR of an expression backwards: names go to their reaching
definitions in the function (the latest definitions before the use, stopping at one that
dominates it), parameters go to the arguments at every call site in the file (and, through
`Resolver`, in other files), `self.x` goes to the assignments in the class's methods, calls
go to sources, sanitizers, tokenizers, handles or the callee's return values (`calls.py`).
Recursion is cut by an in-progress set (a cycle contributes nothing, i.e. the least fixpoint
of the non-cyclic paths), memoised per (expression, function), and bounded by a step budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static import inputs as I
from boundary_audit.static import knowledge as K
from boundary_audit.static import programs as P
from boundary_audit.static import replay as R
from boundary_audit.static.dataflow_limits import MAX_STEPS
from boundary_audit.static.extract.base import Extractor
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
    Ref,
    Seq,
    Span,
    Spread,
    Tmpl,
    Unknown,
)
from boundary_audit.static.shapes import (
    attr_origin,
    concat_lists,
    dotted,
    handle_attr,
    merge_text,
    str_pieces,
    tag_var,
    with_origin,
)
from boundary_audit.static.values import (
    EMPTY,
    UNKNOWN,
    UNKNOWN_OPAQUE,
    Alts,
    AValue,
    Hole,
    Lst,
    Obj,
    Opq,
    Origin,
    Prov,
    Str,
    Text,
    Tok,
    alts,
    join_all,
    options,
    prov_of,
)
from boundary_audit.taxonomy import Contract

if TYPE_CHECKING:
    from boundary_audit.static.crossfile import Corpus
    from boundary_audit.static.replay import Replay


_NEVER = 1 << 30


class Budget:
    """Evaluation steps spent on the current sink (shared by the engines it involves)."""

    __slots__ = ("steps", "limit", "need", "gave_up")

    def __init__(self) -> None:
        self.steps = 0
        self.limit = MAX_STEPS
        """The step count past which evaluation gives up: MAX_STEPS, or less inside a
        parameter lookup (`Engine.param`), which may spend only a share of the steps left."""
        self.need = 0
        """The least `limit` the evaluation in progress has needed so far under the limit in
        force (a capped lookup needs its share of what was left where it began): evaluating
        the same again with at least that limit gives up nowhere (`replay.Replay.room`)."""
        self.gave_up = 0
        """Steps refused past `limit`, by any engine on this budget."""


class Engine:
    """Evaluates expressions of one file to abstract values."""

    def __init__(self, ex: Extractor, corpus: Corpus | None = None) -> None:
        self.ex = ex
        self.path = ex.path
        self.corpus = corpus
        self.hops = 0
        """File boundaries crossed to reach this engine (cross-file tracing)."""
        self.generation = corpus.generation if corpus is not None else 0
        """The corpus's generation when this engine was made (`Corpus.begin_file`)."""
        self.bindings: dict[tuple[int, str], AValue] = {}
        """Parameter values fixed by the caller (a call-site specific evaluation)."""
        self._memo: dict[tuple[object, ...], AValue] = {}
        self._alive: dict[int, Expr] = {}
        """Keeps every evaluated expression alive so its id() cannot be reused by a new one."""
        self._busy: dict[tuple[object, ...], int] = {}
        """Evaluations in progress -> their depth on the evaluation stack."""
        self._low = _NEVER
        """The shallowest in-progress evaluation a cycle cut of the current one returned to."""
        self.looped: dict[tuple[int, str], AValue] = {}
        """Loop variables fixed to one item of the list they iterate (`Engine.each`)."""
        self._outer: tuple[dict[tuple[object, ...], AValue], int] | None = None
        """The memo of the engine this one maps a loop for, and the loop's function: its
        values outside that function do not depend on the loop variable."""
        self.budget = Budget()
        """Steps left for the current sink, shared with the engines of other files it asks."""
        self.depth = 0
        self.at_site = False
        """A helper's value re-evaluated for one call site (`CallEvaluator.at_call_site`)."""
        self.lasting = False
        """Its memo outlives an evaluation that asks it (the corpus keeps it for every later
        lookup into its file, `Corpus.engine_for`), or it reads another engine's memo
        (`_mapped_item`): steps in it depend on more than that evaluation (`replay.keep`)."""
        self._own = 0
        """Steps this engine took."""
        self._trail: list[tuple[object, ...]] = []
        """Keys evaluated (not cut, not memo hits) since the outermost evaluation began."""
        self._cuts: list[tuple[object, ...]] = []
        """Keys a cycle cut returned to since the outermost evaluation began."""
        self._replays: dict[tuple[object, ...], Replay | None] = {}
        """Partial results kept for `replay.replay` (None: one was made once)."""
        from boundary_audit.static.calls import CallEvaluator
        from boundary_audit.static.parsing import QUERY_DIALECT

        self.calls = CallEvaluator(self)
        self.tables = I.tables(QUERY_DIALECT[ex.lang])
        """The non-model inputs of this file's language (`static.inputs`)."""

    # -- entry points -----------------------------------------------------------------------
    def value(self, node: ts.Node, role: str = "value") -> AValue:
        """The abstract value of expression `node` (in `role`, see `Extractor.sink_expr`)."""
        self.budget.steps = 0
        return self.eval(self.ex.sink_expr(node, role), self.ex.function_at(node))

    def eval(self, expr: Expr, fn: Function) -> AValue:
        """The abstract value of `expr` evaluated in `fn` (memoised)."""
        key = (id(expr), fn.key)
        hit = self._memo.get(key)
        if hit is None and self._outer is not None and fn.key != self._outer[1]:
            hit = self._outer[0].get(key)
        if hit is not None:
            return hit
        self._alive[id(expr)] = expr
        return self._guarded(key, self._eval, expr, fn)

    def _guarded(
        self, key: tuple[object, ...], compute: Callable[..., AValue], *args: object
    ) -> AValue:
        """`compute(*args)` with cycle cuts and memoisation by strongly connected component.

        A cycle contributes nothing (the least fixpoint of the other paths). A result that a
        cut made return into an evaluation still in progress is partial until that one ends,
        so it is memoised only when the cut returned to this very evaluation (the cycle's
        root) or to none: one pass per value, not one per path. A partial result that
        evaluating its key again would retrace step by step is kept instead
        (`replay.Replay`), and given again with those steps charged while that holds.
        """
        budget = self.budget
        budget.steps += 1
        self._own += 1
        if self.lasting:
            R.LASTING_STEPS[0] += 1
        if budget.steps > budget.limit:
            budget.gave_up += 1
            self._low = -1
            return UNKNOWN_OPAQUE
        busy = self._busy
        at = busy.get(key)
        if at is not None:
            self._low = min(self._low, at)
            self._cuts.append(key)
            return Opq(EMPTY)
        self._trail.append(key)
        kept = self._replays.get(key)
        if kept is not None:
            hit = R.replay(self, kept)
            if hit is not None:
                return hit
        depth = len(busy)
        busy[key] = depth
        outer, self._low = self._low, _NEVER
        frame = R.Frame(self)
        low = -1
        try:
            result = compute(*args)
            low = self._low
        finally:
            del busy[key]
            self._low = outer if low >= depth else min(outer, low)
            frame.close()
            if not depth:
                self._trail.clear()
                self._cuts.clear()
        if low >= depth:
            self._memo[key] = result
        elif low >= 0 and self._outer is None:
            R.keep(self, key, result, depth, frame)
        return result

    def _eval(self, expr: Expr, fn: Function) -> AValue:
        if isinstance(expr, Lit):
            return Str((Text(expr.text, self.path, expr.span),))
        if isinstance(expr, Ref):
            return self.ref(expr.name, expr.span.start_byte, fn, expr.span)
        if isinstance(expr, Attr):
            return self.attr(expr, fn)
        if isinstance(expr, Index):
            return self.index(expr, fn)
        if isinstance(expr, Call):
            return self.calls.eval(expr, fn)
        if isinstance(expr, Tmpl):
            return self.template(expr, fn)
        if isinstance(expr, Seq):
            return self.sequence_options(expr.items, fn, expr.span)
        if isinstance(expr, Spread):
            return self.eval(expr.value, fn)
        if isinstance(expr, Alt):
            return alts(self.eval(o, fn) for o in expr.options)
        if isinstance(expr, Map):
            return Opq(join_all(prov_of(self.eval(v, fn)) for _, v in expr.items))
        if isinstance(expr, Op):
            return Opq(join_all(prov_of(self.eval(c, fn)) for c in expr.children))
        if isinstance(expr, Each):
            return self.each(expr, fn)
        if isinstance(expr, Unknown):
            return UNKNOWN_OPAQUE
        return UNKNOWN_OPAQUE

    # -- names ------------------------------------------------------------------------------
    def ref(self, name: str, pos: int, fn: Function, span: Span) -> AValue:
        """Value of name `name` read at byte `pos` inside `fn` (then enclosing scopes, module)."""
        scope: Function = fn
        at = pos
        while True:
            if self.looped:
                bound = self.looped.get((scope.key, name))
                if bound is not None:
                    return tag_var(bound, (self.path, scope.key, name))
            value = self.local(name, at, scope)
            if value is not None:
                return tag_var(value, (self.path, scope.key, name))
            if scope.param(name) is not None:
                return tag_var(self.param(scope, name), (self.path, scope.key, name))
            if scope.key == -1:
                return self.input_read(name, span) or UNKNOWN_OPAQUE
            # NOTE(h2): outer scopes run before *and after* the inner function is defined, so
            # every definition there may reach the read: use the end of the file as position.
            at = len(self.ex.data) + 1
            scope = scope.parent if scope.parent is not None else self.ex.module()

    def local(
        self, name: str, pos: int, fn: Function, unmapped: Each | None = None
    ) -> AValue | None:
        """Value of the definitions of `name` in `fn` that reach byte `pos`; None if none.
        With `unmapped`, that loop's reading as a map is left out (its appends are read)."""
        defs = self.ex.filled(fn).defs.get(name)
        if defs and unmapped is not None:
            defs = [d for d in defs if d.value is not unmapped]
        if not defs:
            return None
        before = [d for d in defs if d.pos <= pos]
        if not before:
            # NOTE(h2): a read before every definition is either a parameter (`x = x.copy()`)
            # or a value carried around a loop from a later definition (never its own).
            if fn.param(name) is not None:
                return None
            chosen = [d for d in defs if not d.span.start_byte <= pos < d.pos]
            if not chosen:
                return None
        else:
            use_path = fn.block_path(pos)
            chosen = []
            for d in reversed(before):
                chosen.append(d)
                dpath = fn.block_path(d.span.start_byte)
                if use_path[: len(dpath)] == dpath:
                    break
            else:
                # every definition is conditional (`if bash: code = f"%%bash\n{code}"`) and
                # none is on an `else` branch: the parameter's own value reaches the read too
                if fn.param(name) is not None and not any(
                    self._on_else(fn, d, use_path) for d in chosen
                ):
                    values = [self.eval(d.value, fn) for d in chosen]
                    return alts([*values, self.param(fn, name)])
        return alts(self.eval(d.value, fn) for d in chosen)

    def each(self, expr: Each, fn: Function) -> AValue:
        """The list a loop rebuilds (`Each`): the list before the loop, then one item per
        item of the iterated list, what the loop appends with the loop variable fixed to
        that item (`for part in argv[1:]: out.append(str(part))` keeps `[sh, -c, cmd]`).
        One list per append of the loop (the iteration takes that branch for every item:
        the copy that changes nothing is one of them), not a list of joined items, which
        would hide the `-c`. An iterated value that is not a list of known items (at most
        `_MAX_MAPPED`, no split string among them), or a list before the loop that is not
        one, reads as the appends do without the map."""
        source = self.eval(expr.source, fn)
        before = self.local(expr.target, expr.span.start_byte, fn)
        starts = list(options(before)) if before is not None else []
        lists = [o for o in options(source) if isinstance(o, Lst)]
        if (
            not lists
            or not starts
            or not all(isinstance(o, Lst) for o in starts)
            or len(lists) != len(list(options(source)))
            or any(len(o.items) > _MAX_MAPPED or _has_tok(o) for o in lists)
        ):
            return self.local(expr.target, expr.span.end_byte, fn, expr) or UNKNOWN_OPAQUE
        out: list[AValue] = []
        for src in lists:
            # one column per append: what each append would give for every item
            rows = [self._mapped_item(expr, fn, item) for item in src.items]
            rest = src.rest
            if rest is not None:
                rest = rest.join(join_all(prov_of(self.eval(e, fn)) for e in expr.items))
            for k in range(len(expr.items)):
                items = tuple(row[k] for row in rows)
                for start in starts:
                    assert isinstance(start, Lst)
                    joined = start.rest.join(rest) if start.rest and rest else start.rest or rest
                    out.append(Lst(start.items + items, joined, self.path, expr.span))
        return alts(out)

    def _mapped_item(self, expr: Each, fn: Function, item: AValue) -> list[AValue]:
        """What each append of `expr`'s loop gives when its variable is `item` (in a child
        engine that shares this one's memo outside `fn`)."""
        child = Engine(self.ex, self.corpus)
        child.hops, child.depth, child.at_site = self.hops, self.depth, self.at_site
        child.budget = self.budget
        child.bindings = self.bindings
        child.looped = {**self.looped, (fn.key, expr.var): item}
        child._alive = self._alive
        child._outer = (self._memo, fn.key)
        child.lasting = True
        return [child.eval(e, fn) for e in expr.items]

    def _on_else(self, fn: Function, d: Def, use_path: tuple[int, ...]) -> bool:
        """Whether definition `d` is inside an `else` branch that the read at `use_path` is
        not inside (its innermost such block follows `else`, or is the else clause)."""
        pos = d.span.start_byte
        inner = [b for b in fn.blocks if b[0] <= pos < b[1] and b[0] not in use_path]
        if not inner:
            return False
        start = max(inner)[0]
        data = self.ex.data
        before = data[max(0, start - 64) : start].rstrip()
        return before.endswith((b"else", b"else:")) or data[start : start + 4] == b"else"

    def param(self, fn: Function, name: str) -> AValue:
        """Value of parameter `name` of `fn`: the arguments its callers pass."""
        bound = self.bindings.get((fn.key, name))
        if bound is not None:
            return bound
        key = ("param", fn.key, name)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if key not in self._busy and R.too_deep(self, key):
            return UNKNOWN_OPAQUE
        self.depth += 1
        try:
            return self._capped(lambda: self._guarded(key, self._param, fn, name))
        finally:
            self.depth -= 1

    def _capped(self, compute: Callable[[], AValue]) -> AValue:
        """`compute()` spending at most `PARAM_SHARE` of the steps left (`PARAM_FLOOR` at
        least): one parameter's callers (`this.state.environment` back through every
        `resume(state)` of the corpus) then cannot leave the sibling holes of the same command
        (the model's `cmd`) unread."""
        budget = self.budget
        limit = budget.limit
        start = budget.steps
        budget.limit = start + R.share(limit - start)
        need, budget.need = budget.need, 0
        try:
            return compute()
        finally:
            budget.limit = limit
            # what the capped evaluation needed of the steps left where it began
            budget.need = max(need, start + R.unshare(max(budget.need, budget.steps) - start))

    def _param(self, fn: Function, name: str) -> AValue:
        p = fn.param(name)
        assert p is not None
        found = self.calls.arguments_for(fn, p)
        entry = None if (fn.self_param and p.index == 0) else self.ex.tools.entry(fn)
        if entry is not None:
            origin = Origin(
                "tool-entry",
                f"parameter `{name}` of tool `{fn.name}` ({entry})",
                self.path,
                p.span,
                Contract.NATIVE,
            )
            if self.corpus is not None:
                found = found + self.corpus.param_values(self, fn, name, shapes=True)
            # The model's text arrives in the shape the entry's callers give it (a base
            # class's `self._exec(*["sh", "-lc", cmd])`): their values, with its origin.
            tagged = [with_origin(v, origin) for v in found]
            return alts([Opq(Prov(frozenset({origin}))), *tagged])
        cli = self.tables.decorated(fn.decorators) if fn.decorators else None
        if cli is not None and not (fn.self_param and p.index == 0):
            rule, decorator = cli
            label = f"CLI option --{name} (@{decorator})"
            return alts([Opq(I.make(rule, label, self.path, p.span, keyed=False)), *found])
        if self.corpus is not None and not any(prov_of(v).model for v in found):
            found = found + self.corpus.param_values(self, fn, name)
        if found:
            return alts(found)
        if K.is_command_name(name) or K.is_tool_param(name):
            kind = "tool-name" if self.ex.tools.tool_class(fn.cls) else "name"
            return Opq(
                Prov(
                    frozenset({Origin(kind, f"parameter `{name}`", self.path, p.span)}),
                    unknown=True,
                )
            )
        return UNKNOWN_OPAQUE

    # -- attribute and index reads ----------------------------------------------------------
    def attr(self, expr: Attr, fn: Function) -> AValue:
        """Value of `base.name`: a source, a class attribute, a handle's part, or the base data."""
        name = expr.name
        base_text = dotted(expr.base)
        fixed = (
            P.CONSTANT_ATTRS.get(self.ex.canonical(f"{base_text}.{name}")) if base_text else None
        )
        if fixed is not None:
            return Str((Text(fixed, self.path, expr.span),))
        read = self.input_read(f"{base_text}.{name}", expr.span) if base_text else None
        if read is not None:
            return read
        origin = attr_origin(name, base_text, self.path, expr.span)
        if (
            base_text in ("self", "this") or base_text.startswith(("self.", "this."))
        ) and fn.cls is not None:
            own = self.class_attr(fn, f"{base_text}.{name}")
            if own is not None:
                return own if origin is None else Opq(prov_of(own).join(Prov(frozenset({origin}))))
        if base_text and not origin:
            value = self.local(f"{base_text}.{name}", expr.span.start_byte, fn)
            if value is not None:
                return value
        if origin is None and isinstance(expr.base, Call):
            returned = self.calls.returned_field(expr.base, fn, name)
            if returned is not None:
                return returned
        base = self.eval(expr.base, fn)
        prov = prov_of(base)
        if prov.configured and not any(isinstance(o, Obj) for o in options(base)):
            # `args.action`, `settings.hooks`: a part of a configured value, not model output.
            return Opq(I.refine(prov, name, self.path, expr.span))
        if origin is not None:
            return Opq(prov.join(Prov(frozenset({origin}))))
        for o in options(base):
            if isinstance(o, Obj):
                return handle_attr(o, name)
        if K.is_command_name(name) and not prov.origins and prov.unknown:
            kind = "tool-name" if self.ex.tools.tool_class(fn.cls) else "name"
            hint = Origin(kind, f"field `{name}`", self.path, expr.span)
            prov = prov.join(Prov(frozenset({hint})))
        return Opq(prov)

    def input_read(self, dotted_name: str, span: Span) -> AValue | None:
        """A read of a non-model input by name (`os.environ`, `process.env`, `sys.argv`)."""
        rule = self.tables.reads.get(self.ex.canonical(dotted_name))
        if rule is None:
            return None
        label = I.fill(rule.read_label, read=dotted_name)
        return Opq(I.make(rule, label, self.path, span))

    def class_attr(self, fn: Function, target: str) -> AValue | None:
        """Join of every assignment to `self.x` in the methods of `fn`'s class."""
        values: list[AValue] = []
        needle = target.encode()
        data = self.ex.data
        for other in self.ex.class_functions(fn):
            if data.find(needle, other.span.start_byte, other.span.end_byte) < 0:
                continue
            values.extend(
                self.eval(d.value, other) for d in self.ex.filled(other).defs.get(target, ())
            )
        if not values and fn.cls is not None:
            top = self.ex.module()
            own = self.ex.class_defs(fn.cls).get(target.split(".", 1)[1], ())
            values.extend(self.eval(d.value, top) for d in own)
        if not values and self.corpus is not None and target.count(".") == 1:
            values.extend(self.corpus.inherited_attrs(self, fn, target))
        return alts(values) if values else None

    def index(self, expr: Index, fn: Function) -> AValue:
        """Value of `base[key]`: a list item, a tool-call argument read, or the base's data."""
        base = self.eval(expr.base, fn)
        key = self.eval(expr.key, fn) if expr.key is not None else None
        key_text = key.literal() if isinstance(key, Str) else None
        if key_text is not None:
            origin = attr_origin(key_text, dotted(expr.base), self.path, expr.span)
            base_prov = prov_of(base)
            if base_prov.configured and not any(isinstance(o, (Lst, Obj)) for o in options(base)):
                return Opq(I.refine(base_prov, key_text, self.path, expr.span))
            if origin is not None:
                return Opq(prov_of(base).join(Prov(frozenset({origin}))))
        table = self.table_of(expr.base, fn) if expr.key is not None else None
        if table is not None:
            found, scope = table
            chosen = found.get(key_text) if key_text is not None else None
            if chosen is not None:
                return self.eval(chosen, scope)
            if key_text is None and found.items:
                return alts(self.eval(v, scope) for _, v in found.items)
        results: list[AValue] = []
        for o in options(base):
            if isinstance(o, Lst) and key_text is not None and key_text.lstrip("-").isdigit():
                i = int(key_text)
                if -len(o.items) <= i < len(o.items):
                    results.append(o.items[i])
                    continue
            if isinstance(o, Lst) and expr.key is None:
                results.append(Lst(o.items[1:], o.rest, o.path, o.span) if o.items else o)
                continue
            if isinstance(o, Tok):
                results.append(o if expr.key is None else Opq(prov_of(o)))
                continue
            if isinstance(o, Obj):
                results.append(o)
                continue
            results.append(Opq(prov_of(o)))
        return alts(results)

    def table_of(self, expr: Expr, fn: Function) -> tuple[Map, Function] | None:
        """The dict literal a name or `self.X` is bound to, and the scope to evaluate it in,
        when that literal is its only definition (`COMMANDS = {"python": "python {f}", ...}`)."""
        if isinstance(expr, Map):
            return expr, fn
        defs: list[Def] = []
        scope = fn
        if isinstance(expr, Ref):
            cur: Function | None = fn
            while cur is not None and not defs:
                defs = list(self.ex.filled(cur).defs.get(expr.name, ()))
                scope = cur
                cur = None if cur.key == -1 else (cur.parent or self.ex.module())
        elif (
            isinstance(expr, Attr)
            and isinstance(expr.base, Ref)
            and expr.base.name in ("self", "this", "cls")
            and fn.cls is not None
        ):
            target = f"{expr.base.name}.{expr.name}"
            if any(target in self.ex.filled(o).defs for o in self.ex.class_functions(fn)):
                return None
            defs = list(self.ex.class_defs(fn.cls).get(expr.name, ()))
            scope = self.ex.module()
        if len(defs) == 1 and isinstance(defs[0].value, Map):
            return defs[0].value, scope
        return None

    # -- strings and sequences --------------------------------------------------------------
    def template(self, expr: Tmpl, fn: Function) -> AValue:
        """A string (or, for `+` of lists, a list) built from the template's parts."""
        parts = self._cheap_first(expr.parts, fn)
        if expr.kind == "concat" and any(isinstance(o, Lst) for p in parts for o in options(p)):
            return concat_lists(parts, self.path, expr.span)
        pieces: list[Text | Hole] = []
        for p in parts:
            pieces.extend(str_pieces(p))
        return Str(tuple(merge_text(pieces)))

    def _cheap_first(self, exprs: tuple[Expr, ...], fn: Function) -> list[AValue]:
        """The values of `exprs` (a spread's: of what it spreads), evaluated cheapest first.

        The order of evaluation does not change a value, but on a sink whose step budget
        runs out the cheap reads (the model's `*cmd`, a parameter) are the ones that should
        have been looked at (`[sh, -c, script, path_of(x), *cmd]`)."""
        order = sorted(range(len(exprs)), key=lambda i: _cost(exprs[i]))
        values: dict[int, AValue] = {}
        for i in order:
            e = exprs[i]
            values[i] = self.eval(e.value if isinstance(e, Spread) else e, fn)
        return [values[i] for i in range(len(exprs))]

    def sequence(self, items: tuple[Expr, ...], fn: Function, span: Span) -> Lst:
        """A list value from sequence items (spreads of known lists are inlined)."""
        # Names first, calls last: the order of evaluation does not change a value, but on a
        # sink whose step budget runs out the cheap reads (the model's `*cmd`) are the ones
        # that should have been looked at (`[sh, -c, script, path_of(x), *cmd]`).
        return _assemble(items, self._cheap_first(items, fn), self.path, span)

    def sequence_options(self, items: tuple[Expr, ...], fn: Function, span: Span) -> AValue:
        """A list literal's value; a spread of one of several lists (`[*argv]`, `argv` the
        `[sh, -c, cmd]` of one branch and `shlex.split(cmd)` of the other) gives one list
        per alternative, so each keeps its shape (for the first such spread)."""
        values = self._cheap_first(items, fn)
        for i, item in enumerate(items):
            inner = values[i]
            if (
                isinstance(item, Spread)
                and isinstance(inner, Alts)
                and any(isinstance(o, (Lst, Tok)) for o in inner.options)
            ):
                return alts(
                    _assemble(items, [*values[:i], o, *values[i + 1 :]], self.path, span)
                    for o in inner.options
                )
        return _assemble(items, values, self.path, span)


def _assemble(items: tuple[Expr, ...], values: list[AValue], path: str, span: Span) -> Lst:
    """The list of sequence `items` whose values are `values` (spreads of lists inlined)."""
    out: list[AValue] = []
    rest: Prov | None = None
    for item, value in zip(items, values, strict=True):
        if not isinstance(item, Spread):
            out.append(value)
        elif isinstance(value, Lst):
            out.extend(value.items)
            rest = value.rest if rest is None else rest.join(value.rest or EMPTY)
        else:
            rest = prov_of(value) if rest is None else rest.join(prov_of(value))
            if isinstance(value, Tok):
                out.append(value)
    return Lst(tuple(out), rest, path, span)


_MAX_MAPPED = 16
"""Items of a list a loop rebuilds that are mapped one by one (`Engine.each`)."""


def _has_tok(value: Lst) -> bool:
    """Whether a list holds a split string (items of unknown number) among its items."""
    return any(isinstance(i, Tok) for i in value.items)


def _cost(expr: Expr) -> int:
    """A rough cost of evaluating `expr`: literals and names, then attributes, then the rest."""
    inner = expr.value if isinstance(expr, Spread) else expr
    if isinstance(inner, (Lit, Ref)):
        return 0
    if isinstance(inner, Attr):
        return 1
    return 2


__all__ = ["Engine", "UNKNOWN"]
