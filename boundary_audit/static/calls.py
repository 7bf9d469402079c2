"""What a call evaluates to, for the dataflow engine.

In order: a quoting sanitizer or serializer (`shlex.quote`, `json.dumps`), a tokenizer
(`shlex.split`, `cmd.split()`), a model-output source (LLM client call, action parser, a regex
that extracts a fenced code block), a handle constructor (`subprocess.Popen`, `open`,
`Command::new`, `exec.Command`), a method on a handle (`.arg`, `.args`, `.open`), a string
method that keeps its receiver's shape, a function defined in the same file (its return
values), or else an opaque value carrying its arguments' provenance.
"""

from __future__ import annotations

import re
import shlex
import weakref
from typing import TYPE_CHECKING, cast

from boundary_audit.static import forwarders
from boundary_audit.static import inputs as I
from boundary_audit.static import knowledge as K
from boundary_audit.static import programs as P
from boundary_audit.static.dataflow_limits import SITE_STEPS
from boundary_audit.static.handles import (
    BUILDERS,
    HANDLE_CONSTRUCTORS,
    METHOD_HANDLERS,
    Ctor,
    handle_method,
    join_list,
)
from boundary_audit.static.ir import (
    Attr,
    Call,
    Expr,
    Function,
    Lit,
    Map,
    Param,
    Ref,
    Span,
    Spread,
)
from boundary_audit.static.parsing import QUERY_DIALECT
from boundary_audit.static.receivers import receiver_classes
from boundary_audit.static.replay import too_deep
from boundary_audit.static.shapes import format_template
from boundary_audit.static.values import (
    EMPTY,
    UNKNOWN,
    AValue,
    Hole,
    Lst,
    Obj,
    Opq,
    Origin,
    Prov,
    Ser,
    Step,
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
    from boundary_audit.static.dataflow import Engine

PASS_THROUGH = frozenset(
    {
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
        "encode",
        "decode",
        "trim",
        "trimEnd",
        "trimStart",
        "trim_end",
        "trim_start",
        "to_string",
        "to_owned",
        "as_str",
        "into",
        "clone",
        "unwrap",
        "expect",
        "as_ref",
        "as_bytes",
        "borrow",
        "to_str",
        "unwrap_or_default",
        "unwrap_or",
        "toString",
        "valueOf",
        "as_deref",
        "cloned",
        "to_vec",
        "into_iter",
        "iter",
        "await",
        "removeprefix",
        "removesuffix",
        "normalize",
        "dedent",
        "String",
        "str",
        "textwrap.dedent",
        "inspect.cleandoc",
        "os.fspath",
        "json.loads",
        "JSON.parse",
        "json.load",
        "str.strip",
        "[]byte",
        "string",
        "bytes.NewBufferString",
        "strings.NewReader",
        "bytes.NewReader",
        "strings.TrimSpace",
        "Some",
        "Ok",
        "Box::new",
        "Arc::new",
        "String::from",
        "Cow::from",
        "OsString::from",
        "OsStr::new",
        "PathBuf::from",
        "std::ffi::OsString::from",
        "String.raw",
    }
)
"""Calls whose result is (a trivially transformed copy of) their receiver or first argument."""
PURE = frozenset(
    {
        "os.path.join",
        "os.path.abspath",
        "os.path.expanduser",
        "pathlib.Path",
        "Path",
        "len",
        "int",
        "float",
        "path.join",
        "path.resolve",
        "filepath.Join",
        "std::path::Path::new",
        "std::path::PathBuf::from",
        "Path::new",
        "PathBuf::from",
        "format",
    }
)
"""Calls that compute a constant from constant arguments."""


class CallEvaluator:
    """Evaluates `Call` expressions for an `Engine`."""

    def __init__(self, engine: Engine) -> None:
        # NOTE(h2): a proxy, not the engine: an engine owns its evaluator, and a reference back
        # made each file's engine, its memo and its extractor's tree a cycle that only the
        # collector could free (tests/test_static_no_cycles.py).
        self.engine: Engine = cast("Engine", weakref.proxy(engine))
        self.ex = engine.ex
        self._quoting: frozenset[str] | None = None

    def encoded(self, call: Call, fn: Function, last: str) -> AValue | None:
        """`buf.toString("base64")`: the receiver's text encoded (`K.ENCODING_METHODS`)."""
        encodings = K.ENCODING_METHODS.get(last)
        if encodings is None or not isinstance(call.callee, Attr) or len(call.args) != 1:
            return None
        arg = call.args[0]
        if not isinstance(arg, Lit) or arg.text not in encodings:
            return None
        inner = prov_of(self.engine.eval(call.callee.base, fn))
        return Str((Hole(inner, f"{last}({arg.text!r}){K.ENCODED}", call.span),))

    def quoting_helpers(self) -> frozenset[str]:
        """The project's own shell-quoting helpers this file may call (`static/quoters`)."""
        if self._quoting is None:
            from boundary_audit.static import crossfile, quoters

            family = crossfile.FAMILY.get(self.ex.lang)
            corpus = crossfile.active()
            found = quoters.find(self.ex.data, family)
            if corpus is not None and self.ex.path in corpus.files:
                found |= corpus.quoters(family)
            self._quoting = found
        return self._quoting

    def canonical(self, call: Call, fn: Function) -> str:
        """The callee's canonical dotted name (imports and simple local aliases resolved)."""
        if "?" in call.name:
            dynamic = self.ex.callee_name(call.callee)
            if dynamic:
                return dynamic
        name = self.ex.canonical(call.name)
        if isinstance(call.callee, Ref) and call.callee.name not in self.ex.imports:
            alias = self.alias_of(call.callee.name, fn)
            if alias:
                return alias
        return name

    def alias_of(self, name: str, fn: Function) -> str | None:
        """`run = subprocess.run` / `execAsync = promisify(exec)` → the aliased canonical name."""
        for scope in (fn, self.ex.module()):
            for d in self.ex.filled(scope).defs.get(name, ())[-1:]:
                value = d.value
                if (
                    isinstance(value, Call)
                    and value.name.rsplit(".", 1)[-1] == "promisify"
                    and value.args
                ):
                    value = value.args[0]
                if isinstance(value, (Ref, Attr)):
                    text = self.ex.canonical(_dotted(value))
                    if text and text != name:
                        return text
        return None

    def eval(self, call: Call, fn: Function) -> AValue:
        """The abstract value a call returns."""
        cn = self.canonical(call, fn)
        made = self.forwarded(call, cn, fn)
        if made is not None:
            return self.eval(made, fn)
        last = cn.rsplit(".", 1)[-1]
        arg0 = call.args[0] if call.args else None
        given = self.input_call(call, cn, fn)
        if given is not None:
            return given
        if P.inert_call(cn) or (
            not call.args
            and not call.kwargs
            and cn not in HANDLE_CONSTRUCTORS
            and self.ex.lang in _CTOR_LANGS
            and _constructor(call.name)
        ):
            return Opq(EMPTY)
        if cn in K.SANITIZERS or call.name in K.SANITIZERS:
            display, kind = K.SANITIZERS.get(cn) or K.SANITIZERS[call.name]
            inner = prov_of(self.engine.eval(arg0, fn)) if arg0 is not None else EMPTY
            if kind == K.SERIALIZER:
                return Ser(display, inner, self.ex.path, call.span)
            if display in K.JOINERS and arg0 is not None:
                return self.joined(self.engine.eval(arg0, fn), inner, display, call)
            return Str((Hole(inner, display, call.span),))
        encoded = self.encoded(call, fn, last)
        if encoded is not None:
            return encoded
        if arg0 is not None and last in self.quoting_helpers():
            inner = prov_of(self.engine.eval(arg0, fn))
            return Str((Hole(inner, f"{last}(){K.QUOTING_HELPER}", call.span),))
        if cn in K.TOKENIZERS and arg0 is not None:
            return Tok(self.engine.eval(arg0, fn), K.TOKENIZERS[cn], self.ex.path, call.span)
        source = self.source(call, cn, fn)
        if source is not None:
            return source
        if self.ex.lang == "go" and call.name == "append" and call.args:
            from boundary_audit.static.shapes import concat_lists

            head = self.engine.eval(call.args[0], fn)
            tail = self.engine.sequence(call.args[1:], fn, call.span)
            return concat_lists([head, tail], self.ex.path, call.span)
        ctor = HANDLE_CONSTRUCTORS.get(cn) or _by_suffix(call.name, cn)
        if ctor is not None:
            return ctor(self.engine, call, fn, cn)
        if isinstance(call.callee, Attr):
            method = self.method(call, fn, call.callee, last)
            if method is not None:
                return method
        if (cn in PASS_THROUGH or cn in K.DECODERS or last in K.DECODERS) and arg0 is not None:
            return self.engine.eval(arg0, fn)
        local = self.local_call(call, fn)
        if local is not None:
            return local
        if (
            self.ex.lang in _WRAPPING_CTOR_LANGS
            and len(call.args) == 1
            and not call.kwargs
            and _constructor(call.name)
        ):
            # `Command::Shell(format!(...))`: a tuple struct or enum variant holds its one
            # argument as it is (Rust spells constructors CamelCase, functions snake_case)
            return self.engine.eval(call.args[0], fn)
        provs = [prov_of(self.engine.eval(a, fn)) for a in call.args]
        provs += [prov_of(self.engine.eval(v, fn)) for _, v in call.kwargs]
        if isinstance(call.callee, Attr):
            recv = prov_of(self.engine.eval(call.callee.base, fn))
            # NOTE(h2): data flows from the receiver (`response.json()`), but the steps that
            # brought the receiver here are not steps of the command: keep origins only.
            provs.append(Prov(recv.origins, recv.unknown, recv.vars, inputs=recv.inputs))
        joined = join_all(provs)
        if cn in PURE:
            return Opq(joined)
        if (
            isinstance(call.callee, Attr)
            and joined.configured
            and provs[-1].configured
            and not any(isinstance(o, Obj) for o in options(self.engine.eval(call.callee.base, fn)))
        ):
            # A method of a configured value (`settings.get("shell")`, `reader.ReadString`)
            # with configured or literal arguments: a part of the configuration (not of a
            # file or process handle: what `open(path).read()` reads is not its path).
            if last.lower().startswith("get") and isinstance(arg0, Lit):
                joined = I.refine(joined, arg0.text, self.ex.path, call.span)
            return Opq(joined)
        return Opq(joined.join(UNKNOWN))

    def forwarded(self, call: Call, cn: str, fn: Function) -> Call | None:
        """The call a forwarder call makes (`asyncio.to_thread(subprocess.run, cmd)` makes
        `subprocess.run(cmd)`; see `forwarders`), or None."""
        name = call.name.rsplit(".", 1)[-1]
        dialect = QUERY_DIALECT[self.ex.lang]
        local = name in forwarders.local_names(self.ex)
        if not (local or isinstance(call.callee, Call) or name in forwarders.last_names(dialect)):
            return None
        return forwarders.forwarded(self.ex, call, cn, self.targets(call, fn) if local else None)

    def input_call(self, call: Call, cn: str, fn: Function) -> AValue | None:
        """A non-model input (`static.inputs`) if the call reads one: the environment, CLI
        arguments, a configuration file, a person's text; or the input a wrapper passes on.
        The origins of the call's arguments (a model-chosen path or name) are kept."""
        t = I.tables(QUERY_DIALECT[self.ex.lang])
        path, span = self.ex.path, call.span
        rule = t.matches(t.calls, cn) or (
            t.matches(t.calls, call.name) if cn != call.name else None
        )
        if rule is not None and rule.no_args and (call.args or call.kwargs):
            rule = None
        kind = "call"
        if rule is None and isinstance(call.callee, Attr):
            rule = t.methods.get(call.callee.name)
        if rule is None:
            rule, kind = t.matches(t.files, cn), "file"
        if rule is None:
            rule, kind = t.matches(t.loaders, cn), "loader"
        if rule is None:
            if call.args and t.wrap(cn):
                return self.engine.eval(call.args[0], fn)
            return None
        if kind == "call":
            lit = next((a.text for a in call.args if isinstance(a, Lit)), "")
            label = I.fill(rule.label, arg=lit, call=call.name)
        else:
            target = _path_expr(call)
            if target is None:
                return None
            value = self.engine.eval(target, fn)
            handle = [o for o in options(value) if isinstance(o, Obj) and o.kind == "file"]
            named = [n for h in handle if h.target is not None and (n := _literal(h.target))]
            spans = [h.span for h in handle if h.span is not None]
            text = named[0] if named else _path_text(self, target, spans[0] if spans else None)
            if kind == "file" and not I.named_like(rule, text):
                return None
            if kind == "loader" and not handle and not I.FILE_READ.search(self._text(target)):
                return None
            label = f"config file {text}"
        args = [prov_of(self.engine.eval(a, fn)) for a in call.args]
        args += [prov_of(self.engine.eval(v, fn)) for _, v in call.kwargs]
        if isinstance(call.callee, Attr) and kind != "call":
            args.append(prov_of(self.engine.eval(call.callee.base, fn)))
        origins = frozenset(o for p in args for o in p.origins)
        value = Opq(I.make(rule, label, path, span).join(Prov(origins)))
        if kind == "call" and rule.default and len(call.args) > rule.default:
            return alts([value, self.engine.eval(call.args[rule.default], fn)])
        return value

    def _text(self, expr: Expr) -> str:
        return self.ex.data[expr.span.start_byte : expr.span.end_byte].decode("utf-8", "replace")

    def joined(self, argv: AValue, inner: Prov, display: str, call: Call) -> AValue:
        """`shlex.join(argv)`: one command line, each word quoted (see `K.JOINERS`).

        An argv of known words that starts with a fixed program other than a shell becomes
        that line: literal words as text, the others as holes quoted by the joiner. An argv
        whose program is not fixed gives a command chosen by whoever chose the argv.
        """
        if not _fixed_program(argv):
            note = f"{display} of an argv whose program is not fixed: the words are a command"
            step = Step(self.ex.path, call.span, note)
            return Str((Hole(inner.with_step(step), None, call.span),))
        if not isinstance(argv, Lst) or argv.rest is not None:
            return Str((Hole(inner, display, call.span),))
        pieces: list[Text | Hole] = []
        for i, item in enumerate(argv.items):
            if i:
                pieces.append(Text(" ", self.ex.path, call.span))
            text = item.literal() if isinstance(item, Str) else None
            if text is not None:
                pieces.append(Text(shlex.quote(text), self.ex.path, call.span))
            else:
                pieces.append(Hole(prov_of(item), display, call.span))
        return Str(tuple(pieces))

    def source(self, call: Call, cn: str, fn: Function) -> AValue | None:
        """A model-output source value if the call is an LLM call or an action parser."""
        last = cn.rsplit(".", 1)[-1]
        kind: str | None = None
        label = ""
        dialect = QUERY_DIALECT[self.ex.lang]
        if K.llm_call(cn, dialect) or K.llm_call(call.name, dialect):
            kind, label, contract = "llm-response", f"{call.name}(…)", Contract.RAW
        elif last in K.ACTION_PARSERS:
            kind, label, contract = "parsed-action", f"{call.name}(…)", Contract.RAW
        elif last in K.REGEX_CALLS and any(
            isinstance(a, Lit) and "```" in a.text for a in call.args
        ):
            kind, label, contract = (
                "parsed-action",
                "fenced code block extracted by regex",
                Contract.RAW,
            )
        elif self.ex.lang == "shell":
            found = K.shell_source(call.name, [a.text for a in call.args if isinstance(a, Lit)])
            if found is not None:
                contract = Contract.NATIVE if found == "tool-call" else Contract.RAW
                kind, label = found, f"$({call.name} …)"
        if kind is None:
            return None
        origin = Origin(kind, label, self.ex.path, call.span, contract)
        return Opq(Prov(frozenset({origin})))

    def method(self, call: Call, fn: Function, callee: Attr, name: str) -> AValue | None:
        """Methods whose result keeps a useful shape (split, join, open, builder calls...)."""
        if name in K.TOKENIZER_METHODS and _splits_words(call):
            return Tok(
                self.engine.eval(callee.base, fn),
                K.TOKENIZER_METHODS[name],
                self.ex.path,
                call.span,
            )
        if name == "join":
            if isinstance(callee.base, Lit) and call.args:
                return join_list(self.engine.eval(call.args[0], fn), callee.base.text)
            sep = call.args[0] if call.args else None
            if sep is None or isinstance(sep, Lit):
                base = self.engine.eval(callee.base, fn)
                if any(isinstance(o, (Lst, Tok)) for o in options(base)):
                    return join_list(base, sep.text if isinstance(sep, Lit) else ",")
        if name in PASS_THROUGH:
            return self.engine.eval(callee.base, fn)
        base = self.engine.eval(callee.base, fn)
        if name == "format" and self.ex.lang == "python":
            strs = [o for o in options(base) if isinstance(o, Str)]
            if strs and len(strs) == len(list(options(base))):
                positional = [
                    self.engine.eval(a, fn) for a in call.args if not isinstance(a, Spread)
                ]
                named = {k: self.engine.eval(v, fn) for k, v in call.kwargs if k}
                return alts(format_template(o, positional, named) for o in strs)
        for o in options(base):
            if isinstance(o, Obj):
                result = handle_method(self.engine, o, name, call, fn)
                if result is not None:
                    return result
        if (
            name == "open"
            and call.args
            and any(isinstance(a, Lit) and a.text[:1] in "wax" for a in call.args)
        ):
            return Obj("file", f"{callee.name}", target=base, path=self.ex.path, span=call.span)
        return None

    def targets(self, call: Call, fn: Function) -> list[Function] | None:
        """The functions of this file the call may invoke; None if its callee is no name."""
        callee = call.callee
        if isinstance(callee, Ref):
            targets = [f for f in self.ex.functions_named(callee.name) if not f.is_method]
        elif isinstance(callee, Attr) and _is_super(callee.base):
            # `super().m(...)`: a method of a base class, never the override that calls it
            targets = self.inherited(callee.name, fn)
        elif (
            isinstance(callee, Attr)
            and isinstance(callee.base, Ref)
            and callee.base.name in ("self", "this")
        ):
            targets = [f for f in self.ex.functions_named(callee.name) if f.cls == fn.cls]
            if not targets:
                targets = self.inherited(callee.name, fn)
        elif isinstance(callee, Attr) and len(callee.name) > 3:
            # NOTE(h2): `shell.exec_args(...)` on some object: if exactly one method of this
            # file has that name, it is taken to be the one called; of several, the one of
            # the class the caller's code gives the receiver (`LocalShell().exec_args(...)`).
            methods = [f for f in self.ex.functions_named(callee.name) if f.is_method]
            if len(methods) > 1:
                known = receiver_classes(self.ex, call, fn)
                methods = [f for f in methods if f.cls in known]
            targets = methods if len(methods) == 1 else []
        else:
            return None
        return targets

    def inherited(self, name: str, fn: Function) -> list[Function]:
        """Method `name` as `fn`'s class inherits it from a base class of this file (the
        nearest base that defines it); empty if none does or the bases are not known."""
        from boundary_audit.static.crossfile import FAMILY

        corpus = self.engine.corpus
        family = FAMILY.get(self.ex.lang)
        if corpus is None or fn.cls is None or family not in ("py", "js"):
            return []
        methods = [f for f in self.ex.functions_named(name) if f.is_method]
        for base in corpus.ancestors(family, fn.cls):
            found = [f for f in methods if f.cls == base]
            if found:
                return found
        return []

    def returned_field(self, call: Call, fn: Function, key: str) -> AValue | None:
        """`key` of the object literal a same-file helper returns (`const {shell, args} =
        getShellCommand(cmd)`), when every return of every target is one that has it."""
        targets = self.targets(call, fn)
        if not targets or too_deep(self.engine):
            return None
        items: list[tuple[Expr, Function]] = []
        for target in targets:
            returns = self.ex.filled(target).returns
            if not returns:
                return None
            for r in returns:
                item = r.get(key) if isinstance(r, Map) else None
                if item is None:
                    return None
                items.append((item, target))
        self.engine.depth += 1
        try:
            values = [self.engine.eval(item, target) for item, target in items]
        finally:
            self.engine.depth -= 1
        step = Step(self.ex.path, call.span, f"`{key}` returned by {callee_name(call)}()")
        return with_step(alts(values), step)

    def local_call(self, call: Call, fn: Function) -> AValue | None:
        """Return values of a function of this file that the call invokes."""
        callee = call.callee
        targets = self.targets(call, fn)
        if targets is None:
            return None
        if not targets and isinstance(callee, Ref) and self.engine.corpus is not None:
            cn = self.ex.canonical(call.name)
            if cn != call.name:
                values = self.engine.corpus.return_values(self.engine, call, cn, fn)
                return alts(values) if values else None
        if (
            not targets
            and isinstance(callee, Attr)
            and (_is_super(callee.base) or _is_self(callee.base))
            and self.engine.corpus is not None
        ):
            values = self.engine.corpus.inherited_returns(self.engine, call, fn, callee.name)
            return alts(values) if values else None
        if not targets or too_deep(self.engine):
            return None
        if (
            isinstance(callee, Attr)
            and (_is_super(callee.base) or _is_self(callee.base))
            and any(t.cls != fn.cls for t in targets)
        ):
            return self.inherited_call(call, fn, targets)
        self.engine.depth += 1
        try:
            values = []
            for target in targets:
                returns = self.ex.filled(target).returns
                joined = [self.engine.eval(r, target) for r in returns]
                if any(prov_of(v).model for v in joined):
                    joined = self.at_call_site(call, fn, target, returns) or joined
                values.extend(joined)
        finally:
            self.engine.depth -= 1
        if not values:
            return Opq(EMPTY)
        step = Step(self.ex.path, call.span, f"value returned by {callee_name(call)}()")
        return with_step(alts(values), step)

    def inherited_call(self, call: Call, fn: Function, targets: list[Function]) -> AValue:
        """Return values of a base class's method of this file that `call` reaches through
        `super()` or `self` (the override forwards its own arguments: `super().prepare(
        *command, shell=shell)`), with its parameters bound to this call's arguments rather
        than joined over every caller of the base method."""
        from boundary_audit.static.dataflow import Engine

        engine = self.engine
        child = Engine(self.ex, engine.corpus)
        child.hops, child.depth, child.at_site = engine.hops, engine.depth + 1, engine.at_site
        child.budget = engine.budget
        child.bindings = dict(engine.bindings)
        for t in targets:
            child.bindings.update(bind_arguments(engine, call, fn, t, self.ex.data))
        values = [child.eval(r, t) for t in targets for r in self.ex.filled(t).returns]
        if not values:
            return Opq(EMPTY)
        step = Step(self.ex.path, call.span, f"value returned by {callee_name(call)}()")
        return with_step(alts(values), step)

    def at_call_site(
        self, call: Call, fn: Function, target: Function, returns: list[Expr]
    ) -> list[AValue] | None:
        """`target`'s return values with its parameters bound to this call's arguments.

        Asked when the join over every caller of the file is model-controlled: if this call
        passes nothing of the model, the helper's value here is re-evaluated with its
        parameters bound to the arguments (`self.clean_cmd(GIT_RESET_SCRIPT)` stays a
        constant although another call passes the model's action). Parameters the call does
        not give, destructured ones and those after a spread stay the join; a variadic one
        (`*command`) is bound to the rest of the arguments (`bind_arguments`).
        The re-evaluation has a small budget of its own (`SITE_STEPS`) and binds no further
        helper; None (keep the join) when there is nothing to bind, an argument is the
        model's, this engine is itself such a re-evaluation, or the budget ran out.
        """
        from boundary_audit.static.dataflow import MAX_STEPS, Budget, Engine

        engine = self.engine
        if engine.at_site:
            return None
        binds = bind_arguments(engine, call, fn, target, self.ex.data)
        if not binds or any(prov_of(v).model for v in binds.values()):
            return None
        child = Engine(self.ex, engine.corpus)
        child.hops, child.depth, child.at_site = engine.hops, engine.depth, True
        child.bindings = {**engine.bindings, **binds}
        child.budget = Budget()
        child.budget.steps = MAX_STEPS - SITE_STEPS
        values = [child.eval(r, target) for r in returns]
        return None if child.budget.steps > MAX_STEPS else values

    def may_reach(self, call: Call, caller: Function, cls: str) -> bool:
        """Whether `call` (a method call of this file) may invoke a method of class `cls`:
        not where its receiver is a module this file imports (`subprocess.run`), nor where
        the caller's code types the receiver as a class unrelated to `cls` (`receivers`)."""
        callee = call.callee
        assert isinstance(callee, Attr)
        base = callee.base
        if (
            isinstance(base, Ref)
            and base.name in self.ex.imports
            and not caller.param(base.name)
            and not self.ex.filled(caller).defs.get(base.name)
        ):
            return False
        corpus = self.engine.corpus
        if corpus is not None:
            return corpus.may_reach(self.ex, call, caller, cls, required=False)
        known = receiver_classes(self.ex, call, caller)
        return not known or cls in known

    def arguments_for(self, fn: Function, p: Param) -> list[AValue]:
        """Values passed to parameter `p` of `fn` at each call site in this file.

        The calls made by a tool entry are evaluated first (the values keep the file's
        order): what a tool hands on is the decisive evidence, and a sink whose step budget
        runs out on another caller's chain should still have seen it."""
        sites: list[tuple[Call, Function]] = []
        for node in self.ex.call_nodes(fn.name):
            call = self.ex.expr(node)
            if not isinstance(call, Call) or node.start_byte == fn.node.start_byte:
                continue
            via_attr = isinstance(call.callee, Attr)
            if fn.is_method and not via_attr:
                continue
            if (
                not fn.is_method
                and via_attr
                and not self.ex.unqualified_call_ok(call)
                and not _through_class(call, fn)
            ):
                continue
            caller = self.ex.function_at(node)
            if fn.is_method and fn.cls and not self.may_reach(call, caller, fn.cls):
                continue
            sites.append((call, caller))
        order = sorted(range(len(sites)), key=lambda i: self.ex.tools.entry(sites[i][1]) is None)
        values: dict[int, AValue | None] = {i: self._argument(fn, p, *sites[i]) for i in order}
        return [v for i in range(len(sites)) if (v := values[i]) is not None]

    def _argument(self, fn: Function, p: Param, call: Call, caller: Function) -> AValue | None:
        """The value one call site passes to parameter `p` of `fn` (None: it passes none)."""
        via_attr = isinstance(call.callee, Attr)
        arg = call.kwarg(p.name)
        step = Step(self.ex.path, call.span, f"passed as `{p.name}` to {fn.name}()")
        if arg is None:
            index = p.index - (1 if fn.self_param and via_attr else 0)
            text = self.ex.data[p.span.start_byte : p.span.end_byte]
            rest = variadic_rest(self.engine, call, index, caller, is_variadic(text))
            if rest is not None:
                return with_step(rest, step)
            if any(isinstance(a, Spread) for a in call.args[: index + 1]):
                return Opq(UNKNOWN)
            arg = call.args[index] if 0 <= index < len(call.args) else p.default
        if arg is None:
            return None
        if p.field is not None and isinstance(arg, Map):
            arg = arg.get(p.field) or arg
        return with_step(self.engine.eval(arg, caller), step)


def _is_super(base: Expr) -> bool:
    """`super()` (Python) or `super` (JavaScript) as a method call's receiver."""
    if isinstance(base, Call):
        return isinstance(base.callee, Ref) and base.callee.name == "super" and not base.args
    return isinstance(base, Ref) and base.name == "super"


def _is_self(base: Expr) -> bool:
    return isinstance(base, Ref) and base.name in ("self", "this")


def _path_expr(call: Call) -> Expr | None:
    """The path a file read or loader is given: its first argument, or the receiver of a
    method read (`Path("settings.json").read_text()`)."""
    if call.args:
        return call.args[0]
    if isinstance(call.callee, Attr):
        return call.callee.base
    return None


_QUOTED = re.compile(r"""(["'`])([^"'`\n]{1,80})\1""")


def _literal(value: AValue) -> str | None:
    return value.literal() if isinstance(value, Str) else None


def _path_text(calls: CallEvaluator, target: Expr, opened: Span | None = None) -> str:
    """A file path as the code writes it: the literal, the last string literal in the
    expression (or in the `open(...)` call of a handle) that builds it (`path.join(home,
    "settings.json")`), or the expression's text."""
    if isinstance(target, Lit):
        return target.text
    source = calls._text(target)
    if opened is not None:
        source = calls.ex.data[opened.start_byte : opened.end_byte].decode("utf-8", "replace")
    quoted: list[tuple[str, str]] = _QUOTED.findall(source)
    if quoted:
        return quoted[-1][1]
    text = " ".join(source.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _through_class(call: Call, fn: Function) -> bool:
    """`LocalProcess.start(cmd)`: a static method called through its own class's name."""
    callee = call.callee
    return (
        fn.cls is not None
        and isinstance(callee, Attr)
        and isinstance(callee.base, Ref)
        and callee.base.name == fn.cls
    )


def _fixed_program(argv: AValue) -> bool:
    """Whether every shape of `argv` starts with a literal program that is not a shell."""
    shapes = options(argv)
    for shape in shapes:
        if not isinstance(shape, Lst) or not shape.items:
            return False
        head = shape.items[0]
        text = head.literal() if isinstance(head, Str) else None
        if text is None or not text or P.is_shell(text):
            return False
    return bool(shapes)


def variadic_rest(
    engine: Engine, call: Call, index: int, caller: Function, variadic: bool
) -> AValue | None:
    """What a variadic parameter (`*command`) at argument `index` receives from a call that
    spreads a list into it (`self._exec(*argv)`): the call's arguments from `index` on, as a
    list. None where the spread comes before `index` (the parameter's position is unknown)
    or the parameter takes one argument."""
    if not variadic or index < 0 or any(isinstance(a, Spread) for a in call.args[:index]):
        return None
    return engine.sequence_options(call.args[index:], caller, call.span)


def bind_arguments(
    engine: Engine, call: Call, caller: Function, target: Function, data: bytes
) -> dict[tuple[int, str], AValue]:
    """The values `call` (evaluated in `caller`) gives `target`'s parameters, keyed as
    `Engine.bindings` keys them: keyword arguments by name, positional ones up to the first
    spread, and a variadic parameter (`*command`) the rest of the arguments as a list
    (`variadic_rest`). `data` is the text of `target`'s file. Parameters the call leaves
    to their default, or whose argument cannot be placed, are not bound."""
    shift = 1 if target.self_param and isinstance(call.callee, Attr) else 0
    out: dict[tuple[int, str], AValue] = {}
    positional = True
    for p in target.params:
        if (target.self_param and p.index == 0) or p.field is not None:
            continue
        arg = call.kwarg(p.name)
        if arg is not None:
            out[(target.key, p.name)] = engine.eval(arg, caller)
            continue
        text = data[p.span.start_byte : p.span.end_byte]
        index = p.index - shift
        if is_variadic(text):
            rest = variadic_rest(engine, call, index, caller, True)
            if rest is not None:
                out[(target.key, p.name)] = rest
        if text.startswith(b"*") or is_variadic(text):
            positional = False
        if not positional or any(isinstance(a, Spread) for a in call.args[: index + 1]):
            positional = False
            continue
        if 0 <= index < len(call.args):
            out[(target.key, p.name)] = engine.eval(call.args[index], caller)
    return out


_GO_VARIADIC = re.compile(rb"^[A-Za-z_]\w*\s+\.\.\.")


def is_variadic(text: bytes) -> bool:
    """Whether a parameter's source text declares it variadic in its positional arguments:
    `*args`, `...rest`, Go's `args ...string` (not `**kwargs`, nor an annotation that
    mentions `...`: `fn: Callable[..., R]`)."""
    if text.startswith(b"**"):
        return False
    return text.startswith((b"*", b"...")) or bool(_GO_VARIADIC.match(text))


def _by_suffix(name: str, cn: str) -> Ctor | None:
    """A builder or method-named process API (`ChildProcess.make`, `loop.subprocess_exec`)."""
    for suffix, ctor in BUILDERS.items():
        if name == suffix or name.endswith("." + suffix) or cn.endswith("." + suffix):
            return ctor
    last = name.rsplit(".", 1)[-1]
    return METHOD_HANDLERS.get(last) if "." in name else None


def callee_name(call: Call) -> str:
    """The final component of the callee's name."""
    return call.name.rsplit(".", 1)[-1]


def _dotted(expr: Ref | Attr) -> str:
    if isinstance(expr, Ref):
        return expr.name
    base = expr.base
    head = _dotted(base) if isinstance(base, (Ref, Attr)) else "?"
    return f"{head}.{expr.name}"


_CTOR_LANGS = frozenset({"python", "javascript", "typescript", "tsx"})
_WRAPPING_CTOR_LANGS = frozenset({"rust"})
"""Languages whose CamelCase call of one argument is a tuple struct or variant wrapping it."""


def _constructor(name: str) -> bool:
    """`Foo()` / `mod.Foo()` with no arguments: a fresh object that carries no text."""
    last = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    return bool(last) and last[0].isupper() and not last.isupper() and name.count("?") == 0


def _splits_words(call: Call) -> bool:
    if not call.args:
        return True
    first = call.args[0]
    return isinstance(first, Lit) and first.text in (" ", "\\s+", "/\\s+/", "\t")


def with_step(value: AValue, step: Step) -> AValue:
    """`value` with `step` recorded on every unknown piece."""
    if isinstance(value, Opq):
        return Opq(value.prov.with_step(step)) if not value.prov.constant else value
    if isinstance(value, Str):
        return Str(
            tuple(
                Hole(p.prov.with_step(step), p.sanitizer, p.span)
                if isinstance(p, Hole) and not p.prov.constant
                else p
                for p in value.pieces
            )
        )
    if isinstance(value, Ser):
        return Ser(value.serializer, value.prov.with_step(step), value.path, value.span)
    if isinstance(value, Lst):
        return Lst(
            tuple(with_step(v, step) for v in value.items), value.rest, value.path, value.span
        )
    if isinstance(value, Tok):
        return Tok(with_step(value.source, step), value.tokenizer, value.path, value.span)
    return alts(with_step(o, step) for o in options(value)) if not isinstance(value, Obj) else value
