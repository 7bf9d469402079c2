"""The static pipeline as one library call: `run_static(options) -> ScanReport`.

source (open the checkout at the resolved sha) → config (--config, or the target's own
boundary-audit.toml / pyproject.toml) and baseline, both validated before any scanning →
static (`scan_files`) → config applied (disabled checks, severities, ignores) → thresholds
(--min-severity / --min-confidence; hidden findings are counted) → baseline → the report.
The CLI command only parses options, calls this, renders, and picks the exit code; `gate`
says which findings trip `--fail-on`.
"""

from __future__ import annotations

import inspect
import shlex
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import __version__
from boundary_audit.config import Config, apply_config, discover_config, load_config_file
from boundary_audit.finding import Finding, Location
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.results.baseline import Baseline, apply_baseline, load_baseline
from boundary_audit.results.scan import CheckInfo, ScanReport, report_order
from boundary_audit.source import Checkout, open_checkout
from boundary_audit.source.spec import redact
from boundary_audit.static.checks import CHECKS
from boundary_audit.static.engine import ScanOptions, ScanResult, scan_files
from boundary_audit.static.parsing import may_be_source
from boundary_audit.taxonomy import BoundaryClass, Confidence, Severity

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
SINK_TEXT_LIMIT = 400
"""Characters of sink source text kept per finding (fingerprints hash the normalized text)."""


@dataclass(frozen=True)
class StaticOptions:
    """Everything `run_static` needs; the CLI builds one from its options."""

    target: str
    offline: bool = False
    refresh: bool = False
    cache_dir: Path | None = None
    include_constant: bool = False
    include_tests: bool = False
    """Read tests, docs, examples, benchmarks and vendored code too (`static/scope.py`)."""
    no_ignores: bool = False
    config: Path | None = None
    baseline: Path | None = None
    min_confidence: Confidence | None = None
    min_severity: Severity | None = None
    jobs: int = 2
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    command_flags: tuple[str, ...] = ()
    """The CLI flags that shape the report's content (format, thresholds...); the report's
    `command` is `boundary-audit scan <target pinned to its sha> <command_flags>`."""


def _summary_of(doc: str | None) -> str:
    """First sentence of a check's docstring, skipping a "What it does" heading."""
    lines = [ln.strip() for ln in (doc or "").strip().splitlines()]
    paragraph: list[str] = []
    for ln in lines:
        if ln.rstrip(":").lower() in {"what it does", "## what it does", "# what it does"}:
            continue
        if not ln and paragraph:
            break
        if ln and not set(ln) <= {"#", "-", "=", " "}:
            paragraph.append(ln)
    text = " ".join(paragraph)
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _summary(check: object) -> str:
    own = getattr(check, "summary", None)
    text = own() if callable(own) else own
    return str(text) if text else _summary_of(check.__doc__)


def _classes(check: object) -> tuple[str, ...]:
    raw = getattr(check, "classes", None) or getattr(check, "boundary_classes", None)
    if raw is None:
        one = getattr(check, "boundary_class", None)
        raw = () if one is None else (one,)
    return tuple(str(getattr(c, "value", c)) for c in raw)


def check_infos(disabled: Collection[str] = ()) -> tuple[CheckInfo, ...]:
    """What the report says about each registered check (sorted by code)."""
    out = []
    for check in CHECKS:
        code = str(check.code)
        status = getattr(check, "status", "stable")
        out.append(
            CheckInfo(
                code=code,
                name=str(check.name),
                summary=_summary(check),
                help_url=str(
                    getattr(check, "help_url", "")
                    or f"https://boundary-audit.invalid/checks/{code}"
                ),
                status=str(getattr(status, "value", status)),
                classes=_classes(check),
                enabled=code not in disabled,
                help=inspect.cleandoc(check.__doc__ or ""),
            )
        )
    return tuple(sorted(out, key=lambda c: c.code))


def _read_root_file(checkout: Checkout, name: str) -> bytes | None:
    for f in checkout.files(paths=[name]):
        if f.path == name and f.data is not None:
            return bytes(f.data)
    return None


def _load_config(options: StaticOptions, checkout: Checkout, codes: Collection[str]) -> Config:
    if options.config is not None:
        return load_config_file(options.config, known_codes=codes)
    where = f"{checkout.sha[:7]}:"
    return discover_config(lambda n: _read_root_file(checkout, n), known_codes=codes, where=where)


def passes_thresholds(f: Finding, options: StaticOptions) -> bool:
    """True when `f` meets --min-severity and --min-confidence."""
    if options.min_severity is not None and f.severity.rank < options.min_severity.rank:
        return False
    return options.min_confidence is None or f.confidence.rank >= options.min_confidence.rank


def _span_text(data: bytes, loc: Location) -> str:
    if loc.end_byte > loc.start_byte:
        raw = data[loc.start_byte : loc.end_byte]
    else:
        raw = b"\n".join(data.splitlines()[loc.start_line - 1 : loc.end_line])
    return raw.decode("utf-8", "replace")[:SINK_TEXT_LIMIT]


def sink_texts(checkout: Checkout, findings: Sequence[Finding]) -> dict[Location, str]:
    """Source text of every primary location, read in one pass over the affected files."""
    by_path: dict[str, list[Location]] = {}
    for f in findings:
        by_path.setdefault(f.primary.path, []).append(f.primary)
    out: dict[Location, str] = {}
    for source in checkout.files(paths=sorted(by_path)):
        if source.data is not None:
            for loc in by_path.get(source.path, ()):
                out[loc] = _span_text(bytes(source.data), loc)
    return out


def _scan(options: StaticOptions, checkout: Checkout) -> ScanResult:
    scan_options = ScanOptions(
        include_constant=options.include_constant,
        no_ignores=options.no_ignores,
        jobs=options.jobs,
        max_file_bytes=options.max_file_bytes,
        scope=not options.include_tests,
    )
    # NOTE(h2): a file whose name rules out every scanned language is not read: in camel@13dc7a7
    # such files (images, data, docs) were 100 of 110 MB and 0.55 s of a 2.9 s scan's wall.
    files = checkout.files(max_bytes=options.max_file_bytes, want=may_be_source)
    return scan_files(files, commit=checkout.sha, options=scan_options)


def target_name(target: str, rev: str | None) -> str:
    """`target` without its `@rev` suffix."""
    suffix = f"@{rev}" if rev else ""
    return target[: -len(suffix)] if suffix and target.endswith(suffix) else target


def pinned_target(checkout: Checkout, target: str) -> str:
    """The target at its resolved sha: an absolute path for local repositories."""
    where = (
        checkout.spec.location
        if checkout.spec.kind == "local"
        else (redact(target_name(target, checkout.spec.rev)))
    )
    return f"{where}@{checkout.sha}"


def run_static(options: StaticOptions, *, progress: Progress | None = None) -> ScanReport:
    """Check out the target, scan it and return the report (raises BoundaryAuditError)."""
    progress = progress or NoProgress()
    progress.note(f"resolving {options.target}")
    checkout = open_checkout(
        options.target,
        offline=options.offline,
        refresh=options.refresh,
        cache_dir=options.cache_dir,
        progress=progress.note,
    )
    codes = [c.code for c in check_infos()]
    config = _load_config(options, checkout, codes)
    baseline = load_baseline(options.baseline) if options.baseline else Baseline()
    progress.note(f"scanning {checkout.sha}")
    result = _scan(options, checkout)
    configured = apply_config(result.findings, config, no_ignores=options.no_ignores)
    kept = [f for f in configured if passes_thresholds(f, options)]
    texts = sink_texts(checkout, kept)
    kept = apply_baseline(sorted(kept, key=report_order), texts, baseline)
    return ScanReport(
        tool_version=__version__,
        target=redact(options.target),
        target_name=redact(target_name(options.target, checkout.spec.rev)),
        url=checkout.url,
        commit=checkout.sha,
        findings=tuple(kept),
        skipped=tuple(result.skipped),
        files_scanned=result.files_scanned,
        files_out_of_scope=result.out_of_scope,
        languages=dict(result.languages),
        checks=check_infos(config.disabled),
        sink_text=texts,
        filtered=len(configured) - len(kept),
        command=shlex.join(
            [
                "boundary-audit",
                "scan",
                pinned_target(checkout, options.target),
                *options.command_flags,
            ]
        ),
        notes=tuple(checkout.notes),
    )


def gate(report: ScanReport, classes: Iterable[BoundaryClass]) -> tuple[Finding, ...]:
    """Active, model-controlled findings whose class is in `classes` (what --fail-on trips on)."""
    wanted = set(classes)
    return tuple(f for f in report.active if f.model_controlled and f.boundary_class in wanted)
