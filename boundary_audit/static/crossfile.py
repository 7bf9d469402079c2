"""Cross-file tracing: parameters whose callers live in other files, imported return values.

The scan installs the whole set of scanned files as a `Corpus` before analysing them (each
worker process gets it once). When the engine needs the value of a parameter of function
`f`, `Corpus.param_values` looks for calls of `f` in the other files of the same language
family that mention `f(` (for a method, `.f(`), evaluates the argument there with a fresh
engine, and returns those values; for a plain function the other file must import it by
name. `Corpus.return_values` evaluates the returns of a function imported by name from a
module of the corpus (`from tools import get_command`, `import { f } from "./tools"`).
Depth is bounded (`MAX_HOPS`) and results are cached per (file, function, parameter), so
tracing stays cheap and deterministic.

A file is parsed once per process where the bounded caches allow: the main pass takes its
tree and its extractor from the corpus (`Corpus.tree`, `Corpus.main_extractor`), which
keeps those of its latest files (`MAX_RECENT_BYTES`) for the cross-file pass, and the
extractors the cross-file pass asked for (`MAX_EXTRACTOR_BYTES`) for the main pass. An extractor
is a lazily filled, deterministic view of its tree, so whichever pass builds it first, the
values it gives are the same.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static import quoters
from boundary_audit.static.apis import sdk_methods_used
from boundary_audit.static.entries import object_slot
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.ir import Attr, Call, Function, Ref, Spread
from boundary_audit.static.packed import Packed
from boundary_audit.static.parsing import TooDeep, parse, utf8_safe
from boundary_audit.static.receivers import receiver_classes
from boundary_audit.static.values import UNKNOWN, AValue, Opq, Step

if TYPE_CHECKING:
    from boundary_audit.static.dataflow import Engine

MAX_HOPS = 2
"""How many file boundaries one trace may cross."""
MAX_FILES = 12
"""Candidate files examined per function."""
MAX_EXTRACTOR_BYTES = 2 * 1024 * 1024
"""Source bytes of the extractors the cross-file pass asked for, kept per process (the least
recently used dropped beyond it, the latest always kept). An extractor costs about 23 bytes
of tree and up to 13 of IR per source byte, so this is about 70 MiB at most. The files a
real harness's cross-file pass asks for fit: MetaGPT@ba28689 asks for 234 files (1.6 MB),
openai-agents-js@6d0c61a for 92 (2.5 MB); the count bound of 64 extractors this replaced
made MetaGPT's scan parse 279 files again, 36% of its 770 parses (benchmarks/README.md).
The extractors the kept shared engines hold (at most 64, until the next file) outlive the
bound: a dropped one is taken again from its engine (`_engine_extractor`)."""
MAX_RECENT_BYTES = 128 * 1024
"""Source bytes of the main pass's latest files whose trees (or extractors) are kept per
process for the cross-file pass. A tree costs 20 (AutoGen) to 40 (the benchmark's synthetic
tree) bytes of memory per source byte, so this is 2.5-5 MiB of every worker's peak. With
none kept, the cross-file pass (`scan --jobs 1`) re-parses 28 files of AutoGen@027ecf0 (480
scanned), 8 of SWE-agent@3ea751c (99), 80 of MetaGPT@ba28689 (525) and 40 of
openai-agents-js@6d0c61a (354); this budget spares 7, 8, 26 and 5 of them. Twice as large,
it spared 2, 0, 9 and 11 more (at most 3% of a scan's parses) for 5.6 MiB more per worker on
the synthetic tree at 8x (benchmarks/README.md). Findings are the same at every size."""
GENERIC_NAMES = frozenset(
    {
        "run",
        "main",
        "__init__",
        "new",
        "call",
        "execute",
        "get",
        "set",
        "update",
        "start",
        "stop",
        "close",
        "open",
        "read",
        "write",
        "send",
        "init",
        "create",
        "handle",
        "process",
        "apply",
        "build",
        "load",
        "save",
        "exec",
        "spawn",
        "invoke",
        "default",
        "from",
        "into",
        "next",
    }
)
"""Names too common to match by text across files."""
FAMILY = {
    "python": "py",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "rust": "rs",
    "go": "go",
    "shell": "sh",
}

_CLASS_HEADER = {
    "py": re.compile(rb"class\s+([A-Za-z_]\w*)\s*(?:\(([^)]*)\)|(?=:))"),
    "js": re.compile(
        rb"class\s+([A-Za-z_$][\w$]*)\b(?:[^{;]*?\b(?:extends|implements)\s+([^{]*)|[^{;]*)\{"
    ),
}
"""A class declaration's header: the class in group 1, its bases (if any) in group 2. A
class declared without bases is a header too (`class Base {`, `class Base:`): the root of
most hierarchies, which `ancestors` must find declared. Each begins with the literal `class`
(which `re` then finds at memory speed) and is used through `class_headers`, which adds the
word boundary before it."""

_KEYWORDS = frozenset({b"extends", b"implements"})
"""Words of a header's bases that are no class (`class A extends B implements C {`)."""

_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def class_headers(header: re.Pattern[bytes], data: bytes) -> Iterator[re.Match[bytes]]:
    """The matches `re.finditer` gives for `header` with `\\b` in front: a match right after
    a word byte is skipped and the search resumes one byte later, as `\\b` would have made
    the regex do (a leading `\\b` keeps `re` from searching for the literal first: 5x
    slower on 37 MiB of Python)."""
    pos = 0
    while (m := header.search(data, pos)) is not None:
        start = m.start()
        if start and data[start - 1] in _WORD:
            pos = start + 1
            continue
        yield m
        pos = m.end()  # never empty: every header starts with `class`


_IDENT = bytes(b for b in range(256) if chr(b).isascii() and chr(b).isalnum() or b >= 128) + b"_$-"
"""Bytes an indexed name is made of (any set without `(` and `.` keeps the index exact)."""


@dataclass
class CallIndex:
    """Which files of a language family have `NAME(` and `.NAME(` in their text.

    Built in one pass over each file's bytes (split at `(`, the run of `_IDENT` bytes right
    before each one is a *token*), no parsing. A file contains `.NAME(` exactly when NAME is
    one of its tokens preceded by `.` (`.` ends a run); it contains `NAME(` exactly when
    NAME is a suffix of one of its tokens (`xNAME(` contains `NAME(`), found by bisecting
    the tokens, kept reversed for that. So `lookup` gives the same files as a substring
    search, in the same (sorted path) order. The tables are `Packed` (ids index `paths`):
    every worker holds them for its whole life.
    """

    paths: list[str]
    calls: Packed
    """token *reversed* -> the files that have `token(` (reversed, so that the keys a
    reversed name begins are the tokens it ends)."""
    methods: Packed
    """token -> the files that have `.token(`."""
    asserted: Packed
    """token -> the files that have `.token!(` (TypeScript's non-null call)."""

    @classmethod
    def build(cls, paths: list[str], texts: list[bytes]) -> CallIndex:
        calls: dict[bytes, list[int]] = {}
        methods: dict[bytes, list[int]] = {}
        asserted: dict[bytes, list[int]] = {}
        for i, data in enumerate(texts):
            tokens: set[bytes] = set()
            dotted: set[bytes] = set()
            banged: set[bytes] = set()
            for piece in data.split(b"(")[:-1]:
                cut = len(piece.rstrip(_IDENT))
                if cut < len(piece):
                    token = piece[cut:]
                    tokens.add(token)
                    if cut and piece[cut - 1] == 0x2E:  # "."
                        dotted.add(token)
                elif piece.endswith(b"!"):
                    bare = piece[:-1]
                    cut = len(bare.rstrip(_IDENT))
                    if cut < len(bare) and cut and bare[cut - 1] == 0x2E:
                        banged.add(bare[cut:])
            for token in tokens:
                calls.setdefault(token[::-1], []).append(i)
            for token in dotted:
                methods.setdefault(token, []).append(i)
            for token in banged:
                asserted.setdefault(token, []).append(i)
        return cls(paths, Packed(calls), Packed(methods), Packed(asserted))

    def lookup(self, name: bytes, dotted: bool, asserted: bool = False) -> list[str]:
        """Paths whose text contains `.name(` (`dotted`), `.name!(` (`asserted`) or `name(`."""
        if asserted or dotted:
            table = self.asserted if asserted else self.methods
            return [self.paths[i] for i in table.get(name)]
        hits = [self.calls.ids(j) for j in self.calls.prefixed(name[::-1])]
        found = hits[0] if len(hits) == 1 else sorted({i for h in hits for i in h})
        return [self.paths[i] for i in found]


@dataclass(frozen=True)
class Classes:
    """The classes a language family's files declare (`class_headers`)."""

    bases: dict[str, tuple[str, ...]]
    """class -> the names in its bases, sorted and distinct (shared strings), for each class
    declared with any."""
    declared: Packed
    """Every declared class's name, with bases or without: most have none, and a str per
    class (65k of them on an 84 MB corpus) was most of this table's memory."""

    def bases_of(self, cls: str) -> tuple[str, ...]:
        return self.bases.get(cls, ())

    def declares(self, cls: str) -> bool:
        return cls.encode() in self.declared


@dataclass
class Corpus:
    """Every scanned file, for lookups from any file's engine."""

    files: dict[str, tuple[str, bytes]]
    """path -> (language, content)."""
    _extractors: OrderedDict[str, Extractor | None] = field(default_factory=OrderedDict)
    _recent: OrderedDict[str, Extractor | ts.Tree] = field(default_factory=OrderedDict)
    """The main pass's latest files: their trees, or their extractors once it built them."""
    _recent_bytes: int = 0
    """Source bytes of the files in `_recent`."""
    _extractor_bytes: int = 0
    """Source bytes of the files in `_extractors`."""
    _params: dict[tuple[str, int, str, bool], list[AValue]] = field(default_factory=dict)
    _found: dict[tuple[str | None, bytes], list[str]] = field(default_factory=dict)
    _families: dict[str | None, list[str]] = field(default_factory=dict)
    _bases: dict[str, Classes] = field(default_factory=dict)
    _sdk_methods: dict[str, frozenset[str]] = field(default_factory=dict)
    _indexes: dict[str | None, CallIndex] = field(default_factory=dict)
    _engines: OrderedDict[tuple[str, int], Engine] = field(default_factory=OrderedDict)
    _quoters: dict[str | None, frozenset[str]] = field(default_factory=dict)
    generation: int = 0
    """How many files `begin_file` began: an engine kept from an earlier generation has
    memoised values of another file's evaluation."""
    churn: int = 0
    """How many kept extractors and shared engines were dropped or replaced: a lookup
    into their file after that evaluates again what they memoised (`replay.replay`)."""
    unstable: int = 0
    """How many lookups of parameter values returned one still being computed (a cycle
    through other files: nothing yet)."""
    _pending: set[tuple[str, int, str, bool]] = field(default_factory=set)
    """Keys of `_params` still being computed (their entry is an empty placeholder)."""
    touches: list[tuple[bool, object]] = field(default_factory=list)
    """Every use of a kept extractor or shared engine since the file began, in order
    ((True, engine key) or (False, path)): which one the bounds drop next follows it, so a
    partial result given again repeats its evaluation's (`retouch`)."""

    def extractor(self, path: str) -> Extractor | None:
        """The (cached) extractor of another file, or None if it cannot be analysed.

        The main pass's extractor or tree of the file if it is still kept (`Corpus.tree`),
        or the extractor a kept shared engine still evaluates with (`_engine_extractor`),
        else built on a fresh parse."""
        self.touches.append((False, path))
        if path in self._extractors:
            self._extractors.move_to_end(path)
            return self._extractors[path]
        lang, data = self.files[path]
        kept = self._recent.pop(path, None)
        if kept is not None:
            self._recent_bytes -= len(data)
        ex: Extractor | None
        if not isinstance(kept, Extractor):
            kept = self._engine_extractor(path) or kept
        if isinstance(kept, Extractor):
            ex = kept
        else:
            try:
                data = utf8_safe(data)
                tree = kept if kept is not None else parse(lang, data)
                ex = extractor_for(lang)(lang, path, data, tree)
            except (TooDeep, RecursionError, ValueError):
                ex = None
        self._extractors[path] = ex
        self._extractor_bytes += len(self.files[path][1])
        while len(self._extractors) > 1 and self._extractor_bytes > MAX_EXTRACTOR_BYTES:
            old, _ = self._extractors.popitem(last=False)
            self._extractor_bytes -= len(self.files[old][1])
            self.churn += 1
        return ex

    def _engine_extractor(self, path: str) -> Extractor | None:
        """The extractor of `path` a kept shared engine still evaluates with (the bound
        dropped it from `_extractors`, the engine holds it): taken again, the engine and
        what it memoised stay valid (`engine_for`), so what a lookup finds does not depend
        on the bound."""
        for (where, _hops), engine in self._engines.items():
            if where == path:
                return engine.ex
        return None

    def tree(self, path: str, lang: str, data: bytes) -> ts.Tree:
        """The main pass's tree of file `path`, `data` in `lang` (as the corpus holds it, not
        yet made UTF-8-safe): the tree of the file's extractor if the cross-file pass built
        one, else a fresh parse of `utf8_safe(data)`, kept (`MAX_RECENT_BYTES`) for a later
        `extractor(path)`. A file the corpus holds otherwise is parsed and not kept."""
        if self.files.get(path) != (lang, data):
            return parse(lang, utf8_safe(data))
        ex = self._extractors.get(path)
        if ex is not None:
            return ex.tree
        kept = self._recent.get(path)
        if kept is not None:
            return kept.tree if isinstance(kept, Extractor) else kept
        tree = parse(lang, utf8_safe(data))
        if path not in self._extractors:
            self._keep(path, tree)
        return tree

    def main_extractor(self, path: str, tree: ts.Tree) -> Extractor | None:
        """The main pass's extractor of file `path` on `tree` (from `tree(path, ...)`): the
        cross-file pass's if it built one on that tree, else a new one, kept as the tree was;
        None if `tree` is not the corpus's for `path` or the extractor cannot be built."""
        ex = self._extractors.get(path)
        if ex is not None and ex.tree is tree:
            return ex
        kept = self._recent.get(path)
        if isinstance(kept, Extractor) and kept.tree is tree:
            return kept
        if kept is not tree:
            return None
        lang, data = self.files[path]
        try:
            ex = extractor_for(lang)(lang, path, utf8_safe(data), tree)
        except (TooDeep, RecursionError, ValueError):
            return None
        self._recent[path] = ex
        return ex

    def _keep(self, path: str, tree: ts.Tree) -> None:
        """Keep the main pass's `tree` of `path`, dropping the oldest kept beyond the bound."""
        self._recent[path] = tree
        self._recent_bytes += len(self.files[path][1])
        while len(self._recent) > 1 and self._recent_bytes > MAX_RECENT_BYTES:
            old, _ = self._recent.popitem(last=False)
            self._recent_bytes -= len(self.files[old][1])

    def candidates(self, lang: str, needle: bytes, exclude: str) -> list[str]:
        """Paths of the same language family whose text contains `needle` (sorted, capped).

        A needle of the form `NAME(`, `.NAME(` or `.NAME!(` (NAME all identifier bytes,
        `_IDENT`) is answered from the family's identifier index (`index`), any other by a
        substring test of each of the family's files; both give the same list. (The files
        are never joined into one text: that was a second copy of the corpus in memory, and
        it let a class header or a quoting helper's name run across two files.)
        """
        family = FAMILY.get(lang)
        key = (family, needle)
        if key not in self._found:
            name = needle[:-1]
            asserted = name.startswith(b".") and name.endswith(b"!")
            if asserted:
                name = name[:-1]
            dotted = name.startswith(b".")
            if dotted:
                name = name[1:]
            if needle.endswith(b"(") and name and not name.rstrip(_IDENT):
                self._found[key] = self.index(family).lookup(name, dotted, asserted)
            else:
                self._found[key] = self._search(family, needle)
        return [p for p in self._found[key] if p != exclude][:MAX_FILES]

    def _search(self, family: str | None, needle: bytes) -> list[str]:
        """Paths of `family` whose text contains `needle`, in path order."""
        files = self.files
        return [p for p in self.family_paths(family) if needle in files[p][1]]

    def family_paths(self, family: str | None) -> list[str]:
        """The sorted paths of a language family."""
        cached = self._families.get(family)
        if cached is None:
            cached = self._families[family] = [
                p for p, (lg, _) in sorted(self.files.items()) if FAMILY.get(lg) == family
            ]
        return list(cached)

    def index(self, family: str | None) -> CallIndex:
        """The (cached) identifier index of a language family, built on first use."""
        cached = self._indexes.get(family)
        if cached is None:
            paths = self.family_paths(family)
            cached = self._indexes[family] = CallIndex.build(
                paths, [self.files[p][1] for p in paths]
            )
        return cached

    def sdk_methods(self, path: str, ex: Extractor) -> frozenset[str]:
        """`apis.sdk_methods_used` of a corpus file, once per file."""
        found = self._sdk_methods.get(path)
        if found is None:
            found = self._sdk_methods[path] = sdk_methods_used(ex.lang, ex.data)
        return found

    def begin_file(self) -> None:
        """Forget what evaluating the previous file's sinks memoised (the callers' values
        of parameters, the other files' shared engines), so that a file's findings do not
        depend on which files its process analysed before it."""
        self._params.clear()
        self._engines.clear()
        self.touches.clear()
        self.generation += 1

    def retouch(self, touches: tuple[tuple[bool, object], ...]) -> None:
        """Use the kept extractors and shared engines of `touches` again, in that order
        (an evaluation given again instead of repeated, `replay.replay`)."""
        for is_engine, key in touches:
            kept = self._engines if is_engine else self._extractors
            if key in kept:
                kept.move_to_end(key)  # type: ignore[arg-type]
        self.touches.extend(touches)

    def prepare(self) -> None:
        """Build the per-family tables the cross-file pass builds on first use (identifier
        index, class bases, quoting helpers) for every family of the corpus:
        before forking workers, so that they inherit one copy instead of each building its
        own. The tables are functions of the files alone: the values are those of a lazy
        build."""
        for family in sorted({f for lg, _ in self.files.values() if (f := FAMILY.get(lg))}):
            self.index(family)
            self.quoters(family)
            if family in _CLASS_HEADER:
                self.class_bases(family)

    def quoters(self, family: str | None) -> frozenset[str]:
        """Names of the project's own shell-quoting helpers in a language family (`quoters`)."""
        found = self._quoters.get(family)
        if found is None:
            found = self._quoters[family] = frozenset().union(
                *(quoters.find(self.files[p][1], family) for p in self.family_paths(family))
            )
        return found

    def engine_for(self, ex: Extractor, parent: Engine, shared: bool = False) -> Engine:
        """An engine for another file, one hop further than `parent`, on its step budget.

        A `shared` one is kept per (file, hop) and reused, with what it memoised, by every
        later lookup into that file (an engine with no bindings computes the same value for
        an expression whoever asks; a result cut by a budget is never memoised): the
        callers of a workspace-path helper are then evaluated once per scan, not once per
        sink that reaches them."""
        from boundary_audit.static.dataflow import Engine

        hops = parent.hops + 1
        key = (ex.path, hops)
        engine = self._engines.get(key) if shared else None
        if shared:
            self.touches.append((True, key))
        if engine is None or engine.ex is not ex:
            if engine is not None:
                self.churn += 1
            engine = Engine(ex, self if hops < MAX_HOPS else None)
            engine.hops = hops
            if shared:
                engine.lasting = True
                self._engines[key] = engine
                if len(self._engines) > 64:
                    self._engines.popitem(last=False)
                    self.churn += 1
        elif shared:
            self._engines.move_to_end(key)
        engine.budget = parent.budget
        return engine

    def param_values(
        self, engine: Engine, fn: Function, name: str, shapes: bool = False
    ) -> list[AValue]:
        """Values passed to parameter `name` of `fn` by calls in other files.

        With `shapes`, only what each call makes of its own function's inputs: the caller's
        parameters are not followed (they stay unknown), and each call is evaluated by an
        engine of its own, with no further hop and a small budget (`SITE_STEPS` short of
        `MAX_STEPS`). A tool entry asks so for the shape its dispatchers give the model's
        text (`self._exec_internal(*["sh", "-lc", cmd])` in a base class)."""
        if fn.key == -1:
            return []
        # A common name (`run`) is matched only where the caller's code says the receiver is
        # of `fn`'s class (`self.interpreter = SubprocessInterpreter()`): files naming the class.
        typed = fn.name in GENERIC_NAMES or len(fn.name) < 4 or fn.name.startswith("_")
        if typed and not (fn.is_method and fn.cls and not fn.name.startswith("__")):
            return []
        key = (engine.path, fn.key, name, shapes)
        if key in self._params:
            if key in self._pending:
                self.unstable += 1
            return self._params[key]
        self._params[key] = []
        self._pending.add(key)
        try:
            return self._param_values(engine, fn, name, shapes, typed, key)
        finally:
            self._pending.discard(key)

    def _param_values(
        self,
        engine: Engine,
        fn: Function,
        name: str,
        shapes: bool,
        typed: bool,
        key: tuple[str, int, str, bool],
    ) -> list[AValue]:
        from boundary_audit.static.calls import is_variadic, variadic_rest, with_step

        param = fn.param(name)
        if typed:
            assert fn.cls is not None
            paths = self.candidates(engine.ex.lang, fn.cls.encode(), engine.path)
            family = FAMILY.get(engine.ex.lang)
            if family in ("py", "js"):
                # a base class calls the method on `self` (`self._exec_internal(*argv)` in
                # the base, the override here): the files that declare an ancestor
                for base in self.ancestors(family, fn.cls):
                    more = self.candidates(engine.ex.lang, f"class {base}".encode(), engine.path)
                    paths += [p for p in more if p not in paths]
        else:
            needle = (f".{fn.name}(" if fn.is_method else f"{fn.name}(").encode()
            paths = self.candidates(engine.ex.lang, needle, engine.path)
            if fn.is_method and FAMILY.get(engine.ex.lang) == "js":
                # `session.execCommand!(…)`: TypeScript's non-null call of the method
                banged = self.candidates(engine.ex.lang, f".{fn.name}!(".encode(), engine.path)
                paths = sorted({*paths, *banged})[:MAX_FILES] if banged else paths
                # `probe({runCommand: async (command) => …})`: the callback is called by the
                # function it is handed to, so only by the files defining that function
                taker = _literal_taker(engine.ex, fn)
                if taker is not None:
                    paths = [p for p in paths if self._defines(p, taker)]
        out: list[AValue] = []
        word = fn.name.encode()
        for path in paths:
            if word not in self.files[path][1]:
                # no call of `fn` (`call_nodes` finds them by the name's text): a file that
                # names only the class (a typed candidate) is not parsed for nothing
                continue
            ex = self.extractor(path)
            if ex is None:
                continue
            same_package = (
                FAMILY.get(ex.lang) == "go"
                and path.rsplit("/", 1)[0] == engine.path.rsplit("/", 1)[0]
            )
            if ex is None or (not fn.is_method and not same_package and not _imports(ex, fn.name)):
                continue
            other = self.engine_for(ex, engine, shared=True)
            # In a file that uses an SDK, `container.exec_run(...)` is the SDK's sink method:
            # it calls a project class's method of that name only through a typed receiver.
            required = typed or fn.name in self.sdk_methods(path, ex)
            for node in ex.call_nodes(fn.name):
                call = ex.expr(node)
                if not isinstance(call, Call) or param is None:
                    continue
                via_attr = isinstance(call.callee, Attr)
                if fn.is_method != via_attr:
                    continue
                caller = ex.function_at(node)
                if fn.cls and not self.may_reach(ex, call, caller, fn.cls, required=required):
                    continue
                if fn.cls is None and fn.is_method and required:
                    # a property function (`{runCommand: async (c) => …}`) has no class a
                    # receiver could be typed as: the SDK's own method of that name is meant
                    continue
                if shapes:
                    other = _shape_engine(ex, caller)
                arg = call.kwarg(name)
                if arg is None:
                    index = param.index - (1 if fn.self_param else 0)
                    text = engine.ex.data[param.span.start_byte : param.span.end_byte]
                    variadic = is_variadic(text)
                    rest = variadic_rest(other, call, index, caller, variadic)
                    if rest is not None:
                        step = Step(path, call.span, f"passed as `{name}` to {fn.name}()")
                        out.append(with_step(rest, step))
                        continue
                    if any(isinstance(a, Spread) for a in call.args[: index + 1]):
                        out.append(Opq(UNKNOWN))
                        continue
                    arg = call.args[index] if 0 <= index < len(call.args) else None
                if arg is None:
                    continue
                value = other.eval(arg, caller)
                out.append(
                    with_step(value, Step(path, call.span, f"passed as `{name}` to {fn.name}()"))
                )
        self._params[key] = out
        return out

    def may_reach(
        self, ex: Extractor, call: Call, caller: Function, cls: str, required: bool
    ) -> bool:
        """Whether method call `call` may invoke a method of class `cls`, by its receiver.

        The receiver's classes as the caller's code names them (`receivers`): `cls` itself, a
        class that inherits the method from `cls`, or one `cls` derives from (the object may
        be of a subclass that overrides it: `self.exec_action()` in a base class). Where the
        code names none, `required` decides (a common method name needs the receiver's word;
        a distinctive one is taken by its name). Only Python and JavaScript-family classes are
        compared: Go and Rust methods are reached through interfaces and traits the text does
        not tie to one type.
        """
        family = FAMILY.get(ex.lang)
        if family not in ("py", "js"):
            return not required
        known = receiver_classes(ex, call, caller)
        if not known:
            return not required
        return any(
            k == cls or self.derives(family, k, cls) or self.derives(family, cls, k) for k in known
        )

    def derives(self, family: str, sub: str, base: str, depth: int = 0) -> bool:
        """Whether class `sub` is declared (in the corpus) with `base` among its ancestors."""
        bases = self.class_bases(family).bases_of(sub)
        if base in bases:
            return True
        return depth < 4 and any(
            self.derives(family, b, base, depth + 1) for b in bases if b != sub
        )

    def class_bases(self, family: str) -> Classes:
        """Every class declared in the family's files and the names in its bases (one pass)."""
        table = self._bases.get(family)
        if table is None:
            found: dict[bytes, list[bytes]] = {}
            header = _CLASS_HEADER[family]
            for p in self.family_paths(family):
                for m in class_headers(header, self.files[p][1]):
                    words = re.findall(rb"[A-Za-z_$][\w$]*", m.group(2) or b"")
                    found.setdefault(m.group(1), []).extend(w for w in words if w not in _KEYWORDS)
            names: dict[bytes, str] = {}
            table = self._bases[family] = Classes(
                {
                    k.decode(): tuple(names.setdefault(w, w.decode()) for w in sorted(set(v)))
                    for k, v in found.items()
                    if v
                },
                Packed.of_keys(found),
            )
        return table

    def ancestors(self, family: str, cls: str) -> list[str]:
        """The classes `cls` derives from as the corpus declares them, nearest first
        (breadth-first; one level in name order), `cls` itself excluded."""
        table = self.class_bases(family)
        out: list[str] = []
        level = [cls]
        while level and len(out) < 16:
            nxt: list[str] = []
            for c in level:
                for b in sorted(table.bases_of(c)):
                    if b != cls and b not in out and table.declares(b):
                        out.append(b)
                        nxt.append(b)
            level = nxt
        return out

    def inherited_returns(
        self, engine: Engine, call: Call, caller: Function, name: str
    ) -> list[AValue]:
        """Return values of method `name` that `caller`'s class inherits from a base class
        declared in another file (`self.m(...)` not defined in the class, `super().m(...)`),
        with its parameters bound to this call's arguments (`calls.bind_arguments`)."""
        from boundary_audit.static.calls import bind_arguments, with_step

        for base, path, ex in self._base_files(engine, caller):
            targets = [f for f in ex.functions_named(name) if f.is_method and f.cls == base]
            if not targets:
                continue
            other = self.engine_for(ex, engine)
            for t in targets:
                other.bindings.update(bind_arguments(engine, call, caller, t, ex.data))
            values = [other.eval(r, t) for t in targets for r in ex.filled(t).returns]
            step = Step(path, targets[0].span, f"value returned by {base}.{name}() in {path}")
            return [with_step(v, step) for v in values]
        return []

    def _defines(self, path: str, name: str) -> bool:
        """True if the file at `path` defines a function or method called `name`."""
        ex = self.extractor(path)
        return ex is not None and bool(ex.functions_named(name))

    def inherited_attrs(self, engine: Engine, fn: Function, target: str) -> list[AValue]:
        """Values of `self.x` (`target`) as a base class declared in another file defines or
        mutates it in its methods (`self.trajectory.append((action, None))` in the base's
        `step`, read as `self.trajectory[-1][0]` in a subclass), when `fn`'s own class sets
        nothing. The nearest base that sets it answers."""
        from boundary_audit.static.calls import with_step

        needle = target.encode()
        for base, path, ex in self._base_files(engine, fn):
            methods = [
                f
                for f in ex.all_functions()
                if f.cls == base and needle in ex.data[f.span.start_byte : f.span.end_byte]
            ]
            found = [(m, d) for m in methods for d in ex.filled(m).defs.get(target, ())]
            if not found:
                continue
            other = self.engine_for(ex, engine, shared=True)
            values = [other.eval(d.value, m) for m, d in found]
            step = Step(path, found[0][1].span, f"`{target}` as {base} sets it in {path}")
            return [with_step(v, step) for v in values]
        return []

    def _base_files(self, engine: Engine, fn: Function) -> Iterator[tuple[str, str, Extractor]]:
        """(base class, path, extractor) of each file of another path that declares a base
        class of `fn`'s class, nearest base first (Python and JS/TS)."""
        family = FAMILY.get(engine.ex.lang)
        if fn.cls is None or family not in ("py", "js"):
            return
        for base in self.ancestors(family, fn.cls):
            for path in self.candidates(engine.ex.lang, f"class {base}".encode(), engine.path):
                ex = self.extractor(path)
                if ex is not None:
                    yield base, path, ex

    def return_values(
        self, engine: Engine, call: Call, canonical: str, caller: Function
    ) -> list[AValue]:
        """Return values of an imported function defined in another scanned file.

        The callee's parameters are bound to this call's arguments, evaluated here, so the
        value is specific to the call site (and needs no further file hop to reach them).
        """
        module, _, fname = canonical.rpartition(".")
        if not module or not isinstance(call.callee, Ref):
            return []
        for path in self.module_paths(engine.path, module, engine.ex.lang):
            ex = self.extractor(path)
            if ex is None:
                continue
            targets = [f for f in ex.functions_named(fname) if not f.is_method]
            if targets:
                other = self.engine_for(ex, engine)
                for t in targets:
                    for p in t.params:
                        arg = call.kwarg(p.name)
                        if (
                            arg is None
                            and p.index < len(call.args)
                            and not any(isinstance(a, Spread) for a in call.args[: p.index + 1])
                        ):
                            arg = call.args[p.index]
                        if arg is not None:
                            other.bindings[(t.key, p.name)] = engine.eval(arg, caller)
                values = [other.eval(r, t) for t in targets for r in ex.filled(t).returns]
                from boundary_audit.static.calls import with_step

                step = Step(path, targets[0].span, f"value returned by {fname}() in {path}")
                return [with_step(v, step) for v in values]
        return []

    def module_paths(self, here: str, module: str, lang: str) -> list[str]:
        """Corpus paths that may define `module` as imported from file `here`."""
        base = here.rsplit("/", 1)[0] if "/" in here else ""
        if FAMILY.get(lang) == "py":
            rel = module.lstrip(".")
            dots = len(module) - len(rel)
            stem = rel.replace(".", "/")
            roots = [base] if dots else [""] + [base]
            for _ in range(max(dots - 1, 0)):
                roots = [r.rsplit("/", 1)[0] if "/" in r else "" for r in roots]
            names = [f"{r}/{stem}" if r else stem for r in roots]
            wanted = [f"{n}.py" for n in names] + [f"{n}/__init__.py" for n in names]
        elif FAMILY.get(lang) == "js" and module.startswith("."):
            joined = _join(base, module)
            wanted = [
                f"{joined}{ext}"
                for ext in (".ts", ".tsx", ".js", ".mjs", ".cjs", "/index.ts", "/index.js")
            ]
        else:
            return []
        return [w for w in wanted if w in self.files]


def _shape_engine(ex: Extractor, caller: Function) -> Engine:
    """An engine for one call in `caller` that does not follow `caller`'s parameters nor
    leave the file, on a budget of its own (`Corpus.param_values` with `shapes`)."""
    from boundary_audit.static.dataflow import MAX_STEPS, Engine
    from boundary_audit.static.dataflow_limits import SITE_STEPS

    engine = Engine(ex, None)
    engine.hops = MAX_HOPS
    engine.budget.steps = MAX_STEPS - SITE_STEPS
    engine.bindings = {
        (caller.key, p.name): Opq(UNKNOWN)
        for p in caller.params
        if not (caller.self_param and p.index == 0)
    }
    return engine


def _join(base: str, rel: str) -> str:
    parts = [p for p in base.split("/") if p]
    for piece in rel.split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece not in (".", ""):
            parts.append(piece)
    return "/".join(parts)


def _literal_taker(ex: Extractor, fn: Function) -> str | None:
    """The name of the function called with the object literal whose property `fn` is
    (`f({k: () => …})`, `o.f({k() {…}})`); None when `fn` is not such a property."""
    node, _key = object_slot(fn.node)
    if node is None:
        return None
    args = node.parent
    call = args.parent if args is not None and args.type == "arguments" else None
    if call is None or call.type not in ("call_expression", "new_expression"):
        return None
    callee = call.child_by_field_name("function") or call.child_by_field_name("constructor")
    if callee is not None and callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    if callee is None or callee.type not in ("identifier", "property_identifier"):
        return None
    return ex.text(callee)


def _imports(ex: Extractor, name: str) -> bool:
    """True if `ex`'s file imports `name` (or defines it locally)."""
    if name in ex.imports:
        return True
    return any(
        v.rsplit(".", 1)[-1] == name or v.rsplit("::", 1)[-1] == name for v in ex.imports.values()
    )


_ACTIVE: Corpus | None = None


def install(files: dict[str, tuple[str, bytes]]) -> None:
    """Make `files` the corpus of this process (called in the parent and in each worker)."""
    global _ACTIVE
    _ACTIVE = Corpus(files) if files else None


def adopt(corpus: Corpus | None) -> None:
    """Make `corpus` (built, and `prepare`d, by the parent) the corpus of this worker."""
    global _ACTIVE
    _ACTIVE = corpus if corpus is not None and corpus.files else None


def active() -> Corpus | None:
    """The corpus installed in this process, if any."""
    return _ACTIVE
