"""`boundary-audit source resolve|files`: sha on stdout, one-line errors with exit code 3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from tests.support.git_daemon import GitDaemon
from tests.support.gitrepos import Symlink, make_repo


def test_resolve_prints_the_full_sha(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sha = make_repo(tmp_path / "r", {"a.py": b"x\n"}, tags=["v1"])
    assert cli.main(["source", "resolve", f"{tmp_path / 'r'}@v1"]) == ExitCode.OK
    out, err = capsys.readouterr()
    assert out == f"{sha}\n"
    assert err == f"local {(tmp_path / 'r').as_uri()}\ngit dir {tmp_path / 'r' / '.git'}\n"


def test_resolve_over_daemon_reports_progress_then_works_offline(
    git_daemon: GitDaemon, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sha = make_repo(git_daemon.base / "r.git", {"a.py": b"x\n"}, bare=True)
    url = git_daemon.url("r.git")
    cache = str(tmp_path / "cache")
    assert cli.main(["source", "resolve", url, "--cache-dir", cache]) == ExitCode.OK
    out, err = capsys.readouterr()
    assert out == f"{sha}\n" and err.startswith(f"boundary-audit: cloning {url}\nurl {url}\n")
    git_daemon.stop()
    assert cli.main(["source", "resolve", url, "--cache-dir", cache, "--offline"]) == ExitCode.OK
    assert capsys.readouterr().out == f"{sha}\n"


def test_files_lists_sizes_and_skip_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(
        tmp_path / "r", {"a.py": b"abc\n", "bin": b"\0\1", "big": b"z" * 11, "l": Symlink("a.py")}
    )
    assert cli.main(["source", "files", str(tmp_path / "r"), "--max-bytes", "10"]) == ExitCode.OK
    assert capsys.readouterr().out == (
        "4\ta.py\nskipped: too large (11 bytes)\tbig\nskipped: binary\tbin\nskipped: symlink\tl\n"
    )


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        (
            "owner/",
            "boundary-audit: error: invalid spec 'owner/': owner/name shorthand without a name",
        ),
        ("./missing", "boundary-audit: error: no such path: './missing'"),
    ],
)
def test_errors_are_one_line_with_exit_code_3(
    spec: str,
    line: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["source", "resolve", spec]) == ExitCode.SOURCE == 3
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[0] == line and "Traceback" not in err


def test_unknown_revision_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path / "r", {"a": b"a"})
    assert cli.main(["source", "files", f"{tmp_path / 'r'}@v9"]) == ExitCode.SOURCE
    assert capsys.readouterr().err.splitlines()[0] == (
        f"boundary-audit: error: unknown revision 'v9' in {tmp_path / 'r'}"
    )


def test_without_git_only_source_commands_fail_with_exit_code_5(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"a": b"a"})
    bindir = tmp_path / "bin"  # a PATH with python but no git
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    code = "import sys; from boundary_audit import cli; sys.exit(cli.main(sys.argv[1:]))"
    env = {"PATH": str(bindir), "HOME": str(tmp_path)}
    version = subprocess.run(
        [sys.executable, "-c", code, "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0, version.stderr
    res = subprocess.run(
        [sys.executable, "-c", code, "source", "resolve", str(tmp_path / "r")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (res.returncode, res.stdout) == (ExitCode.ENVIRONMENT, "")
    assert res.stderr == "boundary-audit: error: git: program not found: git\n"
