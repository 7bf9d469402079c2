"""The run record: what one reply did to one task through one transport, in one sandbox.

Records are the rows of `probe --format json` (`runs`), the input of `boundary_audit.metrics`
(they satisfy its `RunLike` protocol) and of every probe renderer. Field order is the JSON key
order; `duration_s` is the only field that varies between identical runs, so `as_json(timings=
False)` leaves it out for byte-identical output.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class RunRecord:
    """One run's outcome."""

    task_id: str
    family: str
    tier: int
    core: bool
    tags: tuple[str, ...]
    transport: str
    """The transport's label: its name plus non-default parameters (`tmux(literal=true)`)."""
    reply_set: str
    """`oracle`, `naive`, or the reply file's name."""
    reply_id: str
    model: str | None
    contract: str | None
    """`raw` or `disclosed` for model replies; None for the built-in sets."""
    passed: bool
    reason: str
    """`ok`, the validator's first differences, or `error: ...` when the machinery failed."""
    exit_code: int | None
    timed_out: bool
    duration_s: float

    @property
    def errored(self) -> bool:
        """True when the transport or sandbox failed rather than the reply."""
        return self.reason.startswith("error: ")

    def as_json(self, *, timings: bool = True) -> dict[str, Any]:
        """The record as a JSON-ready dict in field order; without `timings`, no duration."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "duration_s":
                if not timings:
                    continue
                value = round(value, 3)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class SkippedTransport:
    """A transport left out because it cannot run in the chosen sandbox."""

    transport: str
    reason: str
