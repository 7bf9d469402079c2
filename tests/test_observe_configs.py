"""The config templates docs/observe.md measures Codex, opencode and the Continue CLI with.

Each template must parse as `--config-template` parses it (no unknown placeholder) and, filled
as a run fills it, point the CLI's provider at the mock with the run's key and nothing else:
a template that still names a real endpoint, or loses its base URL, would send the harness
nowhere (the run says the harness made no model request) or, outside the sandbox, elsewhere.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from boundary_audit.observe.endpoint import ConfigTemplate, base_url

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "observe" / "configs"
VALUES = {
    "base_url": base_url(),
    "api_key": "ba-key-1234",
    "model": "mock",
    "home": "/tmp/home",
    "work": "/tmp/work",
}


def _filled(name: str, dest: str) -> tuple[ConfigTemplate, str]:
    t = ConfigTemplate.parse(f"{CONFIGS / name}:{dest}")
    return t, t.render(VALUES)


def test_every_template_in_the_folder_is_one_of_the_three_measured() -> None:
    assert sorted(p.name for p in CONFIGS.iterdir()) == [
        "codex.toml",
        "continue.yaml",
        "opencode.json",
    ]


def test_codex_template_points_its_provider_at_the_mock() -> None:
    t, text = _filled("codex.toml", ".codex/config.toml")
    assert t.dest == ".codex/config.toml"
    cfg = tomllib.loads(text)
    assert cfg["model_provider"] == "mock"
    assert cfg["model_providers"]["mock"]["base_url"] == "http://127.0.0.1:8765/v1"
    assert cfg["model_providers"]["mock"]["wire_api"] == "responses"
    assert cfg["model_providers"]["mock"]["env_key"] == "OPENAI_API_KEY"
    assert cfg["features"]["shell_snapshot"] is False


def test_opencode_template_points_its_provider_at_the_mock() -> None:
    t, text = _filled("opencode.json", ".config/opencode/opencode.json")
    assert t.dest == ".config/opencode/opencode.json"
    cfg = json.loads(text)
    assert cfg["provider"]["mock"]["options"] == {
        "baseURL": "http://127.0.0.1:8765/v1",
        "apiKey": "ba-key-1234",
    }
    assert (cfg["model"], cfg["small_model"]) == ("mock/mock", "mock/mock")
    assert cfg["permission"] == {"bash": "allow", "edit": "allow", "webfetch": "deny"}
    assert (cfg["autoupdate"], cfg["share"]) == (False, "disabled")


def test_continue_template_points_its_model_at_the_mock() -> None:
    t, text = _filled("continue.yaml", ".continue/config.yaml")
    assert t.dest == ".continue/config.yaml"
    lines = [line.strip() for line in text.splitlines()]
    # no YAML parser in the environment: the two lines the CLI reads, byte for byte
    assert 'apiBase: "http://127.0.0.1:8765/v1"' in lines
    assert 'apiKey: "ba-key-1234"' in lines
    assert "provider: openai" in lines
    assert "capabilities: [tool_use]" in lines
    assert "{{" not in text
