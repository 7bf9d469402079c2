"""The static-scan report: everything a renderer needs, and nothing from the scanner.

`ScanReport` is what `run_static` returns and what every `ReportFormat` renders. It holds the
target as given and as resolved (url, full sha), the findings in their total order (suppressed
ones included and marked, never dropped), skipped inputs, the check set that ran, and the
canonical command that regenerates it. It also defines a finding's *fingerprint*: the identity
of a finding across runs (code + path + boundary class + normalized sink text), robust to line
shifts; baselines and SARIF `partialFingerprints` both use it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from boundary_audit.finding import Evidence, Finding, Location, Skipped
from boundary_audit.taxonomy import BoundaryClass, Severity

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

    def __post_init__(self) -> None:
        fix = object.__setattr__
        fix(self, "findings", tuple(sorted(self.findings, key=report_order)))
        fix(self, "skipped", tuple(sorted(self.skipped)))
        fix(self, "checks", tuple(sorted(self.checks, key=lambda c: c.code)))
        fix(self, "languages", MappingProxyType(dict(sorted(self.languages.items()))))
        fix(self, "sink_text", MappingProxyType(dict(self.sink_text)))

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
    """`nested (oracle): 21/56 vs raw 56/56, -62.5 pp`: one measurement, as every format says it."""
    return (
        f"{ev.transport} ({ev.reply_set}): {ev.passed_boundary}/{ev.tasks} vs raw "
        f"{ev.passed_raw}/{ev.tasks}, {ev.damage_pp:+.1f} pp"
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
