"""A file's first query pass finds its sinks, its auxiliary sites and its functions in one walk
of the tree, and hands each on exactly as the separate passes found them."""

from __future__ import annotations

import pytest
import tree_sitter as ts

from boundary_audit.static import analyze
from boundary_audit.static.checks.base import SinkSite
from boundary_audit.static.extract import base, extractor_for
from boundary_audit.static.parsing import parse

SOURCES = {
    "python": (
        b"import subprocess\n\n"
        b"class Tool:\n"
        b"    def run(self, cmd):\n"
        b"        def inner(x):\n"
        b"            return x\n"
        b"        subprocess.run(f\"bash -c '{cmd}'\", shell=True)\n\n"
        b"def helper(y):\n"
        b"    return lambda z: z\n"
    ),
    "typescript": (
        b"import { exec } from 'child_process';\n"
        b"export function run(cmd: string) {\n"
        b"  const inner = (x: string) => x;\n"
        b"  exec(`bash -c '${cmd}'`);\n"
        b"}\n"
        b"class Tool { call(a: string) { return function (b: string) { return b; }; } }\n"
    ),
    "go": (
        b'package main\nimport "os/exec"\n'
        b'func run(cmd string) { exec.Command("sh", "-c", cmd).Run() }\n'
        b"func (t *Tool) Call(a string) string { return a }\n"
    ),
    "rust": (
        b"use std::process::Command;\n"
        b'fn run(cmd: &str) { Command::new("sh").arg("-c").arg(cmd).spawn(); }\n'
        b"impl Tool { fn call(&self) {} }\n"
    ),
}


def _own_query(lang: str, tree: ts.Tree) -> list[tuple[int, int, str]]:
    query = ts.Query(tree.language, extractor_for(lang).FUNCTION_QUERY)
    nodes = [caps["fn"][0] for _, caps in ts.QueryCursor(query).matches(tree.root_node)]
    return sorted((n.start_byte, n.end_byte, n.type) for n in nodes)


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_the_sink_pass_finds_the_functions_the_function_query_finds(lang: str) -> None:
    data = SOURCES[lang]
    tree = parse(lang, data)
    found = analyze._collect(lang, tree.root_node, data)
    assert found.functions is not None
    got = sorted((n.start_byte, n.end_byte, n.type) for n in found.functions)
    assert got == _own_query(lang, tree)
    assert len(got) >= 2
    assert any(isinstance(s, SinkSite) for s in found.sites)


def test_an_extractor_given_the_pass_s_functions_runs_no_query_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = SOURCES["python"]
    tree = parse("python", data)
    found = analyze._collect("python", tree.root_node, data)
    ex = extractor_for("python")("python", "t.py", data, tree)
    assert found.functions is not None
    ex.found_functions(found.functions)

    def no_query(lang: str, text: str) -> ts.Query:
        raise AssertionError("the function query ran again")

    monkeypatch.setattr(base, "_internal_query", no_query)
    assert [f.name for f in ex.all_functions()] == ["run", "inner", "helper"]


def test_auxiliary_sites_are_kept_only_beside_a_sink() -> None:
    # `subprocess` passes the byte prefilter, so the sink pass runs; no call is a sink, so
    # the `bash -c` literal it matched (an auxiliary BA102 site) is kept aside, not reported
    data = b"import subprocess\nTEMPLATE = \"bash -c '{cmd}'\"\n"
    tree = parse("python", data)
    found = analyze._collect("python", tree.root_node, data)
    assert found.sites == []
    assert found.aux is not None
    assert [(s.check, s.span.start_point.row) for s in found.aux] == [("BA102", 1)]
    # the same literal beside a sink is one of the file's sites
    data += b"subprocess.run(TEMPLATE.format(cmd=x), shell=True)\n"
    tree = parse("python", data)
    sites = analyze.collect_sites("python", tree.root_node, data)
    assert ("BA102", 1) in [(s.check, s.span.start_point.row) for s in sites]


def test_a_file_s_sinks_are_matched_once_per_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # the path derivation re-reads the sink of each finding: from what the main pass kept
    # (`path.keep_sites`), not from a second query pass over the file
    from dataclasses import dataclass

    from boundary_audit.static.engine import ScanOptions, scan_files

    @dataclass(frozen=True)
    class File:
        path: str
        data: bytes
        skipped: str | None = None

    walked: list[int] = []
    collect = analyze._collect

    def counting(lang: str, root: ts.Node, data: bytes | None) -> analyze._Pass:
        walked.append(root.end_byte)
        return collect(lang, root, data)

    monkeypatch.setattr(analyze, "_collect", counting)
    data = SOURCES["python"]
    result = scan_files([File("t.py", data)], commit=None, options=ScanOptions(jobs=1))
    assert [(f.primary.start_line, f.boundary_class.value) for f in result.findings] == [
        (7, "nested-string")
    ]
    assert walked == [len(data)]
