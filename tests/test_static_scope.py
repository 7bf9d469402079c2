"""A reviewer's scope: tests, docs, examples, benchmarks and vendored code are left out.

`static/scope.py` decides by path (`catalogue/scope.toml`); the engine counts what it left
out and does not analyse it; `--include-tests` scans everything; the summary line, the JSON
summary, the terminal and markdown headers say how many files scope left out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.static import catalogue
from boundary_audit.static.engine import ScanOptions, scan_path
from boundary_audit.static.scope import excluded_by, in_scope, rules
from tests.support.gitrepos import make_repo
from tests.test_static_fixtures import FIXTURES, observed

ROOT = FIXTURES / "scope"

IN_SCOPE = {
    ("BA101", "agent.py", 11, "shell-string", False, "name", False),
    ("BA101", "agent.py", 16, "shell-string", True, "traced", False),
}
"""What a default scan of the fixture reports: only the harness file."""

LEFT_OUT = {
    ("BA101", "assets/shell.min.js", 1, "shell-string", False, "name", False),
    ("BA101", "benchmarks/runner.py", 8, "shell-string", True, "traced", False),
    ("BA101", "docs/run.py", 4, "shell-string", False, None, False),
    ("BA101", "examples/bot.ts", 7, "shell-string", True, "traced", False),
    ("BA101", "pkg/exec_test.go", 10, "shell-string", False, None, False),
    ("BA101", "tests/test_agent.py", 10, "shell-string", True, "traced", False),
    ("BA101", "vendor/lib.go", 6, "shell-string", False, "name", False),
    ("BA101", "web/app.spec.ts", 4, "shell-string", False, "name", False),
}
"""What `--include-tests` adds: one sink in each of the 8 left-out source files."""


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("tests/test_agent.py", "tests"),
        ("packages/core/__tests__/run.ts", "tests"),
        ("src/agent/testing/fake.py", "tests"),
        ("pkg/runner/exec_test.go", "tests"),
        ("src/app.spec.ts", "tests"),
        ("lib/conftest.py", "tests"),
        ("src/test_shell.py", "tests"),
        ("crates/core/src/shell_tests.rs", "tests"),
        ("docs/run.py", "docs"),
        ("website/src/run.ts", "docs"),
        ("examples/bot.ts", "examples"),
        ("python/samples/agent/main.py", "examples"),
        ("cookbook/shell.py", "examples"),
        ("benchmarks/runner.py", "benchmarks"),
        ("src/google/adk/evaluation/run.py", "benchmarks"),
        ("vendor/lib.go", "vendored"),
        ("web/node_modules/shelljs/shell.js", "vendored"),
        ("static/jquery.min.js", "vendored"),
        # in scope: names that only contain a scope word, files named like a directory
        ("agent.py", None),
        ("src/contest.py", None),
        ("src/attest/run.py", None),
        ("src/docs.py", None),
        ("src/testament/main.go", None),
        ("src/tools/examples_tool.py", None),
        ("pkg/latest.go", None),
        ("src/app.ts", None),
        ("Tests/run.py", None),
    ],
)
def test_which_paths_scope_leaves_out(path: str, kind: str | None) -> None:
    assert excluded_by(path) == kind
    assert in_scope(path) is (kind is None)


def test_every_rule_names_a_fixture_it_leaves_out() -> None:
    kinds = [r.kind for r in rules()]
    assert kinds == ["tests", "docs", "examples", "benchmarks", "vendored"]
    for entry in catalogue.entries("scope", "rule"):
        fixture = str(entry["fixture"])
        assert (FIXTURES / fixture).is_file(), fixture
        rel = fixture.removeprefix("scope/")
        assert excluded_by(rel) == entry["kind"]
        assert any(e[1] == rel for e in LEFT_OUT), rel


def test_a_default_scan_counts_and_does_not_analyse_the_left_out_files() -> None:
    result = scan_path(ROOT, options=ScanOptions(jobs=1))
    assert observed(result.findings) == IN_SCOPE
    assert (result.files_scanned, result.out_of_scope) == (1, 8)
    assert result.languages == {"python": 1}
    assert result.skipped == ()


def test_without_scope_every_file_is_scanned() -> None:
    result = scan_path(ROOT, options=ScanOptions(jobs=1, scope=False))
    assert observed(result.findings) == IN_SCOPE | LEFT_OUT
    assert (result.files_scanned, result.out_of_scope) == (9, 0)
    assert result.languages == {"go": 2, "javascript": 1, "python": 4, "typescript": 2}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    files: dict[str | bytes, bytes] = {
        p.relative_to(ROOT).as_posix(): p.read_bytes() for p in ROOT.rglob("*") if p.is_file()
    }
    files["docs/README.md"] = b"# how to run\n"
    path = tmp_path_factory.mktemp("scope") / "harness"
    return path, make_repo(path, files)


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = cli.main(["scan", "--no-probe", "-j", "1", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_cli_leaves_them_out_and_says_how_many(
    repo: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, sha = repo
    rc, out, err = _scan(capsys, str(path), "--format", "json")
    assert rc == ExitCode.OK
    # docs/README.md is not source: it is neither scanned nor counted
    assert err == (
        f"scanned {path}@{sha}: 2 findings (0 suppressed), 0 files skipped, "
        "8 files left out by scope (--include-tests)\n"
    )
    report = json.loads(out)
    assert report["summary"]["files_out_of_scope"] == 8
    assert report["summary"]["files_scanned"] == 1
    assert [(f["path"], f["line"]) for f in report["findings"]] == [
        ("agent.py", 11),
        ("agent.py", 16),
    ]
    assert "--include-tests" not in report["command"]
    _, terminal, _ = _scan(capsys, str(path))
    assert "1 file scanned (python 1), 8 left out by scope" in terminal
    _, markdown, _ = _scan(capsys, str(path), "--format", "markdown")
    assert "- Files scanned: 1 (python 1); skipped: 0; left out by scope: 8\n" in markdown


def test_include_tests_brings_them_back(
    repo: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, sha = repo
    rc, out, err = _scan(capsys, str(path), "--format", "json", "--include-tests")
    assert rc == ExitCode.OK
    assert err == f"scanned {path}@{sha}: 10 findings (0 suppressed), 0 files skipped\n"
    report = json.loads(out)
    assert report["summary"]["files_out_of_scope"] == 0
    assert report["summary"]["files_scanned"] == 9
    assert sorted((f["path"], f["line"]) for f in report["findings"]) == sorted(
        (e[1], e[2]) for e in IN_SCOPE | LEFT_OUT
    )
    assert report["command"].endswith("--format json --include-tests --no-probe")
    _, markdown, _ = _scan(capsys, str(path), "--format", "markdown", "--include-tests")
    assert "- Files scanned: 9 (go 2, javascript 1, python 4, typescript 2); skipped: 0\n" in (
        markdown
    )


def test_the_environment_alias(
    repo: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = repo
    monkeypatch.setenv("BOUNDARY_AUDIT_INCLUDE_TESTS", "1")
    rc, out, _ = _scan(capsys, str(path), "--format", "json")
    assert rc == ExitCode.OK
    assert json.loads(out)["summary"]["files_scanned"] == 9
