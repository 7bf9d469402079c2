"""Findings: immutable records of one parser boundary, built only through `FindingBuilder`.

A finding has exactly one primary location (the sink whose argument reaches execve) and any
number of related locations (where the model value enters, intermediate wrapping). Files or
inputs that could not be handled become `Skipped` records, never exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NewType

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


EVIDENCE_ROLES = ("path", "fix", "adapter")
"""What a measurement went through: the derived path (one route of it), the path with its fix
applied, or the adapter's path for the same code (`system_adapters/`)."""


@dataclass(frozen=True)
class Evidence:
    """A measurement that supports a finding: a task suite pushed through its boundary.

    `tasks`, `passed_raw` and `passed_boundary` count the core tasks whose runs were carried
    out on both paths; a run that could not be carried out (reason `error: ...`) is counted in
    `errors` and left out of the pass counts and the damage on both sides.
    """

    transport: str
    """Transport label with its pre-processors and parameters, e.g. `nested` or
    `raw(shell=sh)[template.interpolate(...)]`."""
    reply_set: str
    """`oracle`, `naive`, or the name of a reply file."""
    tasks: int
    """How many core tasks were measured (both runs carried out)."""
    passed_raw: int
    passed_boundary: int
    role: str = "path"
    """One of EVIDENCE_ROLES."""
    route: str = ""
    """The plausible value this route assumes for a fact the code leaves open (`interpreter
    bash`), "" when the code fixes every fact."""
    points: float | None = None
    """Family-weighted pass(boundary) - pass(raw) over the measured core tasks, in points;
    None when nothing could be measured."""
    errors: int = 0
    """Runs (raw or boundary, core or not) that could not be carried out."""
    error: str = ""
    """The first of those runs' reasons (`error: ...`), "" when none."""
    families: tuple[tuple[str, float], ...] = ()
    """(core family, points) for every family whose damage is not zero, most damaged first."""
    boundary_tasks: int = 0
    """Boundary-family tasks (outside the core) measured on both paths."""
    boundary_broken: tuple[str, ...] = ()
    """Those of them that pass raw and fail through the boundary (reported apart from damage)."""

    @property
    def damage_pp(self) -> float:
        """pass(boundary) - pass(raw), in percentage points (negative means damage)."""
        if self.points is not None:
            return self.points
        if self.tasks == 0:
            return 0.0
        return round(100.0 * (self.passed_boundary - self.passed_raw) / self.tasks, 1)

    @property
    def measured(self) -> bool:
        """False when no core task could be measured (every run errored or none ran)."""
        return self.tasks > 0 and (self.points is not None or not self.errors)


@dataclass(frozen=True)
class Suppression:
    """Why a finding is not reported as active: an inline comment, config, or the baseline."""

    kind: str
    """`inline`, `config` or `baseline`."""
    reason: str


FACT_SOURCES = ("code", "api", "range", "default", "hint")
"""Where a fact of a derived path comes from: `code` (the analysis read it from the scanned
code), `api` (the behaviour of a known library the code calls, a table of
`static/path.py`), `range` (the code leaves it open: every plausible value is measured),
`default` (nothing in the code says: the transport's default is used), `hint` (the analysis
holds no fact: read from the sink's source text by the class's transport hint)."""


@dataclass(frozen=True)
class Mechanism:
    """A transport or a pre-processor as the adapters name it: `name` plus parameters, the
    `transport = {name, params}` and `preprocess = [...]` entries of system_adapters/*.toml."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        """`name` or `name(k=v,...)` with the parameters sorted."""
        if not self.params:
            return self.name
        inner = ",".join(f"{k}={_word(v)}" for k, v in sorted(self.params.items()))
        return f"{self.name}({inner})"


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(str(x) for x in value) + "]"
    if isinstance(value, Mapping):
        return "{" + " ".join(f"{k}={v}" for k, v in sorted(value.items())) + "}"
    return str(value)


@dataclass(frozen=True)
class Route:
    """One way of replaying a derived path: its pre-processors, then its transport."""

    transport: Mechanism
    preprocess: tuple[Mechanism, ...] = ()
    assumes: str = ""
    """The plausible value this route takes for a fact the code leaves open (`interpreter
    bash`); "" when the code fixes every fact."""


@dataclass(frozen=True)
class PathFact:
    """One fact of a derived path: which field, its value, where it comes from."""

    field: str
    """`program`, `flags`, `tty`, `interactive`, `environment`, `tokenizer`, `template`,
    `marker`, `preprocess`, `hop`, `interpreter`, `contract`, `stdin`, `keys`..."""
    value: str
    source: str
    """One of FACT_SOURCES."""
    where: str = ""
    """`path:line` of the code that says so ("" when nothing in the code does)."""


@dataclass(frozen=True)
class DerivedPath:
    """The boundary path R takes at a finding, derived from the static analysis.

    Its comparable fields are those of an adapter's `BoundaryPath` (system_adapters/*.toml):
    contract, class, shell parses, parse layers, transport and pre-processors, so that the
    path a scan derives and the path an adapter models compare field by field. `routes[0]`
    is the path; a fact the code leaves open adds one route per plausible value (the damage
    is then a range). `fixed` is the fix applied to each route, in the same order.
    """

    contract: Contract
    boundary_class: BoundaryClass
    shell_parses: int
    parse_layers: tuple[str, ...]
    routes: tuple[Route, ...]
    facts: tuple[PathFact, ...] = ()
    fix: str = ""
    """The fix in words ("" when none is needed at this boundary)."""
    fixed: tuple[Route, ...] = ()
    """The fix applied to each route (aligned with `routes`); empty when no fix is needed."""
    notes: tuple[str, ...] = ()
    """What the replay leaves out, and where a fact fell back to the transport hint."""
    unmeasurable: str = ""
    """Why no route can be replayed with the task suite ("" when one can)."""

    @property
    def transport(self) -> Mechanism:
        """The path's transport (its first route's)."""
        return self.routes[0].transport

    @property
    def preprocess(self) -> tuple[Mechanism, ...]:
        """The path's pre-processors (its first route's)."""
        return self.routes[0].preprocess

    @property
    def hinted(self) -> bool:
        """True when a fact fell back to the sink-text transport hint."""
        return any(f.source == "hint" for f in self.facts)

    def fact(self, name: str) -> PathFact | None:
        """The first fact about field `name`."""
        return next((f for f in self.facts if f.field == name), None)


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
    boundary_path: DerivedPath | None = None
    """The path R takes here, derived from the analysis (model-controlled findings only)."""
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
