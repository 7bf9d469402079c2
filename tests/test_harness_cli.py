"""`boundary-audit harness ...`: exit codes and one-line errors, and one comparison end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.harness import SYSTEMS
from boundary_audit.harness.install import Installation


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BOUNDARY_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_an_unknown_system_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["harness", "run", "aider"]) == ExitCode.USAGE
    assert "unknown harness system 'aider'" in capsys.readouterr().err


def test_offline_install_reports_each_system_as_skipped(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["harness", "install", "all", "--offline"]) == ExitCode.ENVIRONMENT
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{s}: skipped: the {s} harness is not installed and --offline forbids installing it"
        for s in SYSTEMS
    ]
    assert not empty_cache.exists()


def test_install_takes_several_systems_once_each(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["harness", "install", "langchain", "swe-agent", "langchain", "--offline"]
    assert cli.main(argv) == ExitCode.ENVIRONMENT
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == [
        "langchain",
        "swe-agent",
    ]


def test_offline_run_without_the_driver_fails_before_running(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["harness", "run", "langchain", "--offline"]) == ExitCode.ENVIRONMENT
    err = capsys.readouterr().err
    assert err.startswith(
        "boundary-audit: error: the langchain harness is not installed and --offline forbids"
    )


def test_a_malformed_param_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["harness", "run", "swe-agent", "--param", "timeout"]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        "boundary-audit: error: --param 'timeout': expected KEY=VALUE\n"
    )
    assert cli.main(["harness", "run", "swe-agent", "--param", "shell=zsh"]) == ExitCode.USAGE


def test_list_shows_every_system(empty_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["harness", "list"]) == ExitCode.OK
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert (
        names
        == list(SYSTEMS)
        == ["swe-agent", "langchain", "autogen", "openhands", "terminal-bench", "codex"]
    )


@pytest.mark.harness
@pytest.mark.bwrap
def test_compare_end_to_end_writes_both_reports(
    harness_env: Callable[[str], Installation],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    harness_env("swe-agent")
    out_json, out_md, none = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "none.toml"
    none.write_text("# no explanations\n")
    argv = ["harness", "compare", "swe-agent", "--select", "heredoc-write-t2", "--replies",
            "oracle", "--against", "raw", "--no-baseline", "--sandbox", "bwrap",
            "--param", "timeout=5", "--explanations", str(none),
            "--output", str(out_json), "--output", str(out_md)]  # fmt: skip
    assert cli.main(argv) == ExitCode.OK
    assert capsys.readouterr().err.splitlines()[-1] == (
        "harness:swe-agent(timeout=5.0): oracle 0.0% (0/1); vs raw: 1 of 1 differ, 1 unexplained"
    )
    doc = json.loads(out_json.read_text())
    assert doc["command"] == (
        "boundary-audit harness compare swe-agent --select heredoc-write-t2 --replies oracle "
        f"--param timeout=5 --against raw --explanations {none} --sandbox bwrap --no-baseline "
        f"--output={out_json} --output={out_md}"
    )
    ((diff,),) = [c["differences"] for c in doc["comparisons"]]
    assert (diff["task_id"], diff["harness"]["status"], diff["against"]["passed"]) == (
        "heredoc-write-t2",
        "executed",
        True,
    )
    assert diff["harness"]["reason"].startswith('"Makefile": first difference at byte 23')
    assert out_md.read_text().startswith("# Real harness: SWE-agent\n\nRegenerate with: `")
