"""One file, end to end: parse, match every check's query, evaluate and classify the sinks.

`analyze_file` never raises for bad input: an undecodable or pathological file becomes a
`Skipped` record. Files without any site stop after the query pass, so the common case costs
little more than parsing. Sinks are evaluated by the dataflow engine, classified, turned
into findings under the owning check's code, then inline suppressions are applied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter as ts

from boundary_audit.finding import Finding, Skipped
from boundary_audit.static import apis, crossfile, inputs, suppress
from boundary_audit.static import findings as F
from boundary_audit.static.checks import BY_CODE, CHECKS
from boundary_audit.static.checks.base import CommentSite, SinkSite, Site, TemplateSite, WriteSite
from boundary_audit.static.dataflow import Engine
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.parsing import QUERY_DIALECT, TooDeep, parse, utf8_safe
from boundary_audit.static.path import keep_sites
from boundary_audit.static.prefilter import may_have_sinks
from boundary_audit.static.queries import FUNCTIONS, QueryBundle, bundle, patterns
from boundary_audit.static.sinks import FileContext, caller_findings, evaluate_sink
from boundary_audit.static.templates import serialized_templates

CHECK_NAMES = tuple(c.name for c in CHECKS)
SINK_NAMES = tuple(c.name for c in CHECKS if c.phase == "sink")
AUX_NAMES = tuple(c.name for c in CHECKS if c.phase == "aux")
GUARDED = tuple(c for c in CHECKS if c.phase == "guarded")
_SINK_PASS = SINK_NAMES + AUX_NAMES
"""The checks of a file's first query pass (with the extractor's function query)."""
_BY_NAME = {c.name: c for c in CHECKS}


@dataclass
class FileResult:
    """What one file contributed."""

    findings: list[Finding] = field(default_factory=list)
    skipped: Skipped | None = None
    sites: int = 0


def collect_sites(lang: str, root: ts.Node, data: bytes | None = None) -> list[Site]:
    """Every site of every check in the tree.

    One query pass finds the sinks; only a file with sinks gets the sites of the facts they
    need (wrapping literals, file writes); guarded checks run only where their bytes occur.
    Without `data`, every check runs.
    """
    return _collect(lang, root, data).sites


@dataclass
class _Pass:
    """What the query passes over one file found."""

    sites: list[Site]
    aux: list[Site] | None = None
    """The auxiliary checks' sites, where the sink pass matched them too (kept in `sites`
    only if it found a sink)."""
    functions: list[ts.Node] | None = None
    """The nodes of the extractor's function query, where the sink pass matched it too."""


def _collect(lang: str, root: ts.Node, data: bytes | None) -> _Pass:
    found = _Pass([])
    if data is None or may_have_sinks(QUERY_DIALECT[lang], data):
        # NOTE(h2): one walk of the tree costs about the same whatever the patterns, so the
        # sink pass matches the auxiliary checks and the functions too (`_SINK_PASS`), and
        # keeps what they found for the file's extractor and for the sinks of its `apis`.
        sites: dict[str, list[Site]] = {}
        for name, matches in _sink_bundle(lang, data).run(root).items():
            if name == FUNCTIONS:
                found.functions = [caps["_fn"][0] for caps in matches]
                continue
            check = _BY_NAME[name]
            out = sites.setdefault(check.phase, [])
            for caps in matches:
                out.extend(check.sites(lang, caps))
        found.sites = sites.get("sink", [])
        found.aux = sites.get("aux", [])
    if data is None or any(isinstance(s, SinkSite) for s in found.sites):
        found.sites += found.aux if found.aux is not None else _run(lang, AUX_NAMES, root)
    for check in GUARDED:
        if data is None or check.guard is None or check.guard.search(data):
            found.sites += _run(lang, (check.name,), root)
    return found


PLAN_BYTES = 1 << 20
"""Text with possible sinks past which `plan` stops and chooses every pattern."""
_SINK_KEEP: dict[str, frozenset[int] | None] = {}
"""Per language, the sink pass's patterns this process uses (`queries.patterns` indices;
None: all of them), set by `plan` or by the first file without one."""


def _sink_bundle(lang: str, data: bytes | None) -> QueryBundle:
    """The sink pass's bundle for a file with the bytes `data` (None: any file, so all
    patterns): the one this process has (`plan`, or the last one made) if it holds every
    pattern the file may match; else one of those patterns for the first file and one of all
    of them after it (so at most two per process and language)."""
    fn_query = extractor_for(lang).FUNCTION_QUERY
    if data is None:
        return bundle(lang, _SINK_PASS, fn_query)
    if lang in _SINK_KEEP:
        have = _SINK_KEEP[lang]
        if have is None or patterns(lang, _SINK_PASS, fn_query).wanted(data) <= have:
            return bundle(lang, _SINK_PASS, fn_query, have)
        keep = None
    else:
        keep = patterns(lang, _SINK_PASS, fn_query).wanted(data)
    _SINK_KEEP[lang] = keep
    return bundle(lang, _SINK_PASS, fn_query, keep)


def plan(lang: str, texts: Iterable[bytes]) -> None:
    """Choose the sink pass's patterns for a scan of `texts` of `lang` (compiled on first
    use): those some of `texts` may match, or all of them once more than `PLAN_BYTES` of
    text may have sinks (a big tree soon needs them all, and reading it for each pattern's
    strings would cost more than compiling)."""
    fn_query = extractor_for(lang).FUNCTION_QUERY
    every = patterns(lang, _SINK_PASS, fn_query)
    dialect = QUERY_DIALECT[lang]
    union: set[int] = set()
    size = 0
    for data in texts:
        if not may_have_sinks(dialect, data):
            continue
        size += len(data)
        if size > PLAN_BYTES:
            _SINK_KEEP[lang] = None
            return
        union |= every.wanted(data)
    _SINK_KEEP[lang] = None if len(union) == len(every.texts) else frozenset(union)


def _run(lang: str, names: tuple[str, ...], root: ts.Node) -> list[Site]:
    sites: list[Site] = []
    for name, matches in bundle(lang, names).run(root).items():
        check = _BY_NAME[name]
        for caps in matches:
            sites.extend(check.sites(lang, caps))
    return sites


def bundles_for(lang: str, texts: Iterable[bytes] | None = None) -> None:
    """Compile the query bundles `collect_sites` will ask for on some of `texts` of `lang`
    (every bundle it may use without `texts`), before forking workers that inherit them.

    The byte prefilters pick them: the sink pass's bundle (with the auxiliary checks and
    the function query) if some text may have sinks, a guarded check's if its guard matches
    some text. A bundle missed here (the auxiliary one alone, for a file whose only sites
    are the `apis` ones) is compiled where it is first used."""
    fn_query = extractor_for(lang).FUNCTION_QUERY
    if texts is None:
        _SINK_KEEP[lang] = None
        wanted = [_SINK_PASS, AUX_NAMES, *((c.name,) for c in GUARDED)]
    else:
        texts = list(texts)
        dialect = QUERY_DIALECT[lang]
        sinks, guarded = False, [c for c in GUARDED if c.guard is None]
        rest = [c for c in GUARDED if c.guard is not None]
        for data in texts:
            sinks = sinks or may_have_sinks(dialect, data)
            found = [c for c in rest if c.guard is not None and c.guard.search(data)]
            guarded += found
            rest = [c for c in rest if c not in found]
            if sinks and not rest:
                break
        wanted = [(c.name,) for c in GUARDED if c in guarded]
        if sinks:
            plan(lang, texts)
            bundle(lang, _SINK_PASS, fn_query, _SINK_KEEP[lang])
    for names in wanted:
        bundle(lang, names, fn_query if names is _SINK_PASS else "")


def warm(lang: str, texts: list[bytes]) -> None:
    """Load, before forking workers that inherit it, what analysing some of `texts` of `lang`
    loads on first use, so that the workers do not each load it: the query bundles
    (`bundles_for`); where some text may have catalogue sites or sinks, the extractor (its
    module and function query) and the catalogue's tables of the dialect; where some text
    may have sinks, the modules the dataflow engine imports when it is first built."""
    from boundary_audit.static.extract.base import warm as warm_extractor

    bundles_for(lang, texts)
    dialect = QUERY_DIALECT[lang]
    sinks = any(may_have_sinks(dialect, data) for data in texts)
    if sinks or any(apis.may_have_sites(dialect, data) for data in texts):
        warm_extractor(lang)
        apis.warm(dialect)
    if sinks:
        import boundary_audit.static.calls
        import boundary_audit.static.entries  # noqa: F401

        inputs.tables(dialect)


def analyze_file(
    path: str,
    data: bytes,
    lang: str,
    *,
    commit: str | None,
    include_constant: bool = False,
    no_ignores: bool = False,
) -> FileResult:
    """Findings (or a skip) for one file of language `lang` (other files via the corpus)."""
    try:
        return _analyze(path, data, lang, commit, include_constant, no_ignores, crossfile.active())
    except TooDeep as exc:
        return FileResult(skipped=Skipped(path, f"too deeply nested: {exc}"))
    except RecursionError:
        return FileResult(skipped=Skipped(path, "too deeply nested: recursion limit"))


def _analyze(
    path: str,
    data: bytes,
    lang: str,
    commit: str | None,
    include_constant: bool,
    no_ignores: bool,
    corpus: crossfile.Corpus | None,
) -> FileResult:
    # The corpus's parse of this file when it holds this file (the cross-file pass's too).
    shared = corpus if corpus is not None and corpus.files.get(path) == (lang, data) else None
    if corpus is not None:
        corpus.begin_file()
    safe = utf8_safe(data)
    catalogue = apis.may_have_sites(QUERY_DIALECT[lang], safe)
    if not catalogue and not _may_have_query_sites(lang, safe):
        return FileResult()  # `may_have_sites`: the file needs no tree
    tree = shared.tree(path, lang, data) if shared is not None else None
    data = safe
    if tree is None:
        tree = parse(lang, data)
    passed = _collect(lang, tree.root_node, data)
    first = tuple(passed.sites)
    sites = passed.sites
    sinks = [s for s in sites if isinstance(s, SinkSite)]
    json_sites = [s for s in sites if isinstance(s, TemplateSite) and s.check == "BA501"]
    ex: Extractor | None = None
    if catalogue:
        ex = _extractor(path, data, lang, tree, shared, passed.functions)
        extra = apis.sites(ex)
        if extra and not sinks:
            sites += passed.aux if passed.aux is not None else _run(lang, AUX_NAMES, tree.root_node)
        sinks += extra
    if not sinks and not json_sites:
        return FileResult()
    if ex is None:
        ex = _extractor(path, data, lang, tree, shared, passed.functions)
    if shared is not None:
        keep_sites(shared, path, ex, first)
    engine = Engine(ex, corpus)
    ctx = FileContext(
        engine,
        commit,
        wraps=[s.span for s in sites if isinstance(s, TemplateSite) and s.check == "BA102"],
        writes=[s for s in sites if isinstance(s, WriteSite)],
    )
    results = []
    for site in order_sinks(sinks):
        r = evaluate_sink(site, ctx)
        if r is not None:
            results.append(r)
            results.extend(caller_findings(site, ctx))
    results.extend(serialized_templates(json_sites, ctx))
    found = dedupe([f for f, fixed in results if include_constant or not fixed])
    comments = [s for s in sites if isinstance(s, CommentSite)]
    ignores = [
        ig
        for s in comments
        if (ig := suppress.parse_comment(ex.text(s.span), F.node_location(path, s.span, commit)))
    ]
    found = suppress.apply(found, ignores, lang, no_ignores)
    return FileResult(sorted(found, key=lambda f: f.sort_key), None, len(sites))


def may_have_sites(lang: str, data: bytes) -> bool:
    """False only if no check can find a site in `data` (its text made UTF-8-safe), so that
    the file needs no tree: the byte prefilters of the sink pass (`may_have_sinks`), of the
    guarded checks (their `guard`) and of the catalogue (`apis.may_have_sites`) all say
    no. On AutoGen@027ecf0 that is 217 of 698 files, whose parse `_collect` never used."""
    return apis.may_have_sites(QUERY_DIALECT[lang], data) or _may_have_query_sites(lang, data)


def _may_have_query_sites(lang: str, data: bytes) -> bool:
    """False only if neither the sink pass nor a guarded check can match in `data`."""
    return may_have_sinks(QUERY_DIALECT[lang], data) or any(
        c.guard is None or c.guard.search(data) for c in GUARDED
    )


def _extractor(
    path: str,
    data: bytes,
    lang: str,
    tree: ts.Tree,
    corpus: crossfile.Corpus | None,
    functions: list[ts.Node] | None,
) -> Extractor:
    """The file's extractor: the corpus's (shared with the cross-file pass) when `corpus`
    holds this very file, else a new one (which raises what the corpus's build swallowed),
    given the `functions` the query pass found in `tree`."""
    ex = corpus.main_extractor(path, tree) if corpus is not None else None
    if ex is None:
        ex = extractor_for(lang)(lang, path, data, tree)
    if functions is not None:
        ex.found_functions(functions)
    return ex


def order_sinks(sinks: list[SinkSite]) -> list[SinkSite]:
    """Unique sinks, calls before bare argv literals (so literals a call consumes are known).
    A forwarder call read as the sink it forwards to (`asyncio.to_thread(subprocess.run, cmd,
    shell=True)`) replaces the plain reading of the same call by a query."""
    seen: set[tuple[int, int, str, int, int]] = set()
    forwarded = {(s.span.start_byte, s.span.end_byte, s.kind) for s in sinks if s.skip}
    by_sdk = {
        (s.span.start_byte, s.span.end_byte)
        for s in sinks
        if s.check.startswith("catalogue:") and s.kind in _REMOTE_KINDS
    }
    unique = []
    for s in sinks:
        if not s.skip and (s.span.start_byte, s.span.end_byte, s.kind) in forwarded:
            continue
        if (
            not s.check.startswith("catalogue:")
            and s.kind in _REMOTE_KINDS
            and (s.span.start_byte, s.span.end_byte) in by_sdk
        ):
            # `sandbox.process.exec({command: …})`, `sandbox.exec(argv)`: the query reads any
            # sandbox call's argument as one command string; the SDK entry of the same call
            # knows what it takes (a key of an options record, an argv) and reads that
            continue
        if s.key not in seen:
            seen.add(s.key)
            unique.append(s)
    return sorted(
        unique,
        key=lambda s: (s.kind == "argv" and s.span.type in _LIST_TYPES, s.span.start_byte, s.kind),
    )


_REMOTE_KINDS = frozenset({"remote", "remote-argv", "docker"})
"""Site kinds of a command run in a container, sandbox or remote host."""

_LIST_TYPES = frozenset(
    {"list", "tuple", "array", "array_expression", "macro_invocation", "composite_literal"}
)


def dedupe(found: list[Finding]) -> list[Finding]:
    """One finding per (primary span, class): the most severe, model-controlled one."""
    best: dict[tuple[str, int, int, str], Finding] = {}
    for f in found:
        p = f.primary
        key = (p.path, p.start_byte, p.end_byte, f.boundary_class.value)
        cur = best.get(key)
        if cur is None or (f.model_controlled, f.severity.rank) > (
            cur.model_controlled,
            cur.severity.rank,
        ):
            best[key] = f
    return list(best.values())


__all__ = ["BY_CODE", "FileResult", "analyze_file", "collect_sites"]
