"""The CLI shell: version, usage errors and the error-to-exit-code mapping."""

from __future__ import annotations

import pytest

from boundary_audit import __version__, cli
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
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(**_: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "build_app", lambda: boom)
    assert cli.main([]) == ExitCode.FATAL
    err = capsys.readouterr().err
    assert err.startswith("boundary-audit: internal error: ZeroDivisionError: division by zero")
    assert "Traceback" not in err and err.count("\n") == 1
