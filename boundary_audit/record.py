"""The run record: what one reply did to one task through one transport, in one sandbox.

The one record type of a run, whoever ran it: the probe runner (the rows of `probe --format
json`), Table 8 and the demo, and the harness suites (which also fill `status`, `detail` and
`final_state`). It is the input of `boundary_audit.metrics` (it satisfies its `RunLike`
protocol) and of every renderer. `PROBE_FIELDS` is the probe JSON's key order; `duration_s`
is the only field that varies between identical runs, so `as_json(timings=False)` leaves it
out for byte-identical output. `draw` (which of several replies to the same task, model and
contract) is in the JSON only when it is set, right after `reply_id`, so that the runs of a
reply file without draws print exactly the bytes they printed before draws existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One run's outcome."""

    task_id: str
    family: str
    tier: int
    core: bool
    tags: tuple[str, ...] = ()
    transport: str
    """The transport's label: its name plus non-default parameters (`tmux(literal=true)`)."""
    reply_set: str
    """`oracle`, `naive`, or the reply file's name."""
    reply_id: str | None
    draw: int | None = None
    """The reply's `meta.draw` (None: the reply set has no draws)."""
    model: str | None = None
    contract: str | None = None
    """`raw`, `disclosed` or `native` for model replies; None for the built-in sets."""
    passed: bool
    reason: str = ""
    """`ok`, the validator's first differences, or `error: ...` when the machinery failed
    ("" only for a record read back for metrics, which need no more than pass/fail)."""
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    status: str = ""
    """Harness suites: the harness's own verdict for `harness:*` transports (`executed`,
    `blocked`, ...), else `ran`, `timeout`, `refused` (the transport rejected the reply) or
    `error`; "" for probe runs."""
    detail: str = ""
    """Harness suites: what the harness or transport said beyond pass/fail (the status and the
    driver's notes, or a transport's rejection or note); "" when nothing."""
    final_state: tuple[str, ...] = ()
    """Harness suites: the work dir after the run, one `path kind size excerpt` line per entry
    (capped); empty for probe runs."""

    @property
    def errored(self) -> bool:
        """True when the transport or sandbox failed rather than the reply."""
        return self.reason.startswith("error: ")

    def as_json(self, *, timings: bool = True) -> dict[str, Any]:
        """The record as a JSON-ready dict in field order; without `timings`, no duration."""
        out: dict[str, Any] = {}
        for name in PROBE_FIELDS:
            value = getattr(self, name)
            if name == "duration_s":
                if not timings:
                    continue
                value = round(value, 3)
            out[name] = list(value) if isinstance(value, tuple) else value
            if name == "reply_id" and self.draw is not None:
                out["draw"] = self.draw
        return out


PROBE_FIELDS = (
    "task_id", "family", "tier", "core", "tags", "transport", "reply_set", "reply_id", "model",
    "contract", "passed", "reason", "exit_code", "timed_out", "duration_s",
)  # fmt: skip
"""The fields of a `probe --format json` run, in key order (the harness fields are not in it;
`draw` follows `reply_id` when it is set)."""


@dataclass(frozen=True)
class SkippedTransport:
    """A transport left out because it cannot run in the chosen sandbox."""

    transport: str
    reason: str
