"""Boundary-fingerprint probes: canary payloads whose output says what a boundary is.

A probe is one or more replies sent through a transport in one workspace (a stateful
transport gets them in one session). Its canary is a line `ba-<canary>=<value>` that only a
reply that really ran can print; the probe's replies build that line with `printf` so that the
typed command itself (visible in a tmux pane) never contains it. Each declared outcome value
says what the boundary is; `missing` says what it means when the canary never appears.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NewType

ProbeId = NewType("ProbeId", str)

MISSING = "missing"
"""The outcome when the canary never appeared."""
UNEXPECTED = "unexpected"
"""The outcome when the canary carried a value no outcome declares."""
NAME = re.compile(r"^[a-z][a-z0-9-]*$")
"""Probe ids, canaries and outcome values."""


@dataclass(frozen=True)
class Probe:
    """One boundary fingerprint, as loaded from probes/<id>.toml."""

    id: ProbeId
    title: str
    replies: tuple[str, ...]
    canary: str
    outcomes: Mapping[str, str]
    """Declared value -> what it means."""
    missing: str
    """What it means when the canary never appears."""
    source_file: str
    notes: str = ""

    def pattern(self) -> re.Pattern[str]:
        """The canary line, anchored at a line start so a typed command never matches."""
        return re.compile(rf"(?m)^ba-{re.escape(self.canary)}=(\S*)")

    def meaning(self, outcome: str) -> str:
        """What `outcome` means for this probe."""
        if outcome == MISSING:
            return self.missing
        return self.outcomes.get(outcome, "a value no outcome declares")


@dataclass(frozen=True)
class ProbeFact:
    """What one probe measured through one boundary."""

    probe: ProbeId
    outcome: str
    """A declared value, MISSING or UNEXPECTED."""
    meaning: str
    value: str | None = None
    """The raw canary value (None when missing)."""
    detail: str = ""
    """What the boundary said when the canary is missing (a refusal, a transport note)."""

    @property
    def observed(self) -> bool:
        """True when the canary carried a declared value."""
        return self.outcome not in (MISSING, UNEXPECTED)


@dataclass(frozen=True)
class Fingerprint:
    """Every probe's fact for one transport, in probe order."""

    transport: str
    facts: tuple[ProbeFact, ...] = field(default_factory=tuple)

    def get(self, probe: str) -> ProbeFact | None:
        """The fact of probe `probe`, if it ran."""
        return next((f for f in self.facts if f.probe == probe), None)

    def as_dict(self) -> dict[str, str]:
        """probe id -> outcome."""
        return {f.probe: f.outcome for f in self.facts}
