"""Packaged tree-sitter queries: loading, validation, compilation once per process, running.

Each check ships `static/queries/<dialect>/<check-name>.scm` (dialect per `QUERY_DIALECT`).
Capture roles are fixed: `@span` (required: the whole match), `@sink` (the API or program),
`@arg` (the command-bearing argument), `@source`, `@sanitizer`; dotted refinements such as
`@arg.program` are allowed, and captures starting with `_` are predicate helpers. A query
without `@span` or with an unknown role raises `QueryError` (a packaging bug, exit 1).
All queries of one language are concatenated into one `QueryBundle` so a file is matched in a
single pass; pattern indices map each match back to its check. A bundle may also carry the
extractor's function query (owner `FUNCTIONS`, capture `@_fn`), so the pass that finds a
file's sinks also finds its functions: matching costs about one walk of the tree whatever
the patterns, and a second walk for the functions alone cost as much again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import tree_sitter as ts

from boundary_audit.errors import QueryError
from boundary_audit.static.parsing import QUERY_DIALECT, language
from boundary_audit.static.patterns import Need, pattern_need, split_patterns, wanted

ROLES = ("span", "sink", "arg", "source", "sanitizer")
"""Capture roles a query may use (before any dotted refinement)."""

Captures = dict[str, list[ts.Node]]

FUNCTIONS = "(functions)"
"""The owner of a bundle's function-query patterns (no check has this name)."""


def query_path(dialect: str, check_name: str) -> str:
    """Package-relative path of a check's query file, for messages."""
    return f"boundary_audit/static/queries/{dialect}/{check_name}.scm"


@cache
def query_text(dialect: str, check_name: str) -> str | None:
    """The text of a check's query for `dialect`, or None if the check has none there."""
    node = resources.files("boundary_audit.static").joinpath(
        "queries", dialect, f"{check_name}.scm"
    )
    if not node.is_file():
        return None
    return node.read_text(encoding="utf-8")


def validate_captures(query: ts.Query, where: str) -> None:
    """Raise QueryError unless `query` captures `@span` and uses only known roles."""
    names = [query.capture_name(i) for i in range(query.capture_count)]
    if "span" not in names:
        raise QueryError(f"{where}: query has no @span capture")
    for name in names:
        if name.startswith("_"):
            continue
        if name.split(".", 1)[0] not in ROLES:
            raise QueryError(f"{where}: unknown capture role @{name} (allowed: {', '.join(ROLES)})")


def compile_text(lang: str, text: str, where: str) -> ts.Query:
    """Compile `text` for `lang`, turning tree-sitter's errors into QueryError naming `where`."""
    try:
        return ts.Query(language(lang), text)
    except (ts.QueryError, ValueError) as exc:
        raise QueryError(f"{where}: {exc}") from exc


@cache
def compile_query(lang: str, check_name: str) -> ts.Query | None:
    """The compiled, validated query of `check_name` for `lang` (None if it has none)."""
    dialect = QUERY_DIALECT[lang]
    text = query_text(dialect, check_name)
    if text is None:
        return None
    where = query_path(dialect, check_name)
    query = compile_text(lang, text, where)
    validate_captures(query, where)
    return query


@dataclass(frozen=True)
class QueryBundle:
    """All checks' queries for one language, compiled as one query."""

    lang: str
    query: ts.Query | None
    owners: tuple[str, ...]
    """owners[pattern_index] is the check name that pattern belongs to."""

    def run(self, root: ts.Node) -> dict[str, list[Captures]]:
        """Matches per check name, in document order of the match start."""
        found: dict[str, list[Captures]] = {}
        if self.query is None:
            return found
        cursor = ts.QueryCursor(self.query)
        for index, captures in cursor.matches(root):
            found.setdefault(self.owners[index], []).append(captures)
        return found


def count_patterns(text: str) -> int:
    """Number of top-level patterns in a query source (comments and strings skipped)."""
    return len(split_patterns(text))


def _has_capture(query: ts.Query, pattern: int, capture: int) -> bool:
    try:
        query.capture_quantifier(pattern, capture)
    except SystemError:  # the binding raises for the "zero" quantifier: capture absent
        return False
    return True


@dataclass(frozen=True)
class Patterns:
    """The patterns of the listed checks' queries for one language (and of a function
    query), one by one, with what text each needs to match (`static.patterns`)."""

    texts: tuple[str, ...]
    owners: tuple[str, ...]
    needs: tuple[Need, ...]

    def wanted(self, data: bytes) -> frozenset[int]:
        """The indices of the patterns that may match in a file with the bytes `data`."""
        return wanted(self.needs, data)


@cache
def patterns(lang: str, check_names: Sequence[str], functions: str = "") -> Patterns:
    """The patterns `bundle(lang, check_names, functions)` compiles, in its order (cached).

    A function query's patterns are always needed: they are no check's."""
    dialect = QUERY_DIALECT[lang]
    texts: list[str] = []
    owners: list[str] = []
    needs: list[Need] = []
    for name in check_names:
        text = query_text(dialect, name)
        if text is None:
            continue
        for pattern in split_patterns(text):
            texts.append(pattern)
            owners.append(name)
            try:
                needs.append(pattern_need(pattern))
            except ValueError as exc:
                raise QueryError(f"{query_path(dialect, name)}: {exc}") from exc
    if functions:
        for pattern in split_patterns(functions.replace("@fn", "@_fn")):
            texts.append(pattern)
            owners.append(FUNCTIONS)
            needs.append(())
    return Patterns(tuple(texts), tuple(owners), tuple(needs))


@cache
def bundle(
    lang: str,
    check_names: Sequence[str],
    functions: str = "",
    keep: frozenset[int] | None = None,
) -> QueryBundle:
    """One compiled query holding every listed check's patterns for `lang` (cached), and
    with `functions` (an extractor's `FUNCTION_QUERY`, capturing `@fn`) its patterns, owned
    by `FUNCTIONS` and capturing `@_fn`; with `keep`, only those of `patterns(...)`'s
    patterns (the rest cannot match in the files it was chosen for).

    Each file is counted, not compiled, on its own; the combined query is compiled once and
    every check's pattern is checked for a `@span` capture (QueryError naming the file
    otherwise).
    """
    dialect = QUERY_DIALECT[lang]
    every = patterns(lang, check_names, functions)
    chosen = range(len(every.texts)) if keep is None else sorted(keep)
    texts = [every.texts[i] for i in chosen]
    owners = [every.owners[i] for i in chosen]
    if not texts:
        return QueryBundle(lang, None, ())
    combined = compile_text(lang, "\n".join(texts), f"queries for {lang}")
    if combined.pattern_count != len(owners):
        raise QueryError(
            f"queries for {lang}: counted {len(owners)} patterns, compiled {combined.pattern_count}"
        )
    names = [combined.capture_name(i) for i in range(combined.capture_count)]
    span = names.index("span") if "span" in names else -1
    for index, owner in enumerate(owners):
        if owner != FUNCTIONS and (span < 0 or not _has_capture(combined, index, span)):
            raise QueryError(f"{query_path(dialect, owner)}: a pattern has no @span capture")
    validate_captures(combined, f"queries for {lang}")
    return QueryBundle(lang, combined, tuple(owners))
