"""The scanner's knowledge of the agent ecosystem, as data: one TOML file per kind of fact.

- `sources.toml`: where model output enters a harness, per SDK and framework: LLM client
  calls and constructors, the harness-side wrappers around them, tool entry points (the
  decorators, base classes, wrapper calls, tool objects, attributes and traits by which a
  function is registered as a tool), decoders of tool-call arguments, action parsers; and
  (`[[input]]`, `[[input_key]]`) the values that are *not* the model's: the environment,
  CLI flags, settings and configuration files, hook commands and MCP server definitions,
  text a person typed (read by `static.inputs`, carried as `values.Input`).
- `sinks.toml`: process sinks beyond the check queries, per SDK and API: sandbox and kernel
  clients, PTY and websocket writes, GUI keystroke injectors, editor terminals, process
  libraries, embedded shell interpreters.
- `scope.toml`: the paths a reviewer leaves out of a report (tests, docs, examples,
  benchmarks, vendored code).

Every entry names its fixture (a path under `tests/fixtures/checks/`), which shows the
convention with exact expectations; `tests/test_static_registry.py` checks that each one
exists, sits in a folder the fixture test scans (so its `# expect:` markers are asserted),
has markers and shows one of the entry's spellings. Files are parsed once per process, on
first use.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

TABLES = ("sources", "sinks", "scope")


@cache
def table(name: str) -> dict[str, Any]:
    """The parsed TOML table `name` (one of `TABLES`)."""
    if name not in TABLES:
        raise KeyError(name)
    text = resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def entries(name: str, key: str) -> list[dict[str, Any]]:
    """The `[[key]]` entries of table `name`."""
    found = table(name).get(key, [])
    return list(found) if isinstance(found, list) else []


def strings(entry: dict[str, Any], key: str) -> tuple[str, ...]:
    """`entry[key]` as a tuple of strings (missing: empty)."""
    value = entry.get(key, ())
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


__all__ = ["TABLES", "entries", "strings", "table"]
