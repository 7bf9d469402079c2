"""The CLI shell: version, usage errors and the error-to-exit-code mapping."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

import pytest

from boundary_audit import __version__, cli, supervisor
from boundary_audit.errors import ExitCode, SourceError


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"boundary-audit {__version__}\n"


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["no-such-command"]) == ExitCode.USAGE
    assert "No such command" in capsys.readouterr().err


def test_expected_error_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(**_: object) -> None:
        raise SourceError("unknown revision 'deadbeef' in file:///x", hint="fetch with --refresh")

    monkeypatch.setattr(cli, "build_app", lambda: boom)
    assert cli.main([]) == ExitCode.SOURCE
    err = capsys.readouterr().err
    assert err == (
        "boundary-audit: error: unknown revision 'deadbeef' in file:///x\n"
        "  hint: fetch with --refresh\n"
    )


def test_bug_becomes_internal_error_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(**_: object) -> None:
        raise ZeroDivisionError("division by zero")

    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.setattr(supervisor, "_STATE", tmp_path / "state")
    monkeypatch.setattr(cli, "build_app", lambda: boom)
    assert cli.main([]) == ExitCode.FATAL
    err = capsys.readouterr().err
    assert err.startswith("boundary-audit: internal error: ZeroDivisionError: division by zero")
    assert "Traceback" not in err and err.count("\n") == 1
    # the traceback goes to a new private file of the state dir, never a fixed name in /tmp
    (log,) = (tmp_path / "state" / "crash").iterdir()
    assert err.endswith(f" (traceback in {log})\n")
    assert re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{os.getpid()}\.log", log.name)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    text = log.read_text()
    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("ZeroDivisionError: division by zero\n")
    assert list(shared_tmp.iterdir()) == []


def test_a_crash_log_that_cannot_be_written_leaves_the_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(**_: object) -> None:
        raise KeyError("k")

    (tmp_path / "state").write_text("a file where the state dir should be")
    monkeypatch.setattr(supervisor, "_STATE", tmp_path / "state")
    monkeypatch.setattr(cli, "build_app", lambda: boom)
    assert cli.main([]) == ExitCode.FATAL
    assert capsys.readouterr().err == "boundary-audit: internal error: KeyError: 'k'\n"
