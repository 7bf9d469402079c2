"""The shipped config JSON Schema: covers every registered check and agrees with the parser."""

from __future__ import annotations

import tomllib
from importlib import resources

import jsonschema
import pytest

from boundary_audit.config import parse_config
from boundary_audit.errors import ConfigError
from boundary_audit.schemas import CONFIG_SCHEMA, config_schema, load, render_config_schema

CODES = (("BA101", "shell-string-sink"), ("BA202", "tmux-keystrokes"))

GOOD = [
    "",
    "[checks.BA101]\n",
    '[checks.BA101]\ndisable = true\nignore = ["a.py", "a.py:3", "dir/", "t/*.py", "x:y"]\n'
    'severity = "info"\n',
    '[checks.BA202]\nseverity = "high"\nignore = []\n',
]
BAD = [
    "[checks.BA999]\n",
    "[checks.BA101]\nseverity = 'urgent'\n",
    "[checks.BA101]\ndisable = 1\n",
    "[checks.BA101]\nignore = 'a.py'\n",
    "[checks.BA101]\nignore = ['']\n",
    "[checks.BA101]\nignore = ['   ']\n",
    "[checks.BA101]\nignore = ['a.py:0']\n",
    "[checks.BA101]\nignore = [':7']\n",
    "[checks.BA101]\nignore = [7]\n",
    "[checks.BA101]\nextra = 1\n",
    "[other]\n",
    "checks = 1\n",
]


def _schema_accepts(doc: dict[str, object]) -> bool:
    validator = jsonschema.Draft202012Validator(config_schema(CODES))
    return validator.is_valid(doc)


def _parser_accepts(doc: dict[str, object]) -> bool:
    try:
        parse_config(doc, origin="t.toml", known_codes=[c for c, _ in CODES])
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("text", GOOD + BAD)
def test_schema_and_parser_agree(text: str) -> None:
    doc = tomllib.loads(text)
    assert _schema_accepts(doc) is _parser_accepts(doc) is (text in GOOD)


def test_generated_schema_lists_checks_in_code_order() -> None:
    schema = config_schema(reversed(CODES))
    tables = schema["properties"]["checks"]["properties"]
    assert list(tables) == ["BA101", "BA202"]
    assert tables["BA202"]["description"] == "Settings of BA202 (tmux-keystrokes)."
    jsonschema.Draft202012Validator.check_schema(schema)


def test_shipped_schema_covers_every_registered_check() -> None:
    from boundary_audit.pipelines.scan import check_infos

    checks = check_infos()
    assert checks, "no checks registered"
    shipped = load(CONFIG_SCHEMA)
    assert set(shipped["properties"]["checks"]["properties"]) == {c.code for c in checks}
    text = resources.files("boundary_audit.schemas").joinpath(CONFIG_SCHEMA).read_text("utf-8")
    assert text == render_config_schema((c.code, c.name) for c in checks), (
        "config.schema.json is stale: run `python -m boundary_audit.schemas`"
    )
