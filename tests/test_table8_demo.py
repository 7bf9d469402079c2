"""The embedded default end to end: `boundary-audit demo` builds, scans, probes and reports.

Run on two hostile tasks to stay fast; the numbers are exact for them. Every specimen's
finding (one per boundary class) must be a Table-8 row, measured through the transport its
class and source select, with the evidence attached to the scan report too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit.cli import main
from boundary_audit.errors import ExitCode

ROWS = {
    # specimen: (class, transport, oracle passed through the boundary of 2, confidence)
    "python_codeblocks": ("script-file", "script-bash", 2, "high"),
    "python_json": ("serialized", "json-naive", 0, "high"),
    "python_nested": ("nested-string", "nested", 0, "high"),
    "python_remote": ("remote-string", "ssh", 0, "high"),
    "python_session": ("shell-session", "session", 2, "medium"),
    "python_stdin": ("shell-stdin", "stdin", 2, "medium"),
    "python_tmux": ("tty-keystrokes", "tmux-keys", 2, "medium"),
    "rust_exec": ("shell-string", "raw(flags=-lc)", 2, "high"),
    "typescript_launcher": ("argv-direct", "argv-shell-quote", 1, "high"),
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
        f"demo: 9 boundaries in the specimens, 6 confirmed by measurement; reports in {out}/"
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
    scan = json.loads((out / "scan.json").read_text(encoding="utf-8"))
    by_dir = {f["path"].split("/")[0]: f for f in scan["findings"]}
    for specimen, (_, transport, passed, confidence) in ROWS.items():
        (ev,) = by_dir[specimen]["evidence"]
        assert (ev["transport"], ev["tasks"], ev["passed_raw"], ev["passed_boundary"]) == (
            transport,
            2,
            2,
            passed,
        )
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
