"""Baselines: accept the findings that exist today, report only new ones.

A baseline file records each accepted finding by its fingerprint key (code + path + boundary
class + normalized sink text; see `results.scan.fingerprint_key`), so a finding that moves to
another line still matches, while a new sink, a changed sink expression or a different class
does not. Keys are counted: two identical sinks in one file need two entries. Matched findings
are marked suppressed (kind `baseline`) and counted in the summary, never dropped.

File format (JSON, `"schema": "boundary-audit-baseline/v1"`): `entries` is a sorted list of
`{key, count, code, path, class, sink}`; only `key` and `count` are read back, the rest is for
reviewers.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary_audit.errors import ConfigError, ReportError
from boundary_audit.finding import Finding, Location, Suppression
from boundary_audit.results.scan import ScanReport, fingerprint_key, normalize_sink_text

BASELINE_SCHEMA = "boundary-audit-baseline/v1"


@dataclass(frozen=True)
class Baseline:
    """Accepted fingerprint keys with how many findings each may absorb."""

    origin: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(self.counts.values())


def _fail(origin: str, key: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{origin}: {key}: {problem}",
        hint="regenerate it with `boundary-audit scan TARGET --write-baseline FILE`",
    )


def _entry(origin: str, i: int, entry: Any) -> tuple[str, int]:
    where = f"entries[{i}]"
    if not isinstance(entry, dict):
        raise _fail(origin, where, "expected an object")
    key, count = entry.get("key"), entry.get("count", 1)
    if not isinstance(key, str) or len(key) != 24 or any(c not in "0123456789abcdef" for c in key):
        raise _fail(origin, f"{where}.key", f"expected 24 lowercase hex digits, got {key!r}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise _fail(origin, f"{where}.count", f"expected a positive integer, got {count!r}")
    return key, count


def parse_baseline(data: bytes, *, origin: str) -> Baseline:
    """Validate a baseline document."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{origin}: not a JSON baseline: {exc}", hint="regenerate it with --write-baseline FILE"
        ) from None
    if not isinstance(doc, dict):
        raise _fail(origin, "(top level)", "expected an object")
    if doc.get("schema") != BASELINE_SCHEMA:
        raise _fail(origin, "schema", f"expected {BASELINE_SCHEMA!r}, got {doc.get('schema')!r}")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise _fail(origin, "entries", "expected an array")
    counts: Counter[str] = Counter()
    for i, entry in enumerate(entries):
        key, count = _entry(origin, i, entry)
        counts[key] += count
    return Baseline(origin, dict(counts))


def load_baseline(path: Path) -> Baseline:
    """The baseline in `path`; unreadable or invalid files are a ConfigError (exit 4)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    return parse_baseline(data, origin=str(path))


def apply_baseline(
    findings: Iterable[Finding], sink_text: Mapping[Location, str], baseline: Baseline
) -> list[Finding]:
    """Findings in the given order, the first `count` active ones per key marked suppressed."""
    budget = Counter(baseline.counts)
    out = []
    for f in findings:
        key = fingerprint_key(f, sink_text.get(f.primary, ""))
        if f.suppressed is None and budget[key] > 0:
            budget[key] -= 1
            f = f.suppress(Suppression("baseline", f"in baseline {baseline.origin}"))
        out.append(f)
    return out


def render_baseline(report: ScanReport) -> str:
    """A baseline accepting every finding of `report` that inline comments or the config do not
    already suppress (so rewriting a baseline keeps what it matched)."""
    rows: dict[str, dict[str, Any]] = {}
    for f in report.findings:
        if f.suppressed is not None and f.suppressed.kind != "baseline":
            continue
        text = report.sink_text_of(f)
        key = fingerprint_key(f, text)
        row = rows.setdefault(
            key,
            {
                "key": key,
                "count": 0,
                "code": f.code,
                "path": f.primary.path,
                "class": f.boundary_class.value,
                "sink": normalize_sink_text(text) or f.sink,
            },
        )
        row["count"] += 1
    entries = sorted(rows.values(), key=lambda r: (r["path"], r["code"], r["sink"], r["key"]))
    doc = {
        "schema": BASELINE_SCHEMA,
        "tool_version": report.tool_version,
        "target": report.target_name,
        "commit": report.commit,
        "entries": entries,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_baseline(report: ScanReport, path: Path) -> None:
    """Write `render_baseline(report)` to `path` (ReportError if it cannot be written)."""
    try:
        path.write_text(render_baseline(report), encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ReportError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None
