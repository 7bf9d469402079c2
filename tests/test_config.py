"""Configuration: parsing, one-line errors naming file and key, discovery, and application."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.config import (
    CheckConfig,
    Config,
    IgnoreRule,
    apply_config,
    config_from_bytes,
    discover_config,
    load_config_file,
)
from boundary_audit.errors import ConfigError, ExitCode
from boundary_audit.finding import Suppression
from boundary_audit.taxonomy import Severity
from tests.support import sample_findings as sample

CODES = ("BA101", "BA102", "BA201", "BA202", "BA501")


def _parse(text: str, origin: str = "boundary-audit.toml") -> Config:
    return config_from_bytes(text.encode(), origin=origin, known_codes=CODES)


def test_full_config_parses() -> None:
    config = _parse("""
[checks.BA101]
disable = false
ignore = ["agent/run.py:120", "./vendor/", "tests/*.py", "odd:name.py"]
severity = "high"

[checks.BA202]
disable = true
""")
    assert config.origin == "boundary-audit.toml"
    assert config.for_check("BA101") == CheckConfig(
        False,
        (
            IgnoreRule("agent/run.py", 120),
            IgnoreRule("vendor/"),
            IgnoreRule("tests/*.py"),
            IgnoreRule("odd:name.py"),
        ),
        Severity.HIGH,
    )
    assert config.disabled == frozenset({"BA202"})
    assert config.for_check("BA501") == CheckConfig()


def test_pyproject_table_and_its_absence() -> None:
    text = '[project]\nname = "x"\n\n[tool.boundary-audit.checks.BA102]\nseverity = "low"\n'
    config = _parse(text, origin="repo/pyproject.toml")
    assert config.for_check("BA102").severity is Severity.LOW
    assert _parse('[project]\nname = "x"\n', origin="pyproject.toml") == Config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[checks.BA999]\ndisable = true\n",
            "boundary-audit.toml: checks.BA999: unknown check code",
        ),
        (
            '[checks.BA101]\nseverity = "urgent"\n',
            "boundary-audit.toml: checks.BA101.severity: expected one of info, low, medium, high, "
            "got 'urgent'",
        ),
        (
            '[checks.BA101]\ndisable = "yes"\n',
            "boundary-audit.toml: checks.BA101.disable: expected true or false, got 'yes'",
        ),
        (
            '[checks.BA101]\nignore = "a.py"\n',
            "boundary-audit.toml: checks.BA101.ignore: expected an array of strings, got 'a.py'",
        ),
        (
            '[checks.BA101]\nignore = ["a.py", 3]\n',
            "boundary-audit.toml: checks.BA101.ignore[1]: expected a non-empty string 'PATH' or "
            "'PATH:LINE', got 3",
        ),
        (
            '[checks.BA101]\nignore = ["a.py:0"]\n',
            "boundary-audit.toml: checks.BA101.ignore[0]: bad line in 'a.py:0' (lines start at 1)",
        ),
        (
            '[checks.BA101]\nignore = [":12"]\n',
            "boundary-audit.toml: checks.BA101.ignore[0]: bad line in ':12' (lines start at 1)",
        ),
        (
            "[checks.BA101]\nignored = []\n",
            "boundary-audit.toml: checks.BA101.ignored: unknown key (allowed: disable, ignore, severity)",  # noqa: E501
        ),
        ("checks = 3\n", "boundary-audit.toml: checks: expected a table, got int"),
        ("[check.BA101]\n", "boundary-audit.toml: check: unknown key (allowed: checks)"),
        ("checks.BA101 = 1\n", "boundary-audit.toml: checks.BA101: expected a table, got int"),
    ],
)
def test_invalid_config_names_file_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _parse(text)
    assert info.value.message == message
    assert info.value.exit_code == ExitCode.INPUT == 4


def test_invalid_pyproject_keys_carry_the_table_prefix() -> None:
    with pytest.raises(ConfigError, match=r"^x/pyproject.toml: tool.boundary-audit.checks.BA9: "):
        _parse("[tool.boundary-audit.checks.BA9]\n", origin="x/pyproject.toml")
    with pytest.raises(ConfigError, match=r"^pyproject.toml: tool.boundary-audit: expected a "):
        _parse('[tool]\nboundary-audit = "on"\n', origin="pyproject.toml")


def test_broken_toml_and_encoding_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^boundary-audit.toml: invalid TOML: .*line 1"):
        _parse("[checks\n")
    bad = tmp_path / "cfg.toml"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=rf"^{bad}: not UTF-8 text$"):
        load_config_file(bad, known_codes=CODES)
    with pytest.raises(ConfigError, match=rf"^{tmp_path / 'none.toml'}: cannot read config: "):
        load_config_file(tmp_path / "none.toml", known_codes=CODES)


def test_discovery_prefers_boundary_audit_toml() -> None:
    files = {
        "boundary-audit.toml": b"[checks.BA101]\ndisable = true\n",
        "pyproject.toml": b"[project]\nname = 'x'\n[tool.boundary-audit.checks.BA102]\n"
        b"disable = true\n",
    }
    both = discover_config(files.get, known_codes=CODES, where="abc1234:")
    assert (both.origin, both.disabled) == ("abc1234:boundary-audit.toml", frozenset({"BA101"}))
    only_py = discover_config(
        {"pyproject.toml": files["pyproject.toml"]}.get, known_codes=CODES, where="abc1234:"
    )
    assert (only_py.origin, only_py.disabled) == ("abc1234:pyproject.toml", frozenset({"BA102"}))
    assert discover_config({}.get, known_codes=CODES) == Config()
    plain_py = discover_config({"pyproject.toml": b"[project]\n"}.get, known_codes=CODES)
    assert plain_py == Config()


def test_invalid_discovered_config_hints_at_override() -> None:
    with pytest.raises(ConfigError) as info:
        discover_config({"pyproject.toml": b"[tool\n"}.get, known_codes=CODES, where="abc:")
    assert info.value.message.startswith("abc:pyproject.toml: invalid TOML")
    assert info.value.hint is not None and "--config FILE" in info.value.hint


@pytest.mark.parametrize(
    ("rule", "path", "lines", "hit"),
    [
        (IgnoreRule("agent/run.py"), "agent/run.py", (120, 120), True),
        (IgnoreRule("agent/run.py"), "agent/run.pyc", (1, 1), False),
        (IgnoreRule("agent/run.py", 120), "agent/run.py", (120, 120), True),
        (IgnoreRule("agent/run.py", 121), "agent/run.py", (120, 122), True),
        (IgnoreRule("agent/run.py", 123), "agent/run.py", (120, 122), False),
        (IgnoreRule("agent/"), "agent/deep/x.py", (1, 1), True),
        (IgnoreRule("agent/"), "agentx/x.py", (1, 1), False),
        (IgnoreRule("tests/*.py"), "tests/a.py", (1, 1), True),
        (IgnoreRule("tests/*.py"), "tests/a.ts", (1, 1), False),
    ],
)
def test_ignore_rule_matching(
    rule: IgnoreRule, path: str, lines: tuple[int, int], hit: bool
) -> None:
    loc = sample.loc(path, lines[0], lines[1])
    assert rule.matches(loc) is hit


def test_apply_config_disables_overrides_and_suppresses() -> None:
    config = _parse("""
[checks.BA102]
disable = true
[checks.BA101]
severity = "high"
ignore = ["agent/run.py:120"]
""")
    fs = sample.findings()
    out = apply_config(fs, config)
    assert [f.code for f in out] == [f.code for f in fs if f.code != "BA102"]
    run120 = next(f for f in out if f.primary.start_line == 120)
    assert run120.severity is Severity.HIGH
    assert run120.suppressed == Suppression(
        "config", "checks.BA101.ignore 'agent/run.py:120' in boundary-audit.toml"
    )
    run150 = next(f for f in out if f.primary.start_line == 150)
    assert run150.suppressed is not None and run150.suppressed.kind == "baseline"
    no_ignores = apply_config(fs, config, no_ignores=True)
    assert next(f for f in no_ignores if f.primary.start_line == 120).suppressed is None
