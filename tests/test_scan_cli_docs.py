"""docs/usage.md matches the code (exit codes, options); `boundary-audit checks` lists CHECKS."""

from __future__ import annotations

import re

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.pipelines.scan import check_infos
from boundary_audit.static.checks import CHECKS
from boundary_audit.usage_doc import USAGE_MD, exit_code_table, exit_codes, option_table, regenerate


def test_usage_doc_is_current() -> None:
    text = USAGE_MD.read_text(encoding="utf-8")
    assert regenerate(text) == text, "docs/usage.md is stale: python -m boundary_audit.usage_doc"


def test_exit_code_table_comes_from_every_member_with_its_docstring() -> None:
    rows = exit_codes()
    assert [(value, name) for value, name, _ in rows] == [(int(m), m.name) for m in ExitCode]
    assert all(doc for _, _, doc in rows)
    table = exit_code_table()
    assert (
        "| 10 | `GATE` | A gate tripped: findings matched --fail-on, or `tasks check` found a "
        "broken task. |" in table
    )
    assert table.splitlines()[2].startswith("| 0 | `OK` |")


def test_option_table_lists_every_scan_option_with_panel_and_env() -> None:
    table = option_table()
    for flag, panel, env in [
        ("--offline", "Source", "BOUNDARY_AUDIT_OFFLINE"),
        ("--refresh", "Source", "BOUNDARY_AUDIT_REFRESH"),
        ("--cache-dir", "Source", "BOUNDARY_AUDIT_CACHE_DIR"),
        ("--include-constant", "Static", "BOUNDARY_AUDIT_INCLUDE_CONSTANT"),
        ("--no-ignores", "Static", "BOUNDARY_AUDIT_NO_IGNORES"),
        ("--config", "Static", "BOUNDARY_AUDIT_CONFIG"),
        ("--baseline", "Static", "BOUNDARY_AUDIT_BASELINE"),
        ("--write-baseline", "Static", "BOUNDARY_AUDIT_WRITE_BASELINE"),
        ("--min-confidence", "Static", "BOUNDARY_AUDIT_MIN_CONFIDENCE"),
        ("--min-severity", "Static", "BOUNDARY_AUDIT_MIN_SEVERITY"),
        ("--jobs", "Static", "BOUNDARY_AUDIT_JOBS"),
        ("--format", "Output", "BOUNDARY_AUDIT_FORMAT"),
        ("--output", "Output", "BOUNDARY_AUDIT_OUTPUT"),
        ("--details", "Output", "BOUNDARY_AUDIT_DETAILS"),
        ("--show-skipped", "Output", "BOUNDARY_AUDIT_SHOW_SKIPPED"),
        ("--select", "Probe", "BOUNDARY_AUDIT_SELECT"),
        ("--replies", "Probe", "BOUNDARY_AUDIT_REPLIES"),
        ("--sandbox", "Probe", "BOUNDARY_AUDIT_SANDBOX"),
        ("--no-probe", "Probe", "BOUNDARY_AUDIT_NO_PROBE"),
        ("--fail-on", "Gate", "BOUNDARY_AUDIT_FAIL_ON"),
        ("--no-exit-codes", "Gate", "BOUNDARY_AUDIT_NO_EXIT_CODES"),
    ]:
        row = next(r for r in table.splitlines() if f"`{flag}`" in r)
        assert f"| {panel} | `{env}` |" in row, row
    assert "`--format`, `-f` terminal\\|json\\|sarif\\|markdown" in table
    assert "[tool.boundary-audit]" in table and "\\[tool" not in table


def test_scan_help_groups_options_in_panels(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert cli.main(["scan", "--help"]) == 0
    out = capsys.readouterr().out
    panels = re.findall(r"╭─ (\w+) ─", out)
    assert panels == ["Arguments", "Options", "Source", "Static", "Output", "Gate", "Probe"]
    assert "[tool.boundary-audit]" in out and "--no-probe" in out


def test_checks_lists_every_registered_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["checks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "CLASS", "STATUS", "SUMMARY"]
    infos = check_infos()
    assert len(lines) == 1 + len(CHECKS) == 1 + len(infos)
    for line, info in zip(lines[1:], infos, strict=True):
        cells = line.split(None, 4)
        assert cells[:4] == [info.code, info.name, ",".join(info.classes) or "-", info.status]
        assert info.summary and line.endswith(info.summary)
    assert cli.main(["checks", "--short"]) == 0
    short = capsys.readouterr().out.splitlines()
    assert short[0].split() == ["CODE", "NAME", "CLASS", "STATUS"]
