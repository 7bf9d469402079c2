"""Per-check configuration: `[tool.boundary-audit]` in pyproject.toml or a boundary-audit.toml.

Keys (all optional), per check code:

    [checks.BA101]                 # in pyproject.toml: [tool.boundary-audit.checks.BA101]
    disable = true                 # do not report this check at all
    ignore = ["agent/run.py:120", "vendor/", "tests/*.py"]  # suppress (counted, not dropped)
    severity = "high"              # override the severity of its findings

An `ignore` entry is `PATH` or `PATH:LINE`; PATH is relative to the repository root, matches a
file exactly, a directory when it ends with `/`, or a glob when it contains `*`, `?` or `[`.
LINE matches when it falls within the finding's primary lines. Discovery in the scanned
repository: `boundary-audit.toml` at the root wins over pyproject.toml; `--config FILE`
replaces discovery. Validation is done here (one-line `ConfigError` naming the file and key);
`boundary_audit/schemas/config.schema.json` describes the same format for editors, and a test
keeps the two in agreement and covering every registered check.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from boundary_audit.errors import ConfigError
from boundary_audit.finding import Finding, Location, Suppression
from boundary_audit.taxonomy import Severity

CONFIG_FILE = "boundary-audit.toml"
PYPROJECT = "pyproject.toml"
_CHECK_KEYS = ("disable", "ignore", "severity")


@dataclass(frozen=True)
class IgnoreRule:
    """One `ignore` entry: a path pattern and an optional line."""

    pattern: str
    line: int | None = None

    def matches(self, loc: Location) -> bool:
        """True when `loc` is in the file(s) and, if given, spans the line."""
        if self.line is not None and not loc.start_line <= self.line <= loc.end_line:
            return False
        if self.pattern.endswith("/"):
            return loc.path.startswith(self.pattern)
        if any(ch in self.pattern for ch in "*?["):
            return fnmatch.fnmatchcase(loc.path, self.pattern)
        return loc.path == self.pattern

    def __str__(self) -> str:
        return self.pattern if self.line is None else f"{self.pattern}:{self.line}"


@dataclass(frozen=True)
class CheckConfig:
    """The settings of one check."""

    disable: bool = False
    ignore: tuple[IgnoreRule, ...] = ()
    severity: Severity | None = None


@dataclass(frozen=True)
class Config:
    """A loaded configuration; `origin` names where it came from ('' for none)."""

    origin: str = ""
    checks: Mapping[str, CheckConfig] = field(default_factory=dict)

    def for_check(self, code: str) -> CheckConfig:
        """The settings of `code` (defaults when unconfigured)."""
        return self.checks.get(code, CheckConfig())

    @property
    def disabled(self) -> frozenset[str]:
        """Codes of disabled checks."""
        return frozenset(c for c, cc in self.checks.items() if cc.disable)


def _fail(origin: str, key: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{origin}: {key}: {problem}",
        hint="see docs/usage.md#configuration; `boundary-audit checks` lists codes",
    )


def _ignore_rule(origin: str, key: str, entry: object) -> IgnoreRule:
    if not isinstance(entry, str) or not entry.strip():
        raise _fail(
            origin, key, f"expected a non-empty string 'PATH' or 'PATH:LINE', got {entry!r}"
        )
    head, sep, tail = entry.rpartition(":")
    if sep and tail.isdigit():
        if int(tail) < 1 or not head:
            raise _fail(origin, key, f"bad line in {entry!r} (lines start at 1)")
        return IgnoreRule(head.removeprefix("./"), int(tail))
    return IgnoreRule(entry.removeprefix("./"))


def _check(origin: str, code: str, table: object) -> CheckConfig:
    key = f"checks.{code}"
    if not isinstance(table, dict):
        raise _fail(origin, key, f"expected a table, got {type(table).__name__}")
    unknown = sorted(set(table) - set(_CHECK_KEYS))
    if unknown:
        raise _fail(
            origin, f"{key}.{unknown[0]}", f"unknown key (allowed: {', '.join(_CHECK_KEYS)})"
        )
    disable = table.get("disable", False)
    if not isinstance(disable, bool):
        raise _fail(origin, f"{key}.disable", f"expected true or false, got {disable!r}")
    ignore = table.get("ignore", [])
    if not isinstance(ignore, list):
        raise _fail(origin, f"{key}.ignore", f"expected an array of strings, got {ignore!r}")
    rules = tuple(_ignore_rule(origin, f"{key}.ignore[{i}]", e) for i, e in enumerate(ignore))
    severity = table.get("severity")
    allowed = [s.value for s in Severity]
    if severity is not None and severity not in allowed:
        raise _fail(
            origin, f"{key}.severity", f"expected one of {', '.join(allowed)}, got {severity!r}"
        )
    return CheckConfig(disable, rules, Severity(severity) if severity is not None else None)


def parse_config(
    doc: Mapping[str, Any], *, origin: str, known_codes: Collection[str], prefix: str = ""
) -> Config:
    """Validate the boundary-audit table `doc` (keys shown with `prefix` in errors)."""
    unknown = sorted(set(doc) - {"checks"})
    if unknown:
        raise _fail(origin, prefix + unknown[0], "unknown key (allowed: checks)")
    checks = doc.get("checks", {})
    if not isinstance(checks, dict):
        raise _fail(origin, prefix + "checks", f"expected a table, got {type(checks).__name__}")
    out: dict[str, CheckConfig] = {}
    for code in sorted(checks):
        if code not in known_codes:
            raise _fail(origin, f"{prefix}checks.{code}", "unknown check code")
        out[code] = _check(origin, code, checks[code])
    return Config(origin, out)


def _toml(data: bytes, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{origin}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: invalid TOML: {exc}") from None


def config_from_bytes(
    data: bytes, *, origin: str, known_codes: Collection[str], pyproject: bool | None = None
) -> Config:
    """A config from a file's bytes: a pyproject.toml (its `[tool.boundary-audit]` table, if
    any) when `pyproject` (default: `origin` is named pyproject.toml), else a
    boundary-audit.toml."""
    doc = _toml(data, origin)
    if not (Path(origin).name == PYPROJECT if pyproject is None else pyproject):
        return parse_config(doc, origin=origin, known_codes=known_codes)
    tool = doc.get("tool", {})
    table = tool.get("boundary-audit") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise _fail(origin, "tool.boundary-audit", "expected a table")
    return parse_config(
        table, origin=origin, known_codes=known_codes, prefix="tool.boundary-audit."
    )


def load_config_file(path: Path, *, known_codes: Collection[str]) -> Config:
    """The config in `path` (`--config`); a missing or unreadable file is a ConfigError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    return config_from_bytes(data, origin=str(path), known_codes=known_codes)


def discover_config(
    read: Callable[[str], bytes | None], *, known_codes: Collection[str], where: str = ""
) -> Config:
    """The config of a scanned tree; `read(path)` returns a root file's bytes or None.

    `where` prefixes the origin in messages (e.g. `owner/name@abc1234:`).
    """
    for name in (CONFIG_FILE, PYPROJECT):
        data = read(name)
        if data is None:
            continue
        try:
            config = config_from_bytes(
                data, origin=f"{where}{name}", known_codes=known_codes, pyproject=name == PYPROJECT
            )
        except ConfigError as exc:
            raise ConfigError(
                exc.message,
                hint="the scanned repository's own configuration is "
                "invalid; pass --config FILE to use another one",
            ) from None
        if config.origin or name == CONFIG_FILE:
            return config
    return Config()


def apply_config(
    findings: Iterable[Finding], config: Config, *, no_ignores: bool = False
) -> list[Finding]:
    """Findings with the config applied: disabled checks dropped, severities overridden, ignored
    ones marked suppressed (kind `config`) unless `no_ignores`."""
    out = []
    for f in findings:
        cc = config.for_check(f.code)
        if cc.disable:
            continue
        if cc.severity is not None:
            f = replace(f, severity=cc.severity)
        rule = next((r for r in cc.ignore if r.matches(f.primary)), None)
        if rule is not None and f.suppressed is None and not no_ignores:
            f = f.suppress(
                Suppression("config", f"checks.{f.code}.ignore {str(rule)!r} in {config.origin}")
            )
        out.append(f)
    return out
