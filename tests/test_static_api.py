"""The public scan API: options, skips, bad input, determinism, and the finding's contents."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boundary_audit.errors import ScanError
from boundary_audit.finding import Skipped, Suppression
from boundary_audit.static import ScanOptions, ScanResult, engine, scan_files, scan_path
from boundary_audit.static.parsing import detect_language, may_be_source
from boundary_audit.taxonomy import BoundaryClass, Confidence, Contract, Severity

SHA = "1234567890abcdef1234567890abcdef12345678"
ONE = ScanOptions(jobs=1)

TOOL = b"""import json
import subprocess


def run(call):
    cmd = json.loads(call.function.arguments)["command"]
    subprocess.run(["bash", "-lc", cmd])
"""


@dataclass(frozen=True)
class SourceFile:
    path: str
    data: bytes | None
    skipped: str | None = None


@pytest.mark.parametrize(
    ("path", "head", "lang"),
    [
        ("a/b.py", b"", "python"),
        ("x.pyi", b"", "python"),
        ("x.mjs", b"", "javascript"),
        ("x.cjs", b"", "javascript"),
        ("x.jsx", b"", "javascript"),
        ("x.mts", b"", "typescript"),
        ("x.tsx", b"", "tsx"),
        ("x.rs", b"", "rust"),
        ("x.go", b"", "go"),
        ("x.bash", b"", "shell"),
        ("bin/run", b"#!/usr/bin/env python3\n", "python"),
        ("bin/run", b"#!/bin/bash -e\n", "shell"),
        ("bin/run", b"#!/usr/bin/env -S node --no-warnings\n", "javascript"),
        ("bin/run", b"echo hi\n", None),
        ("README.md", b"", None),
        ("x.txt", b"#!/bin/sh\n", None),
    ],
)
def test_language_detection_by_extension_and_shebang(
    path: str, head: bytes, lang: str | None
) -> None:
    assert detect_language(path, head) == lang


@pytest.mark.parametrize(
    ("path", "wanted"),
    [
        ("a/b.py", True),
        ("x.TSX", True),
        ("bin/run", True),
        (".bashrc", True),  # a leading dot is no extension
        ("configure.in", True),
        ("run.sh.tmpl", True),
        ("README.md", False),
        ("logo.png", False),
        ("x.txt", False),
        ("archive.tar.gz", False),
    ],
)
def test_may_be_source_rejects_only_names_no_head_can_make_source(path: str, wanted: bool) -> None:
    assert may_be_source(path) is wanted
    heads = [b"", b"#!/bin/sh\n", b"#!/usr/bin/env python3\n", b"#!/usr/bin/env node\n"]
    if not wanted:
        assert all(detect_language(path, head) is None for head in heads)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "src", ".x", "b.c", "", "."]), max_size=3),
    st.text(alphabet="abcpyjstxrgoshinmlTPY.", max_size=8),
    st.sampled_from(
        [b"", b"#!/bin/sh\n", b"#!/usr/bin/env python3\n", b"#!/usr/bin/env -S node\n"]
    ),
)
def test_every_file_detect_language_scans_is_one_may_be_source_wants(
    dirs: list[str], name: str, head: bytes
) -> None:
    path = "/".join([*dirs, name])
    if detect_language(path, head) is not None:
        assert may_be_source(path)


def test_a_tool_call_command_in_bash_lc_is_one_model_controlled_shell_string() -> None:
    result = scan_files([SourceFile("agent/tool.py", TOOL)], commit=SHA, options=ONE)
    assert result.files_scanned == 1 and result.languages == {"python": 1} and result.skipped == ()
    (f,) = result.findings
    assert (f.code, f.name, f.boundary_class, f.parse_layers) == (
        "BA101",
        "shell-string-sink",
        BoundaryClass.SHELL_STRING,
        1,
    )
    assert (f.contract, f.confidence, f.severity) == (
        Contract.NATIVE,
        Confidence.MEDIUM,
        Severity.MEDIUM,
    )
    assert f.model_controlled and f.sanitizer is None and f.sink == "subprocess.run"
    assert f.primary.anchor() == "agent/tool.py:7@1234567"
    assert (f.primary.start_col, f.primary.end_col) == (4, 40)
    assert (
        TOOL[f.primary.start_byte : f.primary.end_byte] == b'subprocess.run(["bash", "-lc", cmd])'
    )
    assert [(r.start_line, r.annotation) for r in f.related] == [
        (6, "model output enters: call.function.arguments")
    ]
    assert f.message == (
        "Model output reaches a shell that parses it as a command string via "
        "`subprocess.run` (bash -lc); 1 shell parse before execve."
    )


def test_skips_are_records_not_errors() -> None:
    files = [
        SourceFile("link.py", None, "symlink"),
        SourceFile("gone.py", None),
        SourceFile("big.py", b"x = 1\n" * 40),
        SourceFile("blob.py", b"\x00\x01binary"),
        SourceFile("notes.md", b"# not scanned"),
        SourceFile("ok.py", b"print('hi')\n"),
    ]
    result = scan_files(files, commit=None, options=ScanOptions(jobs=1, max_file_bytes=100))
    assert result.skipped == (
        Skipped("big.py", "too large (240 bytes > 100)"),
        Skipped("blob.py", "binary"),
        Skipped("gone.py", "no content"),
        Skipped("link.py", "symlink"),
    )
    assert result.files_scanned == 1 and result.languages == {"python": 1}
    assert result.findings == ()


def test_bad_content_is_scanned_as_far_as_it_parses() -> None:
    broken = b"def (:\n  pass\nimport os\ndef g(cmd):\n    os.system(cmd)\n"
    latin1 = b"# caf\xe9 \xff\nimport os\ndef f(cmd):\n    os.system(cmd)\n"
    huge = b"import os\ndef h(cmd):\n    os.system(cmd + '" + b"x" * 1_000_000 + b"')\n"
    deep = b"x = " + b"[" * 5000 + b"1" + b"]" * 5000 + b"\n"
    files = [
        SourceFile(n, d)
        for n, d in [
            ("broken.py", broken),
            ("latin1.py", latin1),
            ("huge.py", huge),
            ("deep.py", deep),
        ]
    ]
    result = scan_files(files, commit=None, options=ONE)
    assert result.skipped == ()
    assert [(f.primary.path, f.primary.start_line, f.code) for f in result.findings] == [
        ("broken.py", 5, "BA101"),
        ("huge.py", 3, "BA101"),
        ("latin1.py", 4, "BA101"),
    ]


def test_a_sink_nested_beyond_the_depth_bound_is_a_skip() -> None:
    deep = b"import os\nos.system(" + b"[" * 400 + b"cmd" + b"]" * 400 + b")\n"
    result = scan_files([SourceFile("deep.py", deep)], commit=None, options=ONE)
    assert result.skipped == (
        Skipped("deep.py", "too deeply nested: expression nests deeper than 200 levels"),
    )
    assert result.files_scanned == 0


def test_constants_are_hidden_unless_asked_for() -> None:
    src = (
        b"import subprocess\nsubprocess.run(['git', 'rev-parse', 'HEAD'])\n"
        b"subprocess.run('ls', shell=True)\n"
    )
    files = [SourceFile("c.py", src)]
    assert scan_files(files, commit=None, options=ONE).findings == ()
    shown = scan_files(
        files, commit=None, options=ScanOptions(jobs=1, include_constant=True)
    ).findings
    assert [(f.primary.start_line, f.code, f.severity, f.model_controlled) for f in shown] == [
        (2, "BA301", Severity.INFO, False),
        (3, "BA101", Severity.INFO, False),
    ]


def test_no_ignores_overrides_inline_suppressions() -> None:
    src = TOOL.replace(b'"-lc", cmd])', b'"-lc", cmd])  # boundary-audit: ignore[BA101] documented')
    files = [SourceFile("t.py", src)]
    (kept,) = scan_files(files, commit=None, options=ONE).findings
    assert kept.suppressed == Suppression("inline", "documented")
    (active,) = scan_files(
        files, commit=None, options=ScanOptions(jobs=1, no_ignores=True)
    ).findings
    assert active.suppressed is None


def test_results_are_sorted_and_independent_of_worker_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", 0)  # these few bytes go to workers too
    files = [SourceFile(f"pkg/m{i}.py", TOOL) for i in (3, 1, 2)] + [
        SourceFile("run.sh", b'x=$(llm "q")\nbash -c "$x"\n')
    ]
    one = scan_files(files, commit=SHA, options=ONE)
    two = scan_files(list(reversed(files)), commit=SHA, options=ScanOptions(jobs=2))
    assert one == two
    assert [f.primary.path for f in one.findings] == [
        "pkg/m1.py",
        "pkg/m2.py",
        "pkg/m3.py",
        "run.sh",
    ]
    assert one.languages == {"python": 3, "shell": 1}


def test_scan_path_walks_a_tree_without_following_symlinks(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tool.py").write_bytes(TOOL)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.py").write_bytes(TOOL)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_bytes(TOOL)
    os.symlink(outside, tmp_path / "src" / "linked.py")
    result = scan_path(tmp_path, options=ONE)
    assert [f.primary.path for f in result.findings] == ["src/tool.py"]
    assert result.skipped == (Skipped("src/linked.py", "symlink"),)
    assert isinstance(result, ScanResult)


def test_scan_path_of_a_missing_directory_is_a_scan_error(tmp_path: Path) -> None:
    with pytest.raises(ScanError, match="not a directory"):
        scan_path(tmp_path / "nope")


def test_scanning_never_runs_the_scanned_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = f"touch {marker}\npython3 -c \"open('{marker}', 'w')\"\n".encode()
    src = f"import os\nos.system('touch {marker}')\n".encode()
    scan_files(
        [SourceFile("x.sh", script), SourceFile("x.py", src)],
        commit=None,
        options=ScanOptions(jobs=1, include_constant=True),
    )
    assert not marker.exists()
