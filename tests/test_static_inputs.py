"""Non-model inputs (`[[input]]` in catalogue/sources.toml, `static.inputs`): a command that
traces only to the environment, CLI flags, configuration or a person's text is configured.

The fixture folder test asserts the default report (configured findings absent, the
negatives present and model-controlled); here each fixture is scanned with
`include_constant` and every configured finding is asserted: its line, class, that it is
not model-controlled, and the input its message and related location name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit.finding import Finding
from boundary_audit.static.engine import ScanOptions, scan_path
from boundary_audit.static.inputs import tables
from tests.test_static_fixtures import FIXTURES

SOURCES = FIXTURES / "sources"

Row = tuple[int, str, str, str]
"""(line, class, input kind, input label) of a configured finding."""

CONFIGURED: dict[str, set[Row]] = {
    "non_model_inputs.py": {
        (24, "shell-string", "env", "environment variable EDITOR_CMD"),
        (28, "shell-string", "env", "environment variable BUILD_CMD"),
        (32, "shell-string", "env", "environment variable SETUP_CMD"),
        (36, "shell-string", "env", "environment variable TEST_CMD"),
        (43, "shell-string", "cli", "CLI flag --cmd"),
        (47, "shell-string", "cli", "CLI argument 1"),
        (53, "shell-string", "cli", "CLI option --run (@click.command)"),
        (58, "shell-string", "config", "config file settings.json"),
        (
            65,
            "shell-string",
            "hook",
            "hook command configured under `hooks` (config file ~/.agent/config.yaml)",
        ),
        (71, "shell-string", "config", "config file pyproject.toml"),
        (76, "shell-string", "config", "configuration from dotenv_values(.env)"),
        (81, "shell-string", "human", "text typed by a person at input()"),
        (85, "shell-string", "human", "text typed by a person (sys.stdin)"),
    },
    "non_model_inputs.ts": {
        (16, "shell-string", "env", "environment variable BUILD_CMD"),
        (20, "shell-string", "env", "environment variable TEST_CMD"),
        (24, "shell-string", "cli", "CLI argument 2"),
        (30, "shell-string", "cli", "CLI flag --cmd"),
        (
            36,
            "shell-string",
            "hook",
            "hook command configured under `hooks` (config file .agent/settings.json)",
        ),
        (
            43,
            "argv-direct",
            "mcp-server",
            "MCP server definition configured under `mcpServers` (config file mcp-config.json)",
        ),
        (48, "shell-string", "config", "config file ./agent.config.json"),
        (
            53,
            "shell-string",
            "config",
            "editor settings from vscode.workspace.getConfiguration(agent)",
        ),
        (59, "shell-string", "human", "text typed by a person at rl.question()"),
    },
    "non_model_inputs.go": {
        (18, "shell-string", "env", "environment variable BUILD_CMD"),
        (24, "shell-string", "cli", "CLI flag -cmd"),
        (28, "shell-string", "cli", "CLI argument 1"),
        (32, "shell-string", "config", "configuration from viper.GetString(hooks.pre)"),
        (39, "shell-string", "config", "config file config.json"),
        (45, "shell-string", "human", "text typed by a person (os.Stdin)"),
    },
    "non_model_inputs.rs": {
        (17, "shell-string", "env", "environment variable BUILD_CMD"),
        (22, "shell-string", "cli", "command-line arguments of std::env::args()"),
        (27, "shell-string", "cli", "CLI flag --cmd"),
        (32, "shell-string", "config", "config file agent.toml"),
        (37, "shell-string", "human", "text typed by a person at std::io::stdin()"),
    },
}


def _scan(name: str, tmp_path: Path, include_constant: bool) -> tuple[Finding, ...]:
    (tmp_path / name).write_bytes((SOURCES / name).read_bytes())
    options = ScanOptions(jobs=1, include_constant=include_constant)
    return scan_path(tmp_path, options=options).findings


def _rows(findings: tuple[Finding, ...]) -> set[Row]:
    rows: set[Row] = set()
    for f in findings:
        if f.model_controlled or not f.message.startswith("A configured value ("):
            continue
        inputs = [r.annotation for r in f.related if r.annotation.startswith("non-model input")]
        assert len(inputs) == 1, (f.primary.start_line, inputs)
        kind, _, label = inputs[0].removeprefix("non-model input (").partition("): ")
        assert f"A configured value ({label})" in f.message
        assert f.model_evidence is None
        rows.add((f.primary.start_line, f.boundary_class.value, kind, label))
    return rows


@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_a_command_from_non_model_inputs_only_is_configured(name: str, tmp_path: Path) -> None:
    found = _scan(name, tmp_path, include_constant=True)
    assert _rows(found) == CONFIGURED[name]


@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_the_default_report_leaves_configured_commands_out(name: str, tmp_path: Path) -> None:
    found = _scan(name, tmp_path, include_constant=False)
    lines = {f.primary.start_line for f in found}
    assert not lines & {line for line, *_ in CONFIGURED[name]}
    assert all(not f.message.startswith("A configured value") for f in found)


def test_inputs_mixed_with_model_output_stay_the_models(tmp_path: Path) -> None:
    """`json.loads(reply)` and `yaml.safe_load(reply)` are decoders, not config reads; the
    environment joined with a tool's parameter is the tool's command."""
    found = {f.primary.start_line: f for f in _scan("non_model_inputs.py", tmp_path, True)}
    for line, evidence in (
        (94, "traced"),
        (100, "traced"),
        (107, "tool-entry"),
        (113, "tool-entry"),
    ):
        f = found[line]
        assert (f.model_controlled, f.model_evidence) == (True, evidence)
        assert not any(r.annotation.startswith("non-model input") for r in f.related)
    for line in (117, 121):
        assert found[line].model_controlled is False
        assert found[line].message.startswith("A value of unknown origin")


def test_the_json_report_names_the_input(tmp_path: Path) -> None:
    from boundary_audit.report.scan.json_v1 import FindingV1, to_json

    found = _scan("non_model_inputs.go", tmp_path, include_constant=True)
    env = next(f for f in found if f.primary.start_line == 18)
    item = json.loads(json.dumps(to_json(FindingV1.of(env, snippet="", fingerprint=""))))
    assert item["model_controlled"] is False
    assert item["model_evidence"] is None
    assert item["message"].startswith("A configured value (environment variable BUILD_CMD)")
    assert [r["annotation"] for r in item["related"]] == [
        "non-model input (env): environment variable BUILD_CMD"
    ]


def test_every_dialect_has_input_tables() -> None:
    for dialect in ("python", "javascript", "go", "rust"):
        t = tables(dialect)
        assert t.calls or t.reads
    assert tables("shell").calls == {}
