"""JSON Schemas that ship with boundary-audit, and the generator of the config schema.

- `report-v1.schema.json`: the `--format json` output (docs/json-v1.md is its prose).
- `config.schema.json`: `boundary-audit.toml` / `[tool.boundary-audit]`, for editors (taplo,
  Even Better TOML). It lists every registered check code; regenerate it after adding a check
  with `python -m boundary_audit.schemas` (a test fails until you do).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from boundary_audit.taxonomy import Severity

CONFIG_SCHEMA = "config.schema.json"
REPORT_V1_SCHEMA = "report-v1.schema.json"


def load(name: str) -> dict[str, Any]:
    """A shipped schema by file name."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def _check_table(code: str, name: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"Settings of {code} ({name}).",
        "additionalProperties": False,
        "properties": {
            "disable": {"type": "boolean", "description": "Do not report this check."},
            "ignore": {
                "type": "array",
                "description": "Suppress findings at 'PATH' or 'PATH:LINE' (PATH: a file, a "
                "directory ending in '/', or a glob).",
                "items": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": r"^(?!.*:0+$)(?!:[0-9]+$)(?=.*\S).+$",
                },
            },
            "severity": {
                "enum": [s.value for s in Severity],
                "description": "Override the severity of this check's findings.",
            },
        },
    }


def config_schema(checks: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The config schema for (code, name) pairs, in code order."""
    tables = {code: _check_table(code, name) for code, name in sorted(checks)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://boundary-audit.invalid/schemas/config.schema.json",
        "title": "boundary-audit configuration",
        "description": "boundary-audit.toml, or [tool.boundary-audit] in pyproject.toml.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "checks": {"type": "object", "additionalProperties": False, "properties": tables}
        },
    }


def render_config_schema(checks: Iterable[tuple[str, str]]) -> str:
    """`config_schema` as the exact text of the shipped file."""
    return json.dumps(config_schema(checks), indent=2) + "\n"


def main() -> int:  # pragma: no cover - exercised by hand after adding a check
    """Regenerate config.schema.json from the registered checks."""
    from boundary_audit.pipelines.scan import check_infos

    text = render_config_schema((c.code, c.name) for c in check_infos())
    target = Path(__file__).with_name(CONFIG_SCHEMA)
    target.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
