"""The embedded default end to end: `boundary-audit demo` builds, scans, probes and reports.

Run on two hostile tasks to stay fast; the numbers are exact for them. Every specimen's
finding (one per boundary class) must be a Table-8 row, measured through the path the scan
derived from its code and through that path with its fix applied (the nested specimen's fix
reaches 0.0 pp), with the evidence attached to the scan report too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit.cli import main
from boundary_audit.errors import ExitCode

ROWS = {
    # specimen: (class, its derived path's label, oracle passed through it of 2, confidence,
    #            oracle passed through the fixed path of 2, or None when no fix is needed)
    "python_codeblocks": ("script-file", "script-sh(prefix=timeout 60)", 1, "medium", 2),
    "python_json": ("serialized", "json-naive", 0, "high", 2),
    "python_nested": (
        "nested-string",
        'raw(shell=sh)[template.interpolate(prefix=sh -c ",suffix=")]',
        0,
        "high",
        2,
    ),
    "python_remote": ("remote-string", "ssh(quoting=argv)", 2, "medium", None),
    "python_session": ("shell-session", "session(shell=[/bin/bash --norc])", 2, "medium", 2),
    "python_stdin": ("shell-stdin", "stdin(flags=-s,shell=sh)", 1, "high", 2),
    "python_tmux": ("tty-keystrokes", "tmux-keys(shell=[])", 2, "medium", 2),
    "rust_exec": ("shell-string", "raw(flags=-lc)", 2, "high", None),
    "typescript_launcher": ("argv-direct", "argv-shell-quote", 1, "high", 2),
}


@pytest.mark.sshd
@pytest.mark.tmux
def test_demo_writes_the_specimens_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    argv = [
        "demo",
        "--output-dir",
        str(out),
        "--select",
        "write-file-t3,argv-pass-t3",
        "--no-probes",
    ]
    assert main(argv) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == (
        f"demo: 9 boundaries in the specimens, 5 confirmed by measurement; reports in {out}/"
    )
    assert "Table 8 of the specimens" in captured.out
    assert sorted(p.name for p in out.iterdir()) == [
        "scan.json",
        "scan.md",
        "scan.sarif",
        "specimens",
        "table8.json",
        "table8.md",
    ]
    table = json.loads((out / "table8.json").read_text(encoding="utf-8"))
    assert table["command"] == (
        f"boundary-audit demo --output-dir {out} --select write-file-t3,argv-pass-t3 --no-probes"
    )
    got = {
        r["system"]: (r["class"], r["transport"], r["measures"][0]["passed_boundary"])
        for r in table["rows"]
    }
    assert got == {k: v[:3] for k, v in ROWS.items()}
    assert all(r["measures"][0]["passed_raw"] == 2 for r in table["rows"])
    assert all(r["measures"][0]["errors"] == 0 for r in table["rows"])
    nested = next(r for r in table["rows"] if r["system"] == "python_nested")
    assert (
        "fix verified (oracle): −100.0 pp → 0.0 pp: shell-quote R at the interpolation "
        "point (shlex.quote); let bash parse R (the model writes bash), not sh" in nested["notes"]
    )
    scan = json.loads((out / "scan.json").read_text(encoding="utf-8"))
    by_dir = {f["path"].split("/")[0]: f for f in scan["findings"]}
    for specimen, (_, transport, passed, confidence, fixed) in ROWS.items():
        evidence = by_dir[specimen]["evidence"]
        (ev,) = [e for e in evidence if e["role"] == "path"]
        assert (ev["transport"], ev["tasks"], ev["passed_raw"], ev["passed_boundary"]) == (
            transport,
            2,
            2,
            passed,
        )
        assert [e["passed_boundary"] for e in evidence if e["role"] == "fix"] == (
            [] if fixed is None else [fixed]
        ), specimen
        assert by_dir[specimen]["confidence"] == confidence
    # The repository is rebuilt in place on a second run, with the same commit.
    sha = scan["commit"]
    assert main(argv) == ExitCode.OK
    assert json.loads((out / "scan.json").read_text(encoding="utf-8"))["commit"] == sha
    capsys.readouterr()


def test_demo_refuses_a_directory_it_did_not_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specimens").mkdir()
    assert main(["demo", "--output-dir", str(tmp_path), "--no-probes"]) == ExitCode.USAGE
    assert capsys.readouterr().err.splitlines()[0] == (
        f"boundary-audit: error: {tmp_path}/specimens exists and is not a specimens repository "
        "built by boundary-audit; choose another --output-dir"
    )
