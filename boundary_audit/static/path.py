"""The boundary path of a model-controlled finding, derived from what the analysis holds.

`derive` turns a finding's verdict into a `finding.DerivedPath`: the route R takes from the
model to the process, in the terms an adapter of system_adapters/ uses (contract, class,
shell parses, parse layers, a transport with parameters, pre-processors), so that a scan's
path and an adapter's path compare field by field and the same machinery replays both.

The facts come from the analysis, not from the sink's text: the verdict (class, the literal
that launches a second parser, the sanitizer, the origins of R), and the abstract values the
dataflow engine computes for the sink (re-read here through the scan's cross-file corpus:
the spawn's argv as literal words and holes, the handle a session writes to, with its program,
arguments, pty and environment, the tokenizer a string went through, the module-level table
an interpreter is looked up in, the pane a `tmux new-session` made). Per field:

- **program and flags**: the argv's first word after wrappers (`timeout 60`, `env`...) and
  the flags before R (`bash -lc`); `shell=True` and shell APIs (`os.system`, `exec`) are
  `sh -c`. A program the code leaves open (`$SHELL`, a computed name, the fence language the
  model chose) is a *range*: every plausible shell of `SHELL_RANGE` is its own route.
- **pipe or pty, interactive, environment, end markers**: from the session's handle
  (`pexpect.spawn` is a pty, its shell interactive; `Popen(..., env={})` replaces the
  environment) or from `SESSION_APIS`, the library calls whose behaviour is known.
- **the tokenizer**, **the string template around R** (prefix and suffix, replayed by the
  `template.interpolate` pre-processor and the shell that parses the whole line), **the
  remote hop** (`docker exec c`, an SDK's exec: argv passed unchanged, replayed locally;
  `ssh host R`: one remote parse through a real sshd), **the interpreter of a script file**.

Where the analysis holds no fact for the transport, the class's transport hint (a regular
expression over the sink's text, `ClassRecord.transport`) picks it, and the path says so
(a `hint` fact and a note). `fix_route` applies the class's fix to a route (quote R, a
script file, `send-keys -l`, stdin at /dev/null, bash for sh...), so the fix is measured too.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import tree_sitter as ts

from boundary_audit.finding import DerivedPath, Location, Mechanism, PathFact, Route
from boundary_audit.static import crossfile
from boundary_audit.static import programs as P
from boundary_audit.static.checks import record_of
from boundary_audit.static.checks.base import SinkSite, Site
from boundary_audit.static.classify import Verdict
from boundary_audit.static.dataflow import Engine
from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.ir import Call, Lit, Map, Span
from boundary_audit.static.values import (
    AValue,
    Hole,
    Lst,
    Obj,
    Opq,
    Str,
    Text,
    Tok,
    options,
    prov_of,
)
from boundary_audit.taxonomy import BoundaryClass as BC
from boundary_audit.taxonomy import Contract

SHELL_RANGE = ("sh", "bash")
"""The plausible shells where the code leaves the program open: each one is measured."""
MEASURABLE_SHELLS = frozenset({"sh", "bash", "dash"})
"""Shells the task suite can be replayed through (the others are named, not measured)."""

TOKENIZER_TRANSPORT = {
    "shlex.split": "argv-shlex",
    "shell-quote parse": "argv-shell-quote",
    "string-argv": "argv-shlex",
    "shell_words::split": "argv-shlex",
    "shlex::Shlex": "argv-shlex",
    "shlex::split": "argv-shlex",
    "strings.Fields": "argv-split",
    "shlex.Split": "argv-shlex",
    "shellwords.Parse": "argv-shlex",
    "str.split": "argv-split",
    "split_whitespace": "argv-split",
    "shell word splitting": "argv-split",
}
"""A tokenizer the analysis names (`knowledge.TOKENIZERS`) -> the argv transport that splits
the same way."""

TOKENIZER_CALLS = ("split", "parse", "Fields", "Split", "Parse", "split_whitespace")
"""Final callee names of tokenizer calls, searched when the tokenized value lost its shape."""


@dataclass(frozen=True)
class SessionApi:
    """A library call that sends R into a session whose machinery the code does not show."""

    method: str
    """The sink call's final method name."""
    argument: str
    """The constructor the argument is built with ("" for any)."""
    library: str
    transport: Mechanism
    preprocess: tuple[Mechanism, ...]
    facts: tuple[tuple[str, str], ...]
    """(field, value) of what the library does, each reported as an `api` fact."""


SESSION_APIS: tuple[SessionApi, ...] = (
    SessionApi(
        method="run_in_session",
        argument="BashAction",
        library="swe-rex BashSession (swerex/runtime/local.py)",
        transport=Mechanism("session"),
        preprocess=(Mechanism("swe-rex.syntax-check"), Mechanism("swe-rex.bashlex-split")),
        facts=(
            ("program", "/usr/bin/env bash"),
            ("tty", "pty (pexpect)"),
            ("interactive", "yes"),
            ("marker", "PS1 prompt marker, then `echo $?` for the status"),
            ("preprocess", "bash -n through /bin/sh; bashlex split joined with ' ; '"),
        ),
    ),
)
"""Session APIs whose behaviour is known: the route they imply (data, one entry per API)."""

PTY_SPAWNERS = {"pexpect.spawn": True, "pexpect.spawnu": True, "pexpect.pty_spawn.spawn": True}
"""Handle constructors that start the program on a pty -> their `echo` default."""


@dataclass
class _Draft:
    """A path being derived."""

    routes: list[Route] = field(default_factory=list)
    facts: list[PathFact] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unmeasurable: str = ""

    def fact(self, name: str, value: str, source: str = "code", where: str = "") -> None:
        self.facts.append(PathFact(name, value, source, where))


@dataclass(frozen=True)
class _Sink:
    """The sink re-read through the engine: its site, values and the file's other sites."""

    site: SinkSite
    ex: Extractor
    engine: Engine
    sites: tuple[Site, ...]

    def where(self, span: Span | None = None, path: str = "") -> str:
        if span is None:
            return ""
        return f"{path or self.ex.path}:{span.start_line + 1}"

    def at(self, found: tuple[str, Span] | None) -> str:
        return self.where(found[1], found[0]) if found is not None else ""

    def node_where(self, node: ts.Node) -> str:
        return f"{self.ex.path}:{node.start_point[0] + 1}"

    def value(self) -> AValue | None:
        return self.engine.value(self.site.value) if self.site.value is not None else None

    def receiver(self) -> AValue | None:
        if self.site.receiver is None:
            return None
        return self.engine.value(self.site.receiver, "receiver")

    def spawn(self) -> Obj | None:
        """The process or command handle a `process` sink spawns."""
        for o in options(self.engine.value(self.site.span)):
            if isinstance(o, Obj) and o.kind in ("process", "command"):
                return o
        return None

    def call_of(self, obj: Obj) -> Call | None:
        """The IR call that made handle `obj`, when it is in this file."""
        if obj.span is None or (obj.path and obj.path != self.ex.path):
            return None
        node = self.ex.root.descendant_for_byte_range(obj.span.start_byte, obj.span.end_byte)
        while node is not None and node.end_byte <= obj.span.end_byte:
            expr = self.ex.expr(node)
            if isinstance(expr, Call):
                return expr
            node = node.parent
        return None

    def text(self) -> str:
        span = self.site.span
        return self.ex.data[span.start_byte : span.end_byte].decode("utf-8", "replace")


_CACHE: OrderedDict[tuple[int, str], tuple[Extractor, Engine, tuple[Site, ...]]] = OrderedDict()
"""(corpus, path) -> the file's extractor, an engine of the corpus's current generation
(`Corpus.begin_file`), and its sites."""


def keep_sites(corpus: crossfile.Corpus, path: str, ex: Extractor, sites: Sequence[Site]) -> None:
    """What the main pass found in corpus file `path` (its extractor and `collect_sites`),
    for `_sink` to re-read the file's sinks without a second query pass over it."""
    _remember(corpus, path, ex, tuple(sites))


def _remember(
    corpus: crossfile.Corpus, path: str, ex: Extractor, sites: tuple[Site, ...]
) -> tuple[Extractor, Engine, tuple[Site, ...]]:
    """Cache `path`'s extractor and sites with a new engine (the file itself: no hop, its
    own budget), the most recent of at most 16 files of one corpus."""
    key = (id(corpus), path)
    if any(k[0] != key[0] for k in _CACHE):
        _CACHE.clear()  # NOTE: another scan's corpus: its files (and engines) are not kept alive
    hit = _CACHE[key] = (ex, Engine(ex, corpus), sites)
    _CACHE.move_to_end(key)
    if len(_CACHE) > 16:
        _CACHE.popitem(last=False)
    return hit


def _sink(primary: Location) -> _Sink | None:
    """The sink at `primary`, re-read through the installed corpus (None without one)."""
    corpus = crossfile.active()
    if corpus is None or primary.path not in corpus.files:
        return None
    hit = _CACHE.get((id(corpus), primary.path))
    if hit is None:
        ex = corpus.extractor(primary.path)
        if ex is None:
            return None
        from boundary_audit.static.analyze import collect_sites  # noqa: PLC0415 - a cycle

        hit = _remember(corpus, primary.path, ex, tuple(collect_sites(ex.lang, ex.root, ex.data)))
    elif hit[1].generation != corpus.generation:
        hit = _remember(corpus, primary.path, hit[0], hit[2])
    ex, engine, sites = hit
    for s in sites:
        if (
            isinstance(s, SinkSite)
            and s.span.start_byte == primary.start_byte
            and s.span.end_byte == primary.end_byte
        ):
            return _Sink(s, ex, engine, sites)
    return None


# -- values -----------------------------------------------------------------------------------


def _literal(value: AValue) -> str | None:
    return value.literal() if isinstance(value, Str) else None


def _choices(value: AValue) -> tuple[list[str], bool]:
    """The literal strings `value` may be, and whether it may also be something unknown."""
    found: list[str] = []
    open_ = False
    for o in options(value):
        text = _literal(o)
        if text is None:
            open_ = True
        elif text not in found:
            found.append(text)
    return found, open_


def _model(value: AValue) -> bool:
    return bool(prov_of(value).origins)


def _at(value: AValue) -> tuple[str, Span] | None:
    """(path, span) of where `value` is written: its first literal piece, or the value."""
    for o in options(value):
        if isinstance(o, Str):
            for p in o.pieces:
                if isinstance(p, Text) and p.span is not None:
                    return p.path, p.span
        span = getattr(o, "span", None)
        if span is not None:
            return str(getattr(o, "path", "")), span
    return None


def _table_values(sink: _Sink, value: AValue) -> list[str]:
    """Literal values of a module-level mapping an opaque value was looked up in
    (`INTERPRETER[lang]`), read from its definition."""
    out: list[str] = []
    names = {v[2] for o in options(value) if isinstance(o, Opq) for v in o.prov.vars if v[1] == -1}
    module = sink.ex.filled(sink.ex.module())
    for name in sorted(names):
        for d in module.defs.get(name, ()):
            if isinstance(d.value, Map):
                for _, item in d.value.items:
                    if isinstance(item, Lit) and item.is_str and item.text not in out:
                        out.append(item.text)
    return out


# -- programs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Program:
    """The program an argv runs and what surrounds R in it."""

    names: tuple[str, ...]
    """Literal program names (normalised), in order; more than one when the code chooses."""
    open: bool
    """True when the code leaves the program open (a computed or model-chosen value)."""
    model_chosen: bool
    """True when the model's own output picks it (a fence language, a field of the reply)."""
    index: int
    """Index of the program in the argv."""
    prefix: tuple[str, ...]
    """Literal wrapper words before the program (`timeout 60`); "?" for an unknown one."""
    where: str


def _program(sink: _Sink, items: Sequence[AValue], value_at: str) -> _Program:
    words = [_literal(i) for i in items]
    i = P.skip_wrappers(words)
    if (
        i >= len(items)
        and words
        and words[0] is not None
        and P.program_name(words[0]) in P.WRAPPERS
    ):
        i = _wrapped_index(words)
    prefix = tuple(w if w is not None else "?" for w in words[:i])
    if i >= len(items):
        return _Program((), True, False, i, prefix, value_at)
    head = items[i]
    names, open_ = _choices(head)
    if not names and not open_:
        open_ = True
    if open_:
        table = _table_values(sink, head)
        if table and not names:
            names, open_ = table, False
    norm = tuple(dict.fromkeys(P.program_name(n) for n in names))
    return _Program(norm, open_, _model(head), i, prefix, sink.at(_at(head)) or value_at)


def _wrapped_index(words: list[str | None]) -> int:
    """Index after a wrapper whose argument is not literal (`timeout str(self._timeout) sh f`)."""
    i = 0
    while i < len(words) and words[i] is not None and P.program_name(words[i] or "") in P.WRAPPERS:
        i += 1 + P.WRAPPERS[P.program_name(words[i] or "")]
    return i


def _shells(prog: _Program, d: _Draft, what: str) -> list[tuple[str, str]]:
    """(shell, assumes) per plausible shell of `prog`; facts recorded on `d`."""
    shells = [n for n in prog.names if n in P.SHELLS]
    others = [n for n in prog.names if n not in P.SHELLS]
    if prog.open:
        why = "chosen by the model's reply" if prog.model_chosen else "left open by the code"
        value = ", ".join([*shells, f"open ({why})"]) if shells else f"open ({why})"
        d.fact(what, value, "range", prog.where)
        if others:
            d.notes.append(
                f"{what} may also be {', '.join(others)}: not a shell, not replayed by the "
                "shell tasks"
            )
        found = list(dict.fromkeys([*shells, *SHELL_RANGE]))
        return [(s, f"{what} {s}") for s in found if s in MEASURABLE_SHELLS]
    chosen = " (chosen by the model's reply)" if prog.model_chosen and len(prog.names) > 1 else ""
    d.fact(what, " | ".join(prog.names) + chosen if prog.names else "?", "code", prog.where)
    if others:
        d.notes.append(
            f"{what} may also be {', '.join(others)}: not a shell, not replayed by the shell tasks"
        )
    multi = len(shells) > 1
    return [(s, f"{what} {s}" if multi else "") for s in shells if s in MEASURABLE_SHELLS]


def _flags(words: Sequence[str | None], start: int, stop: int) -> str:
    """The flag words between the program (at `start`) and R (at `stop`)."""
    out = [w for w in words[start + 1 : stop] if w is not None and w.startswith("-")]
    return " ".join(out) or "-c"


def _model_index(items: Sequence[AValue]) -> int:
    return next((j for j, item in enumerate(items) if _model(item)), len(items))


# -- templates --------------------------------------------------------------------------------


def _template(value: AValue) -> tuple[str, str] | None:
    """(prefix, suffix) of literal text around the model's hole, if the rest is literal."""
    for o in options(value):
        if not isinstance(o, Str):
            continue
        holes = [j for j, p in enumerate(o.pieces) if isinstance(p, Hole) and p.prov.origins]
        others = [j for j, p in enumerate(o.pieces) if isinstance(p, Hole) and not p.prov.origins]
        if len(holes) != 1 or others:
            continue
        j = holes[0]
        before = "".join(p.text for p in o.pieces[:j] if isinstance(p, Text))
        after = "".join(p.text for p in o.pieces[j + 1 :] if isinstance(p, Text))
        return before, after
    return None


_HOP_PROGRAMS = {"docker": "exec", "podman": "exec"}
_HOP_OPTS = frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file"})


def _strip_hop(prefix: str) -> tuple[str, str]:
    """(hop, rest): an argv-transparent hop at the start of a command template set apart.

    `docker exec [opts] C rest` and `podman exec ...` hand `rest` to the container unchanged,
    as argv; `kubectl exec ... -- rest` too. Wrappers (`timeout 60`, `env`) stay in `rest`.
    Only the words before the first quote are read (the hole sits inside that quote).
    """
    cut = min((prefix.find(q) for q in "'\"" if q in prefix), default=len(prefix))
    words = prefix[:cut].split()
    if not words:
        return "", prefix
    prog = P.program_name(words[0])
    end = 0
    if prog in _HOP_PROGRAMS and words[1:2] == [_HOP_PROGRAMS[prog]]:
        j = 2
        while j < len(words) and words[j].startswith("-"):
            j += 2 if words[j] in _HOP_OPTS else 1
        end = j + 1
    elif prog == "kubectl" and "--" in words:
        end = words.index("--") + 1
    if end == 0 or end >= len(words):
        return "", prefix
    return " ".join(words[:end]), _after_words(prefix, end)


def _after_words(text: str, n: int) -> str:
    """`text` after its first `n` shell words (and the blanks that follow them)."""
    pos = 0
    for _ in range(n):
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        quote = ""
        while pos < len(text):
            ch = text[pos]
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch in " \t":
                break
            pos += 1
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return text[pos:]


_INNER_SHELL = re.compile(r"^(?P<lead>(?:\S+=\S*\s+)*)(?P<shell>(?:/\S*/)?(?:ba|da|z|k)?sh)\b")


# -- per class --------------------------------------------------------------------------------


def _shell_string(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    obj = sink.spawn() if sink.site.kind == "process" else None
    value: AValue | None = None
    if obj is not None and not obj.shell and obj.argv is not None:
        lists = [o for o in options(obj.argv) if isinstance(o, Lst)]
        if lists:
            lst = lists[0]
            prog = _program(sink, lst.items, sink.where(obj.span, obj.path))
            at = _model_index(lst.items)
            words = [_literal(i) for i in lst.items]
            flags = _flags(words, prog.index, at)
            d.fact("flags", flags, "code", prog.where)
            for shell, assumes in _shells(prog, d, "program"):
                d.routes.append(
                    Route(Mechanism("raw", {"shell": shell, "flags": flags}), (), assumes)
                )
            value = lst.items[at] if at < len(lst.items) else None
    elif obj is not None or sink.site.kind == "shell":
        d.fact("program", "sh (the system shell, /bin/sh)", "code", sink.node_where(sink.site.span))
        d.fact("flags", "-c", "code", sink.node_where(sink.site.span))
        d.routes.append(Route(Mechanism("raw", {"shell": "sh", "flags": "-c"})))
        value = obj.argv if obj is not None else sink.value()
    if value is not None:
        _add_template(value, d, sink)


def _add_template(value: AValue, d: _Draft, sink: _Sink) -> None:
    tpl = _template(value)
    if tpl is None or tpl == ("", ""):
        return
    prefix, suffix = tpl
    d.fact("template", f"{prefix}R{suffix}", "code", sink.at(_at(value)))
    step = Mechanism("template.interpolate", {"prefix": prefix, "suffix": suffix})
    d.routes = [replace(r, preprocess=(step, *r.preprocess)) for r in d.routes]


def _nested(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    obj = sink.spawn() if sink.site.kind == "process" else None
    outer: list[tuple[str, str]] = []
    value: AValue | None = None
    if obj is not None and not obj.shell and obj.argv is not None:
        lists = [o for o in options(obj.argv) if isinstance(o, Lst)]
        if lists:
            lst = lists[0]
            prog = _program(sink, lst.items, sink.where(obj.span, obj.path))
            outer = _shells(prog, d, "program")
            at = _model_index(lst.items)
            value = lst.items[at] if at < len(lst.items) else None
    elif obj is not None or sink.site.kind == "shell":
        d.fact("program", "sh (the system shell, /bin/sh)", "code", sink.node_where(sink.site.span))
        outer = [("sh", "")]
        value = obj.argv if obj is not None else sink.value()
    tpl = _template(value) if value is not None else None
    if not outer or tpl is None:
        return
    prefix, suffix = tpl
    where = sink.where(v.wrap.span if v.wrap is not None else None)
    d.fact("template", f"{prefix}R{suffix}", "code", where)
    hop, rest = _strip_hop(prefix)
    if hop:
        d.fact("hop", f"{hop} (argv passed on unchanged: replayed here)", "code", where)
    inner = _INNER_SHELL.match(rest)
    if inner is None:
        d.notes.append(f"the second parser of `{prefix}R{suffix}` is not a shell the suite runs")
        return
    d.fact("inner", inner.group("shell"), "code", where)
    quote = _quote_before(rest)
    d.fact("quote", f"{quote} quotes around R" if quote else "R unquoted", "code", where)
    step = Mechanism("template.interpolate", {"prefix": rest, "suffix": suffix})
    for shell, assumes in outer:
        d.routes.append(Route(Mechanism("raw", {"shell": shell, "flags": "-c"}), (step,), assumes))


def _quote_before(prefix: str) -> str:
    quote = ""
    for ch in prefix:
        if quote:
            if ch == quote[0]:
                quote = ""
        elif ch in "'\"":
            quote = ch
    return {"'": "single", '"': "double"}.get(quote, "")


def _stdin(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    handle = _handle(sink)
    if sink is None or handle is None or handle.argv is None:
        return
    lists = [o for o in options(handle.argv) if isinstance(o, Lst)]
    if not lists:
        return
    lst = lists[0]
    prog = _program(sink, lst.items, sink.where(handle.span, handle.path))
    words = [_literal(i) for i in lst.items]
    flags = " ".join(w for w in words[prog.index + 1 :] if w is not None)
    d.fact("stdin", "R is the shell's script on its stdin (read line by line)", "code", prog.where)
    if flags:
        d.fact("flags", flags, "code", prog.where)
    for shell, assumes in _shells(prog, d, "program"):
        d.routes.append(Route(Mechanism("stdin", {"shell": shell, "flags": flags}), (), assumes))


def _handle(sink: _Sink | None) -> Obj | None:
    if sink is None:
        return None
    recv = sink.receiver()
    if recv is None:
        return None
    return next(
        (o for o in options(recv) if isinstance(o, Obj) and o.kind in ("process", "stdin")), None
    )


def _session(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    api = _session_api(sink)
    if api is not None:
        where = sink.node_where(sink.site.span)
        for name, value in api.facts:
            d.fact(name, value, "api", where)
        d.notes.append(f"the session's machinery is {api.library}'s, not in the scanned code")
        d.routes.append(Route(api.transport, api.preprocess))
        return
    handle = _handle(sink)
    if handle is None or handle.argv is None:
        return
    lists = [o for o in options(handle.argv) if isinstance(o, Lst)]
    if not lists:
        return
    lst = lists[0]
    prog = _program(sink, lst.items, sink.where(handle.span, handle.path))
    words = [_literal(i) for i in lst.items]
    if any(w is None for w in words):
        return
    argv = tuple(w for w in words if w is not None)
    where = sink.where(handle.span)
    call = sink.call_of(handle)
    d.fact("program", " ".join(argv), "code", where)
    if handle.pty:
        echo = PTY_SPAWNERS.get(handle.api, True)
        given = _bool_kwarg(call, "echo")
        echo = echo if given is None else given
        d.fact("tty", f"pty ({handle.api})", "code", where)
        d.fact("interactive", "yes (a shell on a tty, no -c)", "code", where)
        d.fact("echo", "on" if echo else "off", "code" if given is not None else "api", where)
        params: dict[str, Any] = {"shell": list(argv)}
        if echo:
            params["echo"] = True
        d.routes.append(Route(Mechanism("session", params)))
        return
    d.fact("tty", "pipes (no terminal)", "code", where)
    d.fact("interactive", "no (the script is read from a pipe)", "code", where)
    env = _env_kwarg(sink, call)
    params = {"shell": list(argv)}
    if env is None:
        d.fact("environment", "inherited", "code" if call is not None else "default", where)
    else:
        d.fact("environment", "replaced: " + (", ".join(sorted(env)) or "empty"), "code", where)
        params["env"] = env
    d.routes.append(Route(Mechanism("session-pipe", params)))
    if prog.open:
        d.notes.append("the session's program is computed; replayed with the literal words")


def _session_api(sink: _Sink) -> SessionApi | None:
    call = sink.ex.expr(sink.site.span)
    if not isinstance(call, Call):
        return None
    method = call.name.rsplit(".", 1)[-1]
    arg = sink.ex.expr(sink.site.value) if sink.site.value is not None else None
    built = arg.name.rsplit(".", 1)[-1] if isinstance(arg, Call) else ""
    for api in SESSION_APIS:
        if api.method == method and (not api.argument or api.argument == built):
            return api
    return None


def _bool_kwarg(call: Call | None, key: str) -> bool | None:
    if call is None:
        return None
    value = call.kwarg(key)
    if isinstance(value, Lit) and not value.is_str and value.text in ("True", "False", "true"):
        return value.text in ("True", "true")
    return None


def _env_kwarg(sink: _Sink, call: Call | None) -> dict[str, str] | None:
    """The environment a spawn call passes (`env={...}` with literal items), or None."""
    if call is None:
        return None
    value = call.kwarg("env")
    if not isinstance(value, Map):
        return None
    out: dict[str, str] = {}
    for key, item in value.items:
        if key is None or not isinstance(item, Lit):
            return None
        out[key] = item.text
    return out


def _keystrokes(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    obj = sink.spawn() if sink.site.kind == "process" else None
    if obj is None or obj.argv is None:
        call = sink.ex.expr(sink.site.span)
        literal = _bool_kwarg(call if isinstance(call, Call) else None, "literal")
        if literal is None:
            return
        where = sink.node_where(sink.site.span)
        d.fact("keys", "literal text (send-keys -l)" if literal else "key names", "code", where)
        d.routes.append(Route(Mechanism("tmux-literal" if literal else "tmux-keys")))
        return
    lists = [o for o in options(obj.argv) if isinstance(o, Lst)]
    if not lists:
        return
    words = [_literal(i) for i in lists[0].items]
    where = sink.where(obj.span)
    flags = [w for w in words[2:] if w is not None and w.startswith("-") and w != "-t"]
    literal = any("l" in f[1:] for f in flags)
    d.fact("keys", "literal text (send-keys -l)" if literal else "key names", "code", where)
    params: dict[str, Any] = {}
    pane = _tmux_pane(sink)
    if pane is not None:
        shell, width, height, at = pane
        if width:
            params["width"] = width
        if height:
            params["height"] = height
        params["shell"] = list(shell)
        d.fact(
            "program",
            " ".join(shell) if shell else "tmux's default shell (a login shell)",
            "code",
            at,
        )
        d.fact("tty", f"tmux pane {width or '?'}x{height or '?'}", "code", at)
    d.fact("interactive", "yes (the pane's shell)", "code", where)
    d.notes.append("completion: replayed with `tmux wait`, whatever the harness waits for")
    d.routes.append(Route(Mechanism("tmux-literal" if literal else "tmux-keys", params)))


def _tmux_pane(sink: _Sink) -> tuple[tuple[str, ...], int, int, str] | None:
    """(pane command, width, height, where) of a `tmux new-session` spawned in the file."""
    for s in sink.sites:
        if not isinstance(s, SinkSite) or s.kind != "process":
            continue
        for o in options(sink.engine.value(s.span)):
            if not isinstance(o, Obj) or o.argv is None:
                continue
            for lst in (x for x in options(o.argv) if isinstance(x, Lst)):
                words = [_literal(i) for i in lst.items]
                if words[:2] != ["tmux", "new-session"] or any(w is None for w in words):
                    continue
                width = height = 0
                rest: list[str] = []
                j = 2
                while j < len(words):
                    w = words[j] or ""
                    if w in ("-x", "-y", "-s", "-n", "-c", "-t") and j + 1 < len(words):
                        value = words[j + 1] or ""
                        if w == "-x" and value.isdigit():
                            width = int(value)
                        if w == "-y" and value.isdigit():
                            height = int(value)
                        j += 2
                    elif w.startswith("-"):
                        j += 1
                    else:
                        rest = [x or "" for x in words[j:]]
                        break
                return tuple(rest), width, height, sink.node_where(s.span)
    return None


def _argv(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    if "shlex" in v.detail and "docker" in v.detail:
        where = sink.node_where(sink.site.span)
        d.fact("hop", "container exec with a string: the SDK splits it (shlex)", "code", where)
        d.fact("tokenizer", "shlex.split", "api", where)
        d.routes.append(Route(Mechanism("argv-shlex")))
        return
    value = sink.engine.value(sink.site.span)
    tok = _tokenizer(sink, value)
    if tok is None:
        return
    name, where = tok
    transport = TOKENIZER_TRANSPORT.get(name)
    if transport is None:
        d.notes.append(f"tokenizer {name}: no transport splits the same way")
        return
    d.fact("tokenizer", name, "code", where)
    d.fact("program", "argv[0] of the tokenized reply (no shell)", "code", where)
    d.routes.append(Route(Mechanism(transport)))


def _tokenizer(sink: _Sink, value: AValue) -> tuple[str, str] | None:
    """The tokenizer the spawned argv went through: in the value, or a tokenizer call of the
    file whose input shares a variable with the argv's provenance."""
    stack = list(options(value))
    while stack:
        o = stack.pop()
        if isinstance(o, Tok):
            return o.tokenizer, sink.where(o.span, o.path)
        if isinstance(o, Obj) and o.argv is not None:
            stack.extend(options(o.argv))
        elif isinstance(o, Lst):
            for item in o.items:
                stack.extend(options(item))
    wanted = prov_of(value).vars
    for name in TOKENIZER_CALLS:
        for node in sink.ex.call_nodes(name):
            found = sink.engine.value(node)
            for o in options(found):
                if isinstance(o, Tok) and prov_of(o).vars & wanted:
                    return o.tokenizer, sink.node_where(node)
    return None


def _script(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    argv: AValue | None = None
    hop = ""
    if sink.site.kind == "process":
        obj = sink.spawn()
        argv = obj.argv if obj is not None else None
    else:
        argv = sink.value()
        hop = "container exec with an argv list (passed on unchanged: replayed here)"
    lists = [o for o in options(argv) if isinstance(o, Lst)] if argv is not None else []
    if not lists:
        return
    lst = lists[0]
    prog = _program(sink, lst.items, sink.at(_at(lst)))
    if hop:
        d.fact("hop", hop, "code", sink.node_where(sink.site.span))
    if v.write is not None and hasattr(v.write, "span"):
        d.fact("file", "R written verbatim to a file", "code", sink.node_where(v.write.span))
    if prog.prefix:
        at = sink.where(lst.span, lst.path) or prog.where
        d.fact("wrapper", " ".join(prog.prefix), "code", at)
    prefix = " ".join(prog.prefix)
    if "?" in prog.prefix:
        d.notes.append(
            f"wrapper `{prefix}` left out: an argument is not known statically; the run's own "
            "timeout applies"
        )
        prefix = ""
    shells = _shells(prog, d, "interpreter")
    for shell, assumes in shells:
        name = "script-bash" if shell == "bash" else "script-sh"
        params = {"prefix": prefix} if prefix else {}
        d.routes.append(Route(Mechanism(name, params), (), assumes))
    if not shells:
        d.unmeasurable = (
            f"the interpreter ({', '.join(prog.names) or 'unknown'}) is not a shell: the shell "
            "tasks cannot be replayed through it"
        )


def _remote(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if sink is None:
        return
    obj = sink.spawn() if sink.site.kind == "process" else None
    lists: list[Lst] = []
    if obj is not None and obj.argv is not None and not obj.shell:
        lists = [o for o in options(obj.argv) if isinstance(o, Lst)]
    elif sink.site.kind in ("remote-argv", "docker"):
        value = sink.value()
        lists = [o for o in options(value) if isinstance(o, Lst)] if value is not None else []
    if lists:
        words = [_literal(i) for i in lists[0].items]
        i = P.skip_wrappers(words)
        head = P.program_name(words[i] or "") if i < len(words) and words[i] else ""
        where = sink.where(obj.span, obj.path) if obj is not None else sink.at(_at(lists[0]))
        if head == "ssh":
            d.fact("hop", "ssh (argv, no local shell): ssh joins the words", "code", where)
            d.fact("program", "the remote login shell", "default", where)
            d.routes.append(Route(Mechanism("ssh", {"quoting": "argv"})))
            return
        if head in ("docker", "podman") and words[i + 1 : i + 2] == ["exec"]:
            inner = [w for w in words[i + 2 :] if w is not None and P.program_name(w) in P.SHELLS]
            shell = P.program_name(inner[0]) if inner else "sh"
            d.fact("hop", f"{head} exec (argv)", "code", where)
            d.fact("program", f"{shell} -c in the container", "code", where)
            d.routes.append(Route(Mechanism("docker", {"shell": shell, "flags": "-c"})))
            return
    if sink.site.kind == "remote":
        where = sink.node_where(sink.site.span)
        d.fact("hop", "a remote runner given R as one string", "code", where)
        d.fact("program", "the remote shell (one parse)", "default", where)
        d.routes.append(Route(Mechanism("ssh", {"quoting": "argv"})))


def _serialized(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    if v.sanitizer:
        d.fact("serializer", v.sanitizer, "code")
        d.routes.append(Route(Mechanism("json-correct")))
    else:
        d.fact("serializer", "none: the document is built by string concatenation", "code")
        d.routes.append(Route(Mechanism("json-naive")))


_BY_CLASS = {
    BC.SHELL_STRING: _shell_string,
    BC.NESTED_STRING: _nested,
    BC.SHELL_STDIN: _stdin,
    BC.SHELL_SESSION: _session,
    BC.TTY_KEYSTROKES: _keystrokes,
    BC.ARGV_DIRECT: _argv,
    BC.SCRIPT_FILE: _script,
    BC.REMOTE_STRING: _remote,
    BC.SERIALIZED: _serialized,
}


# -- fixes ------------------------------------------------------------------------------------

FIX_WORDS = {
    "bash": "let bash parse R (the model writes bash), not sh",
    "quote": "shell-quote R at the interpolation point (shlex.quote)",
    "own-process": "run R as its own `bash -c R`, stdin at /dev/null",
    "script": "write R to a script file and run `bash FILE`, stdin at /dev/null",
    "literal": "send R with `send-keys -l`, Enter apart",
    "escaped": "quote R for the remote shell (shlex.quote) before ssh joins it",
    "serializer": "build the document with a serializer (json.dumps)",
    "argv": "ask for an argv array, or run R with `bash -c` on purpose",
}
"""Each repair a fix may apply, in words (the `fix` text joins those it applied)."""
FIX_SHORT = {
    "bash": "bash for sh",
    "quote": "quote R",
    "own-process": "bash -c R",
    "script": "script file",
    "literal": "send-keys -l",
    "escaped": "quote for ssh",
    "serializer": "json.dumps",
    "argv": "bash -c R",
}
"""Each repair in two words, for the one-line report."""


def fix_route(cls: BC, route: Route) -> tuple[Route, tuple[str, ...]]:
    """`route` with the class's fix applied, and the repairs applied (() when none is needed)."""
    t, pre = route.transport, route.preprocess
    params = dict(t.params)
    if cls == BC.NESTED_STRING:
        steps, changed = [], False
        for step in pre:
            if step.name == "template.interpolate" and step.params.get("quote") != "shell":
                prefix = _bash_for_sh(str(step.params.get("prefix", "")))
                suffix = str(step.params.get("suffix", ""))
                prefix, suffix = _unquote_hole(prefix, suffix)
                steps.append(
                    Mechanism(step.name, {"prefix": prefix, "suffix": suffix, "quote": "shell"})
                )
                changed = True
            else:
                steps.append(step)
        return (
            (replace(route, preprocess=tuple(steps)), ("quote", "bash"))
            if changed
            else (
                route,
                (),
            )
        )
    if cls in (BC.SHELL_STRING,) and params.get("shell") in ("sh", "dash"):
        return replace(route, transport=Mechanism("raw", {**params, "shell": "bash"})), ("bash",)
    if cls == BC.SHELL_STDIN:
        return Route(Mechanism("raw"), (), route.assumes), ("own-process",)
    if cls == BC.SHELL_SESSION:
        return Route(Mechanism("script-bash"), (), route.assumes), ("script",)
    if cls == BC.TTY_KEYSTROKES:
        if t.name == "tmux-keys":
            return replace(route, transport=Mechanism("tmux-literal", params)), ("literal",)
        return Route(Mechanism("script-bash"), (), route.assumes), ("script",)
    if cls == BC.ARGV_DIRECT:
        return Route(Mechanism("raw"), (), route.assumes), ("argv",)
    if cls == BC.SCRIPT_FILE and t.name == "script-sh":
        return replace(route, transport=Mechanism("script-bash", params)), ("bash",)
    if cls == BC.REMOTE_STRING and t.name == "ssh" and params.get("quoting") == "double":
        return replace(route, transport=Mechanism("ssh", {**params, "quoting": "escaped"})), (
            "escaped",
        )
    if cls == BC.SERIALIZED and t.name == "json-naive":
        return replace(route, transport=Mechanism("json-correct")), ("serializer",)
    return route, ()


def _bash_for_sh(prefix: str) -> str:
    m = _INNER_SHELL.match(prefix)
    if m is None or P.program_name(m.group("shell")) not in ("sh", "dash"):
        return prefix
    return prefix[: m.start("shell")] + "bash" + prefix[m.end("shell") :]


def _unquote_hole(prefix: str, suffix: str) -> tuple[str, str]:
    """The template with the quotes that enclosed R removed (a quoted word replaces them)."""
    if prefix.endswith(("'", '"')) and suffix.startswith(prefix[-1]):
        return prefix[:-1], suffix[1:]
    return prefix, suffix


# -- the path ---------------------------------------------------------------------------------


def _contract_fact(v: Verdict, contract: Contract) -> PathFact:
    strong = sorted(
        (o for o in v.prov.origins if o.strong),
        key=lambda o: (o.kind != "tool-call", o.path, o.span.start_byte, o.kind, o.label),
    )
    # NOTE: the first of a sorted list, never an arbitrary element of the set (the report
    # must not depend on the hash seed).
    rest = sorted(v.prov.origins, key=lambda o: (o.path, o.span.start_byte, o.kind, o.label))
    origin = strong[0] if strong else (rest[0] if rest else None)
    if origin is None:
        return PathFact("contract", contract.value, "default")
    what = {
        "tool-call": "a decoded tool-call argument",
        "parsed-action": "text parsed out of the reply (an action or a code block)",
        "llm-response": "the reply's text",
        "name": "a parameter named like a command (no traced origin)",
    }.get(origin.kind, origin.kind)
    source = "default" if origin.kind == "name" else "code"
    where = f"{origin.path}:{origin.span.start_line + 1}"
    return PathFact("contract", f"{contract.value}: {what}, `{origin.label}`", source, where)


def _hint(sink: _Sink | None, v: Verdict, d: _Draft) -> None:
    """The class's transport hint over the sink's text: the fallback, said plainly."""
    text = sink.text() if sink is not None else ""
    whole = sink.ex.data.decode("utf-8", "replace") if sink is not None else ""
    name, params = record_of(v.mechanics).transport(text, whole, v.sanitizer is not None)
    d.fact("transport", Mechanism(name, params).label(), "hint")
    d.notes.append(
        "the analysis holds no fact that fixes the transport here: it was picked by the "
        f"{v.mechanics.value} check's hint over the sink's source text"
    )
    d.routes.append(Route(Mechanism(name, dict(params))))


def _layers(v: Verdict, contract: Contract, route: Route) -> tuple[str, ...]:
    first = {
        Contract.NATIVE: "JSON decode of the tool call",
        Contract.RAW: "the command taken from the reply's text",
    }.get(contract, "the model's value")
    steps = [f"{s.name}" for s in route.preprocess]
    return (first, *steps, *record_of(v.mechanics).layers)


def derive(v: Verdict, primary: Location, contract: Contract) -> DerivedPath | None:
    """The derived path of a model-controlled verdict at `primary` (None for the others).

    Never raises: a derivation that fails (a bug, a value too deep to read again) falls back
    to the class's hint and says why, so the finding itself is never lost.
    """
    if not v.prov.origins:
        return None
    d = _Draft()
    d.facts.append(_contract_fact(v, contract))
    sink: _Sink | None = None
    try:
        sink = _sink(primary)
        _BY_CLASS[v.mechanics](sink, v, d)
    except Exception as exc:  # noqa: BLE001 - the finding must survive its path
        d = _Draft(facts=d.facts[:1])
        d.notes.append(f"the path could not be derived ({type(exc).__name__}: {exc})")
    if not d.routes and not d.unmeasurable:
        _hint(sink, v, d)
    if not d.routes:
        return DerivedPath(
            contract=contract,
            boundary_class=v.boundary_class,
            shell_parses=v.parse_layers,
            parse_layers=record_of(v.mechanics).layers,
            routes=(Route(Mechanism("none")),),
            facts=tuple(d.facts),
            notes=tuple(d.notes),
            unmeasurable=d.unmeasurable,
        )
    routes = _unique(d.routes)
    fixed: list[Route] = []
    repairs: list[str] = []
    for r in routes:
        f, applied = fix_route(v.mechanics, r)
        fixed.append(f)
        repairs.extend(a for a in applied if a not in repairs)
    return DerivedPath(
        contract=contract,
        boundary_class=v.boundary_class,
        shell_parses=v.parse_layers,
        parse_layers=_layers(v, contract, routes[0]),
        routes=tuple(routes),
        facts=tuple(d.facts),
        fix="; ".join(FIX_WORDS[r] for r in repairs),
        fixed=tuple(fixed) if repairs else (),
        notes=tuple(d.notes),
        unmeasurable=d.unmeasurable,
    )


def _unique(routes: Iterable[Route]) -> list[Route]:
    seen: list[Route] = []
    for r in routes:
        if all((r.transport, r.preprocess) != (s.transport, s.preprocess) for s in seen):
            seen.append(r)
    return seen


__all__ = ["FIX_SHORT", "FIX_WORDS", "SESSION_APIS", "SHELL_RANGE", "derive", "fix_route"]
