"""The static-scan report: everything a renderer needs, and nothing from the scanner.

`ScanReport` is what `run_static` returns and what every `ReportFormat` renders. It holds the
target as given and as resolved (url, full sha), the findings in their total order (suppressed
ones included and marked, never dropped), skipped inputs, the check set that ran, and the
canonical command that regenerates it. It also defines a finding's *fingerprint*: the identity
of a finding across runs (code + path + boundary class + normalized sink text), robust to line
shifts; baselines and SARIF `partialFingerprints` both use it.

After the probe step the report also holds what the probe did (`ProbeInfo`: the task
selection, the transports that ran, the runs that could not be carried out, the paths not
measured) and, for a finding that sits on an audited system's anchor at its pin, the field by
field comparison of its derived path with that system's adapter path (`AdapterMatch`,
`compare_paths`). `boundary_rows` is the one-line-per-boundary summary every format prints.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from boundary_audit.finding import DerivedPath, Evidence, Finding, Location, Mechanism, Skipped
from boundary_audit.static.checks import record_of
from boundary_audit.static.path import FIX_SHORT, FIX_WORDS
from boundary_audit.taxonomy import BoundaryClass, Severity

if TYPE_CHECKING:
    from boundary_audit.adapters.model import BoundaryPath
    from boundary_audit.probes.model import ProbeFact

SUPPRESSION_KINDS = ("inline", "config", "baseline")
"""Every `Suppression.kind` the report counts, in display order."""


@dataclass(frozen=True)
class CheckInfo:
    """What a renderer may say about a check (SARIF rules, the `checks` listing)."""

    code: str
    name: str
    summary: str
    """First sentence of the check's documentation."""
    help_url: str
    status: str = "stable"
    """`preview`, `stable` or `deprecated`."""
    classes: tuple[str, ...] = ()
    """Boundary classes the check can report (taxonomy values)."""
    enabled: bool = True
    """False when the configuration disabled it for this run."""
    help: str = ""
    """The check's full documentation (Markdown, ruff-style headings), or ''."""


@dataclass(frozen=True)
class Summary:
    """Counts every renderer prints the same way."""

    findings: int
    active: int
    suppressed: int
    suppressed_by: Mapping[str, int]
    """Suppressed findings per `SUPPRESSION_KINDS` entry (all kinds present, zeros included)."""
    filtered: int
    """Findings hidden by --min-severity/--min-confidence (not part of `findings`)."""
    files_scanned: int
    files_skipped: int
    files_out_of_scope: int
    """Files the scan left out as a reviewer would (tests, docs, examples...: not analysed)."""
    active_by_class: Mapping[str, int]
    """Active findings per boundary class, in taxonomy order, classes with zero omitted."""
    active_by_severity: Mapping[str, int]
    """Active findings per severity, highest first, severities with zero omitted."""
    active_model_controlled: int


def report_order(f: Finding) -> tuple[object, ...]:
    """The total order of findings in a report: `Finding.sort_key`, then the rest of the span."""
    p = f.primary
    return (*f.sort_key, p.end_line, p.end_col, f.sink, f.message, f.severity.rank)


def normalize_sink_text(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped: the form fingerprints hash."""
    return re.sub(r"\s+", " ", text).strip()


def fingerprint_key(finding: Finding, sink_text: str) -> str:
    """Stable identity of a finding, independent of its line: 24 hex digits of a sha256.

    Hashes code, path, boundary class and the normalized source text of the sink (falling back
    to the sink's API name when the text is unknown), so code moving up or down keeps the key.
    """
    text = normalize_sink_text(sink_text) or finding.sink
    parts = (finding.code, finding.primary.path, finding.boundary_class.value, text)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass(frozen=True)
class RunErrors:
    """Runs of one transport that could not be carried out (never counted as damage)."""

    transport: str
    runs: int
    reason: str
    """The first run's reason (`error: ...`)."""


@dataclass(frozen=True)
class ProbeInfo:
    """What the probe step ran."""

    select: str
    tasks: int
    core: int
    reply_sets: tuple[str, ...]
    transports: tuple[str, ...]
    """Labels that ran, raw first."""
    errors: tuple[RunErrors, ...] = ()
    not_measured: tuple[tuple[str, str], ...] = ()
    """(label, why) of paths that could not run in this sandbox or could not be built."""

    @property
    def error_runs(self) -> int:
        """Runs that could not be carried out, over every transport."""
        return sum(e.runs for e in self.errors)


@dataclass(frozen=True)
class FieldCheck:
    """One field of a derived path against the same field of an adapter's path."""

    field: str
    scan: str
    adapter: str
    note: str = ""
    """Why they differ, from the derived path's facts ("" when they agree)."""

    @property
    def same(self) -> bool:
        """True when the scan's value is the adapter's."""
        return self.scan == self.adapter


@dataclass(frozen=True)
class AdapterMatch:
    """The adapter path a finding was compared with (the finding sits on its sink anchor)."""

    system: str
    path: str
    label: str
    """`system:path`, the label its measurements carry."""
    fields: tuple[FieldCheck, ...]

    @property
    def differing(self) -> tuple[FieldCheck, ...]:
        """The fields where the scan and the adapter disagree."""
        return tuple(f for f in self.fields if not f.same)


PARAM_FACTS = {
    "shell": ("program", "interpreter"),
    "flags": ("flags",),
    "prefix": ("wrapper",),
    "env": ("environment",),
    "echo": ("echo",),
    "width": ("tty",),
    "height": ("tty",),
    "quoting": ("hop",),
}
"""Transport parameter -> the derived facts that decide it (for the notes of a difference)."""
TRANSPORT_FACTS = ("program", "interpreter", "tty", "keys", "tokenizer", "hop", "transport")


def _value(v: object) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}={x}" for k, x in sorted(v.items())) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def full_params(name: str, params: Mapping[str, object]) -> dict[str, str]:
    """A transport's parameters with its defaults filled in, as comparable words."""
    from boundary_audit.transports import make_transport  # a static scan never needs one

    t = make_transport(name, **dict(params))
    try:
        return {k: _value(v) for k, v in sorted(t.params.items())}
    finally:
        t.close()


def _why(path: DerivedPath, fields: tuple[str, ...], extra: str = "") -> str:
    said = [
        f"{f.field} {f.value} ({f.source}{', ' + f.where if f.where else ''})"
        for f in path.facts
        if f.field in fields
    ]
    notes = [n for n in path.notes if any(w in n for w in fields)]
    parts = [*said, *notes]
    if extra:
        parts.append(extra)
    return "scan reads: " + "; ".join(parts) if parts else "the analysis holds no fact of it"


def _steps(steps: tuple[Mechanism, ...]) -> str:
    return ", ".join(s.label() for s in steps) or "none"


def compare_paths(path: DerivedPath, bp: BoundaryPath, system: str = "") -> tuple[FieldCheck, ...]:
    """The derived path against an adapter's path, field by field (BoundaryPath's fields)."""
    from boundary_audit.adapters.preprocess import make_preprocessor  # only when compared

    out: list[FieldCheck] = []
    marked = f"; the adapter: {bp.marked}" if bp.marked else ""
    out.append(
        FieldCheck(
            "contract",
            path.contract.value,
            bp.contract.value,
            "" if path.contract == bp.contract else _why(path, ("contract",)) + marked,
        )
    )
    out.append(
        FieldCheck(
            "class",
            path.boundary_class.value,
            bp.boundary_class.value,
            "" if path.boundary_class == bp.boundary_class else _why(path, TRANSPORT_FACTS),
        )
    )
    out.append(
        FieldCheck(
            "shell parses",
            str(path.shell_parses),
            str(bp.shell_parses),
            "" if path.shell_parses == bp.shell_parses else _why(path, TRANSPORT_FACTS),
        )
    )
    route = path.routes[0]
    other = next((r for r in path.routes[1:] if r.transport.name == bp.transport.name), None)
    name_note = ""
    if route.transport.name != bp.transport.name:
        extra = f"the adapter's transport is the scan's route `{other.assumes}`" if other else ""
        name_note = _why(path, TRANSPORT_FACTS, extra)
    out.append(FieldCheck("transport", route.transport.name, bp.transport.name, name_note))
    if route.transport.name == bp.transport.name:
        mine = full_params(route.transport.name, route.transport.params)
        theirs = full_params(bp.transport.name, bp.transport.params)
        for key in sorted(set(mine) | set(theirs)):
            a, b = mine.get(key, ""), theirs.get(key, "")
            note = "" if a == b else _why(path, PARAM_FACTS.get(key, (key,)))
            out.append(FieldCheck(f"transport.{key}", a, b, note))
    derived = tuple(Mechanism(s.name, dict(s.params)) for s in route.preprocess)
    declared = tuple(Mechanism(s.name, dict(s.params)) for s in bp.preprocess)
    note = ""
    if derived != declared:
        missing = [s for s in declared if s not in derived]
        added = [s for s in derived if s not in declared]
        parts = [
            f"`{s.label()}` not derived: the analysis holds no fact of it "
            f"({make_preprocessor(s.name, **dict(s.params)).summary})"
            for s in missing
        ]
        parts += [f"`{s.label()}` derived: {_why(path, ('preprocess', 'template'))}" for s in added]
        note = "; ".join(parts)
    out.append(FieldCheck("preprocess", _steps(derived), _steps(declared), note))
    return tuple(out)


@dataclass(frozen=True)
class ScanReport:
    """The result of one static scan, ready to render. Construct it with keyword arguments."""

    tool_version: str
    target: str
    """The target spec as the user gave it (`owner/name@rev`, a path, a URL)."""
    target_name: str
    """The target without its revision (`owner/name`, the path, the URL): what was scanned."""
    url: str
    """What was actually read (clone URL, or `file://` for a local repository)."""
    commit: str | None
    """Full 40-hex sha of the scanned commit."""
    findings: tuple[Finding, ...]
    """All findings, suppressed ones included; sorted by `Finding.sort_key` on construction."""
    skipped: tuple[Skipped, ...] = ()
    files_scanned: int = 0
    files_out_of_scope: int = 0
    """Files of a scanned language left out by scope (`--include-tests` reads them)."""
    languages: Mapping[str, int] = field(default_factory=dict)
    """Files scanned per language."""
    checks: tuple[CheckInfo, ...] = ()
    """The check set of this run, sorted by code."""
    sink_text: Mapping[Location, str] = field(default_factory=dict)
    """Source text of each primary location (what the fingerprint hashes)."""
    filtered: int = 0
    command: str = ""
    """The shell command that regenerates this report (shlex-joined argv)."""
    sandbox: str = ""
    """Where the probe ran replies (`Sandbox.confinement()`); "" when nothing was probed."""
    notes: tuple[str, ...] = ()
    """Things the user should know about the checkout (e.g. uncommitted changes not scanned);
    the CLI prints them on stderr, renderers leave them out."""
    probe: ProbeInfo | None = None
    """What the probe step ran (None for a static-only scan)."""
    adapters: Mapping[Location, AdapterMatch] = field(default_factory=dict)
    """A finding's primary location -> the audited system's path it was compared with."""
    probe_facts: Mapping[str, tuple[ProbeFact, ...]] = field(default_factory=dict)
    """Transport label (raw included) -> what the probes/ fingerprints measured through it."""

    def __post_init__(self) -> None:
        fix = object.__setattr__
        fix(self, "findings", tuple(sorted(self.findings, key=report_order)))
        fix(self, "skipped", tuple(sorted(self.skipped)))
        fix(self, "checks", tuple(sorted(self.checks, key=lambda c: c.code)))
        fix(self, "languages", MappingProxyType(dict(sorted(self.languages.items()))))
        fix(self, "sink_text", MappingProxyType(dict(self.sink_text)))
        fix(self, "adapters", MappingProxyType(dict(self.adapters)))
        fix(self, "probe_facts", MappingProxyType(dict(sorted(self.probe_facts.items()))))

    @property
    def active(self) -> tuple[Finding, ...]:
        """Findings that are not suppressed, in report order."""
        return tuple(f for f in self.findings if f.suppressed is None)

    @property
    def suppressed(self) -> int:
        """How many findings are suppressed (inline, config or baseline)."""
        return sum(1 for f in self.findings if f.suppressed is not None)

    def sink_text_of(self, finding: Finding) -> str:
        """The source text at the finding's primary location ('' when unknown)."""
        return self.sink_text.get(finding.primary, "")

    @cached_property
    def fingerprints(self) -> tuple[str, ...]:
        """`<key>:<n>` per finding, aligned with `findings`; n counts equal keys in report order."""
        seen: Counter[str] = Counter()
        out = []
        for f in self.findings:
            key = fingerprint_key(f, self.sink_text_of(f))
            seen[key] += 1
            out.append(f"{key}:{seen[key]}")
        return tuple(out)

    def adapter_of(self, finding: Finding) -> AdapterMatch | None:
        """The adapter path `finding` was compared with, if any."""
        return self.adapters.get(finding.primary)

    @property
    def error_runs(self) -> int:
        """Probe runs that could not be carried out (0 for a static-only scan)."""
        return self.probe.error_runs if self.probe is not None else 0

    def check(self, code: str) -> CheckInfo | None:
        """The CheckInfo for `code`, if the check set has it."""
        return next((c for c in self.checks if c.code == code), None)

    @cached_property
    def summary(self) -> Summary:
        """The counts of this report."""
        active = self.active
        kinds = Counter(f.suppressed.kind for f in self.findings if f.suppressed is not None)
        by_class = Counter(f.boundary_class for f in active)
        by_sev = Counter(f.severity for f in active)
        return Summary(
            findings=len(self.findings),
            active=len(active),
            suppressed=self.suppressed,
            suppressed_by={k: kinds.get(k, 0) for k in (*SUPPRESSION_KINDS, *sorted(kinds))},
            filtered=self.filtered,
            files_scanned=self.files_scanned,
            files_skipped=len(self.skipped),
            files_out_of_scope=self.files_out_of_scope,
            active_by_class={c.value: by_class[c] for c in BoundaryClass if by_class[c]},
            active_by_severity={
                s.value: by_sev[s] for s in sorted(Severity, key=lambda s: -s.rank) if by_sev[s]
            },
            active_model_controlled=sum(1 for f in active if f.model_controlled),
        )


def evidence_text(ev: Evidence) -> str:
    """`nested (oracle): 21/56 vs raw 56/56, -62.5 pp`: one measurement, as every format says it
    (core tasks; runs that could not be carried out are counted, never damage)."""
    route = f", {ev.route}" if ev.route else ""
    if not ev.measured:
        errs = plural(ev.errors, "error run")
        return f"{ev.transport} ({ev.reply_set}{route}): not measured, {errs}"
    errors = f", {plural(ev.errors, 'error run')} left out" if ev.errors else ""
    return (
        f"{ev.transport} ({ev.reply_set}{route}): {ev.passed_boundary}/{ev.tasks} vs raw "
        f"{ev.passed_raw}/{ev.tasks}, {ev.damage_pp:+.1f} pp{errors}"
    )


def plural(n: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(report: ScanReport) -> str:
    """`scanned TARGET@SHA: 12 findings (3 suppressed), 2 files skipped` (the stderr line)."""
    s = report.summary
    at = f"@{report.commit}" if report.commit else ""
    extra = [f"{s.suppressed} suppressed"]
    if s.filtered:
        extra.append(f"{s.filtered} below threshold")
    skipped = f"{plural(s.files_skipped, 'file')} skipped"
    if s.files_out_of_scope:
        skipped += f", {plural(s.files_out_of_scope, 'file')} left out by scope (--include-tests)"
    findings = f"{plural(s.findings, 'finding')} ({', '.join(extra)})"
    return f"scanned {report.target_name}{at}: {findings}, {skipped}"


@dataclass(frozen=True)
class Range:
    """Damage over the routes of one path (low = most damage), in points."""

    low: float
    high: float

    def text(self, unit: str = " pp") -> str:
        """`−66.1 pp`, or `−28.6..0.0 pp` for a range."""
        if self.low == self.high:
            return f"{points(self.low)}{unit}"
        return f"{points(self.low)}..{points(self.high)}{unit}"


def points(value: float) -> str:
    """`−1.8`, `0.0`, `+1.4`: one decimal, a real minus sign."""
    if value == 0:
        return "0.0"
    return f"{value:+.1f}".replace("-", "\u2212")


def damage_range(evs: Iterable[Evidence]) -> Range | None:
    """The range of the measured evidences' damage, None when none was measured."""
    values = [e.damage_pp for e in evs if e.measured]
    return Range(min(values), max(values)) if values else None


@dataclass(frozen=True)
class BoundaryRow:
    """One finding as the one-screen report says it."""

    finding: Finding
    status: str
    """`measured`, `static` (no probe ran), `not-model` (not a model boundary),
    `not-measured` (no route could run here) or `error` (every run failed)."""
    why: str = ""
    """For `not-model`, `not-measured` and `error`: in words."""
    reply_set: str = ""
    damage: Range | None = None
    """Core damage of the path (over its routes) for `reply_set`."""
    fix: str = ""
    """The fix in words ("" when none is needed)."""
    fix_short: str = ""
    fixed: Range | None = None
    """Core damage through the fixed path, when it was measured."""
    boundary_tasks: int = 0
    boundary_broken: tuple[str, ...] = ()
    errors: int = 0
    adapter: AdapterMatch | None = None
    adapter_damage: Range | None = None
    short: str = ""
    """For `not-model`: `not a model boundary (unknown origin)`, the narrow form of `why`."""


_SHORT_SUBJECT = {
    "a value of unknown origin": "unknown origin",
    "a constant command": "constant",
    "a fixed program with data arguments": "fixed program",
    "a value named like a command": "a name only",
}


def _subject(f: Finding) -> str:
    text = f.message.split(" reaches ", 1)[0] if " reaches " in f.message else ""
    return text[:1].lower() + text[1:] if text else "a value the model does not control"


def boundary_row(report: ScanReport, f: Finding) -> BoundaryRow:
    """What the one-screen report says of `f`."""
    match = report.adapter_of(f)
    path = f.boundary_path
    fix = path.fix if path is not None else ""
    by_words = {w: k for k, w in FIX_WORDS.items()}
    short = " + ".join(FIX_SHORT[by_words[w]] for w in fix.split("; ") if w in by_words)
    if not f.model_controlled:
        who = _subject(f)
        short = f"not a model boundary ({_SHORT_SUBJECT[who]})" if who in _SHORT_SUBJECT else ""
        return BoundaryRow(f, "not-model", f"not a model boundary: {who}", short=short)
    if report.probe is None:
        return BoundaryRow(f, "static", fix=fix, fix_short=short, adapter=match)
    if path is not None and path.unmeasurable:
        return BoundaryRow(f, "not-measured", path.unmeasurable, fix=fix, adapter=match)
    first = report.probe.reply_sets[0] if report.probe.reply_sets else ""
    mine = [e for e in f.evidence if e.reply_set == first]
    routes = [e for e in mine if e.role == "path"]
    errors = sum(e.errors for e in routes)
    if not routes:
        labels = {lab for lab, _ in report.probe.not_measured}
        why = next((w for lab, w in report.probe.not_measured if lab in labels), "")
        return BoundaryRow(f, "not-measured", why or "no route ran", fix=fix, adapter=match)
    damage = damage_range(routes)
    fixed = damage_range(e for e in mine if e.role == "fix")
    if damage is None:
        why = next((e.error for e in routes if e.error), "")
        return BoundaryRow(
            f,
            "error",
            why,
            first,
            fix=fix,
            fix_short=short,
            fixed=fixed,
            errors=errors,
            adapter=match,
        )
    broken = tuple(sorted({t for e in routes for t in e.boundary_broken}))
    return BoundaryRow(
        f,
        "measured",
        "",
        first,
        damage,
        fix,
        short,
        fixed,
        max(e.boundary_tasks for e in routes),
        broken,
        errors,
        match,
        damage_range(e for e in mine if e.role == "adapter"),
    )


def fix_text(f: Finding) -> str:
    """The fix of `f`: its derived path's (what was measured), else its class's."""
    if f.boundary_path is not None:
        return f.boundary_path.fix or "none needed at this boundary"
    return record_of(f.boundary_class).fix


def fix_verified(f: Finding, reply_set: str) -> str:
    """`fix verified (oracle): −66.1 pp → 0.0 pp`, or "" when the fix was not measured."""
    before = damage_range(e for e in f.evidence if e.role == "path" and e.reply_set == reply_set)
    after = damage_range(e for e in f.evidence if e.role == "fix" and e.reply_set == reply_set)
    if before is None or after is None:
        return ""
    return f"fix verified ({reply_set}): {before.text()} → {after.text()}"


def boundary_rows(report: ScanReport) -> tuple[BoundaryRow, ...]:
    """One row per active finding, in report order."""
    return tuple(boundary_row(report, f) for f in report.active)
