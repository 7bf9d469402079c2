"""Findings: immutable records of one parser boundary, built only through `FindingBuilder`.

A finding has exactly one primary location (the sink whose argument reaches execve) and any
number of related locations (where the model value enters, intermediate wrapping). Files or
inputs that could not be handled become `Skipped` records, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NewType

from boundary_audit.taxonomy import BoundaryClass, Confidence, Contract, Severity

CheckCode = NewType("CheckCode", str)

HELP_URL = "https://boundary-audit.invalid/checks/{code}"
"""Where a check's documentation page lives (docs/checks.md is generated from the docstrings)."""


@dataclass(frozen=True, order=True)
class Location:
    """A span of source at a commit: the Table-8 "file:lines @sha"."""

    path: str
    """Path relative to the repository root, always with `/` separators."""
    start_line: int
    """1-based first line."""
    end_line: int
    """1-based last line (inclusive)."""
    start_col: int = 0
    """0-based column of the first byte on start_line."""
    end_col: int = 0
    """0-based column just past the last byte on end_line."""
    start_byte: int = 0
    end_byte: int = 0
    commit: str | None = None
    """Full sha of the scanned commit, or None for an uncommitted tree."""
    annotation: str = field(default="", compare=False)
    """What this location is, e.g. "model reply enters here" or "sink: subprocess.run"."""

    def anchor(self, short: int = 7) -> str:
        """`path:start-end@sha` (the sha shortened to `short` characters; omitted if unknown)."""
        lines = (
            f"{self.start_line}"
            if self.start_line == self.end_line
            else (f"{self.start_line}-{self.end_line}")
        )
        sha = f"@{self.commit[:short]}" if self.commit else ""
        return f"{self.path}:{lines}{sha}"


@dataclass(frozen=True)
class Evidence:
    """A measurement that supports a finding: a task suite pushed through its boundary."""

    transport: str
    """Transport name with parameters, e.g. `nested` or `tmux(literal=false)`."""
    reply_set: str
    """`oracle`, `naive`, or the name of a reply file."""
    tasks: int
    """How many tasks were run."""
    passed_raw: int
    passed_boundary: int

    @property
    def damage_pp(self) -> float:
        """pass(boundary) - pass(raw), in percentage points (negative means damage)."""
        if self.tasks == 0:
            return 0.0
        return round(100.0 * (self.passed_boundary - self.passed_raw) / self.tasks, 1)


@dataclass(frozen=True)
class Suppression:
    """Why a finding is not reported as active: an inline comment, config, or the baseline."""

    kind: str
    """`inline`, `config` or `baseline`."""
    reason: str


@dataclass(frozen=True)
class Finding:
    """One place where (possibly model-controlled) text crosses a parser boundary."""

    code: CheckCode
    """Stable check code, e.g. `BA101`."""
    name: str
    """Kebab-case check name that reads as "allow <name>", e.g. `shell-string-sink`."""
    message: str
    """One sentence about this occurrence."""
    boundary_class: BoundaryClass
    parse_layers: int
    """Shell parses R goes through at this sink (may differ from the class default)."""
    contract: Contract
    """Contract hint: raw, native, or unknown."""
    confidence: Confidence
    severity: Severity
    sanitizer: str | None
    """The quoting/serialising function applied at the interpolation point, if any."""
    model_controlled: bool
    """True when the argument traces back to model output, or to a tool entry point's input."""
    language: str
    primary: Location
    related: tuple[Location, ...] = ()
    sink: str = ""
    """The API or program that is the sink, e.g. `subprocess.run` or `tmux send-keys`."""
    evidence: tuple[Evidence, ...] = ()
    tip: str | None = None
    suppressed: Suppression | None = None
    model_evidence: str | None = None
    """What was seen of the model: `traced` (a path to a model-output source), `tool-entry`
    (the input of a registered tool handler), `name` (a name like `cmd`, and nothing else:
    model-controlled only inside a tool entry's class), or None (no model origin at all)."""

    @property
    def help_url(self) -> str:
        """Documentation URL derived from the code."""
        return HELP_URL.format(code=self.code)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Total order used by every renderer."""
        p = self.primary
        return (p.path, p.start_line, p.start_col, self.code, self.boundary_class.value)

    def with_evidence(self, ev: Evidence, confidence: Confidence | None = None) -> Finding:
        """A copy carrying one more measurement (and optionally a new confidence)."""
        return replace(
            self, evidence=self.evidence + (ev,), confidence=confidence or self.confidence
        )

    def suppress(self, s: Suppression) -> Finding:
        """A copy marked as suppressed."""
        return replace(self, suppressed=s)


class FindingBuildError(ValueError):
    """A builder was asked to build an incomplete finding (a bug in a check)."""


class FindingBuilder:
    """Collects the parts of a finding and refuses to build one without a primary location."""

    def __init__(self, code: str, name: str, language: str) -> None:
        self._fields: dict[str, object] = {
            "code": CheckCode(code),
            "name": name,
            "language": language,
        }
        self._related: list[Location] = []

    def set(self, **fields: object) -> FindingBuilder:
        """Set any Finding field by name (message, boundary_class, sanitizer, ...)."""
        self._fields.update(fields)
        return self

    def primary(self, loc: Location) -> FindingBuilder:
        """The sink location (exactly one)."""
        self._fields["primary"] = loc
        return self

    def related(self, loc: Location) -> FindingBuilder:
        """Add a related location (source of the model value, wrapping step)."""
        self._related.append(loc)
        return self

    def build(self) -> Finding:
        """The finding; raises FindingBuildError if a required field is missing."""
        if "primary" not in self._fields:
            raise FindingBuildError(f"{self._fields['code']}: no primary location")
        f = dict(self._fields)
        bc = f.get("boundary_class")
        if not isinstance(bc, BoundaryClass):
            raise FindingBuildError(f"{f['code']}: boundary_class missing")
        f.setdefault("parse_layers", bc.parse_layers)
        f.setdefault("contract", Contract.UNKNOWN)
        f.setdefault("confidence", Confidence.LOW)
        f.setdefault("severity", Severity.LOW)
        f.setdefault("sanitizer", None)
        f.setdefault("model_controlled", False)
        f.setdefault("message", "")
        seen: set[tuple[str, int, int]] = set()
        rel = []
        for loc in sorted(self._related):
            key = (loc.path, loc.start_line, loc.start_col)
            if key not in seen:
                seen.add(key)
                rel.append(loc)
        f["related"] = tuple(rel)
        return Finding(**f)  # type: ignore[arg-type]


@dataclass(frozen=True, order=True)
class Skipped:
    """An input that could not be handled, and why (skip-as-data, as pip-audit does)."""

    path: str
    reason: str
    """E.g. `binary`, `too large (3.1 MB > 2 MB)`, `missing blob`, `not UTF-8`, `symlink`."""
