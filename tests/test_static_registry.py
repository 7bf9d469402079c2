"""The check registry is complete: docs, codes, queries and fixtures for every check."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest
import tree_sitter as ts

from boundary_audit.errors import QueryError
from boundary_audit.static import docs
from boundary_audit.static.checks import BY_CODE, CHECKS, OWNER
from boundary_audit.static.parsing import LANGUAGES, QUERY_DIALECT
from boundary_audit.static.queries import (
    bundle,
    compile_query,
    compile_text,
    count_patterns,
    query_text,
    validate_captures,
)
from boundary_audit.taxonomy import BoundaryClass
from tests.test_static_fixtures import FIXTURES, codes_in

CHECK_NAMES = tuple(c.name for c in CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.code)
def test_docstring_has_every_heading_in_order(check: type) -> None:
    doc = check.__doc__ or ""
    found = re.findall(r"^## (.+)$", doc, flags=re.M)
    assert found == list(docs.HEADINGS)
    assert check.summary() and check.summary().endswith(".")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.code)
def test_code_name_status_follow_the_conventions(check: type) -> None:
    assert re.fullmatch(r"BA[1-9]\d\d", check.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)+", check.name)
    assert check.status in ("preview", "stable", "deprecated")
    assert re.fullmatch(r"\d+\.\d+\.\d+", check.since)
    family = {
        BoundaryClass.SHELL_STRING: "1",
        BoundaryClass.NESTED_STRING: "1",
        BoundaryClass.SHELL_STDIN: "2",
        BoundaryClass.SHELL_SESSION: "2",
        BoundaryClass.TTY_KEYSTROKES: "2",
        BoundaryClass.ARGV_DIRECT: "3",
        BoundaryClass.SCRIPT_FILE: "3",
        BoundaryClass.REMOTE_STRING: "4",
        BoundaryClass.SERIALIZED: "5",
    }
    for cls in check.classes:
        assert check.code[2] == family[cls]
    if not check.classes:
        assert check.code.startswith("BA9")


def test_codes_and_names_are_unique_and_every_class_has_one_owner() -> None:
    assert len(BY_CODE) == len(CHECKS) == len({c.name for c in CHECKS})
    assert set(OWNER) == set(BoundaryClass)
    assert [c.code for c in CHECKS] == sorted(c.code for c in CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.code)
def test_every_check_has_queries_that_compile_for_each_language_of_their_dialect(
    check: type,
) -> None:
    dialects = [d for d in dict.fromkeys(QUERY_DIALECT.values()) if query_text(d, check.name)]
    assert dialects, f"{check.code} has no .scm file"
    for lang in LANGUAGES:
        if QUERY_DIALECT[lang] in dialects:
            query = compile_query(lang, check.name)
            assert query is not None
            assert query.pattern_count == count_patterns(
                query_text(QUERY_DIALECT[lang], check.name) or ""
            )


def test_no_query_file_without_a_registered_check() -> None:
    root = resources.files("boundary_audit.static").joinpath("queries")
    for dialect in root.iterdir():
        for scm in dialect.iterdir():
            assert scm.name.endswith(".scm")
            assert scm.name[:-4] in CHECK_NAMES, f"orphan query {dialect.name}/{scm.name}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bundle_compiles_and_maps_every_pattern_to_its_check(lang: str) -> None:
    b = bundle(lang, CHECK_NAMES)
    assert b.query is not None
    assert len(b.owners) == b.query.pattern_count
    assert set(b.owners) <= set(CHECK_NAMES)


def test_a_query_without_span_is_a_query_error() -> None:
    query = compile_text("python", "((identifier) @sink)", "bad.scm")
    with pytest.raises(QueryError, match=r"bad.scm: query has no @span capture"):
        validate_captures(query, "bad.scm")


def test_an_unknown_capture_role_is_a_query_error() -> None:
    query = compile_text("python", "((identifier) @span @target)", "bad.scm")
    with pytest.raises(QueryError, match=r"unknown capture role @target"):
        validate_captures(query, "bad.scm")


def test_a_query_that_does_not_compile_is_a_query_error() -> None:
    with pytest.raises(QueryError, match=r"^broken.scm: "):
        compile_text("python", "((no_such_node) @span)", "broken.scm")
    assert isinstance(ts.Query, type)


def test_counting_patterns_skips_comments_and_strings() -> None:
    text = '; a (comment)\n((string) @span (#match? @span "(x)"))\n[(a) (b)] @span\n'
    assert count_patterns(text) == 2


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.code)
def test_fixture_folder_has_a_positive_and_a_negative(check: type) -> None:
    folder = FIXTURES / check.code
    files = sorted(p for p in folder.iterdir() if p.is_file())
    positives = [p for p in files if p.name.startswith("positive_")]
    negatives = [p for p in files if p.name.startswith("negative_")]
    assert positives and negatives
    assert all(check.code in codes_in(p) for p in positives)
    assert all(check.code not in codes_in(p) for p in negatives)
    assert set(files) == set(positives) | set(negatives)


def test_docs_checks_md_regenerates_identically() -> None:
    path = Path(__file__).resolve().parent.parent / "docs" / "checks.md"
    assert path.read_text(encoding="utf-8") == docs.render()


def test_docs_check_mode_reports_a_stale_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert docs.main(["--check"]) == 1
    assert docs.main([]) == 0
    assert docs.main(["--check"]) == 0
    assert (tmp_path / "docs" / "checks.md").read_text(encoding="utf-8") == docs.render()


def test_guards_never_skip_a_file_the_guarded_query_would_match() -> None:
    from boundary_audit.static.analyze import GUARDED
    from boundary_audit.static.parsing import detect_language, parse
    from boundary_audit.static.queries import bundle as make_bundle

    assert {c.code for c in GUARDED} == {"BA501", "BA901"}
    checked = 0
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lang = detect_language(path.name, data[:256])
        assert lang is not None
        tree = parse(lang, data)
        for check in GUARDED:
            assert check.guard is not None
            if make_bundle(lang, (check.name,)).run(tree.root_node):
                checked += 1
                assert check.guard.search(data), f"{check.code} guard misses {path.name}"
    assert checked >= 10


def test_the_sink_prefilter_never_skips_a_file_with_a_sink_match() -> None:
    from boundary_audit.static.analyze import SINK_NAMES
    from boundary_audit.static.parsing import detect_language, parse
    from boundary_audit.static.prefilter import may_have_sinks
    from boundary_audit.static.queries import bundle as make_bundle

    roots = [FIXTURES, Path(__file__).resolve().parent.parent / "specimens"]
    matched = 0
    for path in sorted(p for r in roots for p in r.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lang = detect_language(path.name, data[:256])
        if lang is None:
            continue
        if make_bundle(lang, SINK_NAMES).run(parse(lang, data).root_node):
            matched += 1
            assert may_have_sinks(QUERY_DIALECT[lang], data), f"prefilter skips {path.name}"
    assert matched >= 60
    assert not may_have_sinks("python", b"def helper(items):\n    return sorted(items)\n")


def _catalogue_entries() -> list[tuple[str, str, dict[str, object]]]:
    from boundary_audit.static import catalogue

    return [
        (name, key, entry)
        for name in catalogue.TABLES
        if resources.files(catalogue).joinpath(f"{name}.toml").is_file()
        for key, found in catalogue.table(name).items()
        if isinstance(found, list)
        for entry in found
    ]


CATALOGUE = _catalogue_entries()
_SPELLING_KEYS = ("names", "calls", "constructors", "decorators", "class_decorators", "bases")
_SPELLING_KEYS += ("methods", "attributes", "traits", "fields", "types")
_SPELLING_KEYS += ("reads", "files", "loaders", "wraps")


def _spellings(entry: dict[str, object]) -> set[str]:
    """The last names of every callee, class, decorator... the entry matches."""
    found: list[str] = []
    for key in _SPELLING_KEYS:
        value = entry.get(key, [])
        found += [str(v) for v in value] if isinstance(value, list) else []
    for key in ("sinks", "wrappers", "builders"):
        value = entry.get(key, [])
        found += (
            [str(d["call"]) for d in value if isinstance(d, dict)]
            if isinstance(value, list)
            else []
        )
    return {re.split(r"\.|::|/|\(\)", s)[-1] for s in found} - {"*", ""}


def _entry_id(item: tuple[str, str, dict[str, object]]) -> str:
    name, key, entry = item
    label = entry.get("sdk") or entry.get("framework") or entry.get("name") or entry.get("kind")
    return f"{name}.{key}.{label or entry.get('handler')}.{entry.get('lang', '')}"


def test_every_catalogue_table_parses_and_every_entry_names_a_fixture() -> None:
    from boundary_audit.static import catalogue

    assert {name for name, _, _ in CATALOGUE} == set(catalogue.TABLES)
    assert len(CATALOGUE) >= 90
    assert all(isinstance(e.get("fixture"), str) for _, _, e in CATALOGUE)


@pytest.mark.parametrize("item", CATALOGUE, ids=_entry_id)
def test_every_catalogue_fixture_exists_and_the_fixture_test_asserts_it(
    item: tuple[str, str, dict[str, object]],
) -> None:
    """The fixture sits in a folder `test_fixture_folder_yields_exactly_the_marked_findings`
    scans, is a file of the entry's language that the default scan reads (a scope rule's
    fixture: one its own rule leaves out), has expectation markers and shows the entry."""
    from boundary_audit.static.parsing import detect_language
    from boundary_audit.static.scope import excluded_by
    from tests.test_static_fixtures import FOLDERS

    name, _, entry = item
    rel = str(entry["fixture"])
    path = FIXTURES / rel
    assert path.is_file(), f"missing fixture {rel}"
    folder, inside = rel.split("/", 1)
    assert folder in FOLDERS
    lang = detect_language(path.name, path.read_bytes()[:256])
    assert lang is not None
    if name == "scope":
        assert excluded_by(inside) == entry["kind"]
        return
    assert excluded_by(inside) is None
    assert entry["lang"] in (QUERY_DIALECT[lang], "any")
    assert codes_in(path), f"{rel} has no expectation marker"
    text = path.read_text(encoding="utf-8")
    shown = {s for s in _spellings(entry) if re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text)}
    assert shown, f"{rel} shows none of {sorted(_spellings(entry))}"


def test_every_forwarder_entry_is_loaded_with_its_callable_position() -> None:
    from boundary_audit.static import catalogue, forwarders

    entries = catalogue.entries("sinks", "forwarder")
    assert entries
    for e in entries:
        assert e["lang"] in set(QUERY_DIALECT.values())
        assert isinstance(e["fn"], int) and e["fn"] >= 0
        assert set(e) <= {"lang", "calls", "fn", "binds", "kwargs", "fixture"}
        for call in catalogue.strings(e, "calls"):
            found = forwarders.library_match(str(e["lang"]), f"x.{call}")
            assert found is not None and found.fn == e["fn"]
            assert found.binds == e.get("binds", False)
            assert found.kwargs == e.get("kwargs", True)
