"""Inline suppressions: `# boundary-audit: ignore[BA101] reason` (or `//` in C-like languages).

A suppression applies to findings whose primary location starts on the comment's line or
on the line below it. With a reason it marks them `Suppression("inline", reason)`; they
stay in the result. Without a reason it suppresses nothing and produces a BA901 finding
(carrying the class of the finding it targeted). `no_ignores` disregards all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from boundary_audit.finding import Finding, FindingBuilder, Location, Suppression
from boundary_audit.static.checks.suppression_without_reason import SuppressionWithoutReason
from boundary_audit.taxonomy import Confidence, Severity

_PATTERN = re.compile(r"boundary-audit:\s*ignore\[([A-Za-z0-9_, -]*)\](.*)$")


@dataclass(frozen=True)
class InlineIgnore:
    """One parsed suppression comment."""

    line: int
    """1-based line of the comment."""
    codes: frozenset[str]
    reason: str
    location: Location


def parse_comment(text: str, loc: Location) -> InlineIgnore | None:
    """The suppression in comment `text`, if it has one."""
    m = _PATTERN.search(text)
    if m is None:
        return None
    codes = frozenset(c.strip().upper() for c in m.group(1).split(",") if c.strip())
    reason = m.group(2).strip().rstrip("*/").strip()
    return InlineIgnore(loc.start_line, codes, reason, loc)


def apply(
    findings: list[Finding], ignores: list[InlineIgnore], language: str, no_ignores: bool
) -> list[Finding]:
    """Findings with suppressions applied, plus BA901 findings for reason-less suppressions."""
    if no_ignores or not ignores:
        return findings
    out: list[Finding] = []
    diagnostics: dict[tuple[int, str], Finding] = {}
    for f in findings:
        line = f.primary.start_line
        hit = next(
            (ig for ig in ignores if f.code in ig.codes and ig.line in (line, line - 1)), None
        )
        if hit is None:
            out.append(f)
        elif hit.reason:
            out.append(f.suppress(Suppression("inline", hit.reason)))
        else:
            out.append(f)
            key = (hit.line, f.code)
            if key not in diagnostics:
                diagnostics[key] = diagnostic(hit, f, language)
    return out + list(diagnostics.values())


def diagnostic(ig: InlineIgnore, target: Finding, language: str) -> Finding:
    """The BA901 finding for a suppression without a reason."""
    check = SuppressionWithoutReason
    return (
        FindingBuilder(check.code, check.name, language)
        .primary(ig.location)
        .related(target.primary)
        .set(
            message=f"Suppression of {target.code} has no reason, so it does not suppress.",
            boundary_class=target.boundary_class,
            parse_layers=target.parse_layers,
            severity=Severity.LOW,
            confidence=Confidence.MEDIUM,
            sink=target.sink,
            model_controlled=target.model_controlled,
            model_evidence=target.model_evidence,
        )
        .build()
    )
