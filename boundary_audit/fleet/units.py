"""The units of a fleet and their keys: what one worker does in one step, named by its inputs.

Three kinds, each written once to the store under the key of its inputs (`store.unit_key`):

- **scan** — the static scan of one target: the commit it resolves to and, for every
  model-controlled finding, the transports its derived path needs (`measure.plan`). Keyed by
  the target spec and the scan settings (a branch is resolved once; `--refresh` resolves it
  again).
- **run** — one reply through one transport on one task, in the plan's sandbox: a
  `RunRecord`. Keyed by the target's sha (none for `raw` and for named transports, which do
  not depend on a target, so every target shares them), the transport's label, the reply
  (set, id and sha256 of its text, model, contract), the task (id and a hash of its
  definition), the sandbox and the timeout. A run that could not be carried out (`error:
  ...`) is not a result: it goes to `errors/` and a rerun does it again.
- **target** — one target's report: its findings with the evidence of its runs, the probe
  fingerprints of its routes, as the `boundary/v1` scan JSON. Keyed by the scan's key and
  every run key it reads; written only when none of its runs errored.

Every key also holds the tool's version and `UNITS`, so a new release re-measures.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from boundary_audit import __version__
from boundary_audit.fleet.store import unit_key
from boundary_audit.tasks import Reply, Task

UNITS = 1
"""The version of the unit format: raise it when a unit's meaning changes."""


def _common() -> dict[str, Any]:
    return {"tool": __version__, "units": UNITS}


def task_digest(task: Task) -> str:
    """A hash of a task's whole definition (fixture, validator, replies)."""
    return hashlib.sha256(repr(task).encode("utf-8")).hexdigest()[:32]


def reply_digest(reply: Reply) -> str:
    """A hash of one reply's text."""
    return hashlib.sha256(reply.reply.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Settings:
    """What every worker needs to know about the plan (small, sent with each unit)."""

    store: str
    select: str
    sandbox: str
    timeout_s: float
    jobs: int
    replies: tuple[str, ...]
    """The reply specs as `scan --replies` takes them (built-in names, store paths)."""
    reply_names: tuple[str, ...]
    """The names of the reply sets those specs load as, in order."""
    fixes: bool
    adapters: bool
    probes: bool
    offline: bool = False
    cache_dir: str | None = None
    command_flags: tuple[str, ...] = ()
    """The `scan` flags recorded in each target report's `command`."""


@dataclass(frozen=True)
class ScanUnit:
    """The static scan of one target."""

    target: str
    """The plan's label of the target."""
    repo: str
    refresh: bool = False

    def inputs(self, settings: Settings) -> dict[str, Any]:
        """What the result depends on."""
        return {
            "kind": "scan",
            "repo": self.repo,
            "offline": settings.offline,
            "fixes": settings.fixes,
            "adapters": settings.adapters,
            **_common(),
        }


@dataclass(frozen=True)
class RunUnit:
    """One reply through one transport on one task."""

    order: int
    """The unit's place in the plan (its sort key in every report)."""
    target_sha: str
    """The target whose derived transport this is; "" for raw and named transports."""
    target: str
    """The target label whose scan built the transport ("" for raw and named ones)."""
    transport: str
    task: Task
    reply_set: str
    reply: Reply
    key: str = field(default="", compare=False)

    def inputs(self, settings: Settings) -> dict[str, Any]:
        """What the record depends on."""
        return {
            "kind": "run",
            "target": self.target_sha,
            "transport": self.transport,
            "task": self.task.id,
            "task_sha": task_digest(self.task),
            "reply_set": self.reply_set,
            "reply_id": self.reply.reply_id,
            "reply_sha": reply_digest(self.reply),
            "model": self.reply.model,
            "contract": self.reply.contract,
            "sandbox": settings.sandbox,
            "timeout_s": settings.timeout_s,
            **_common(),
        }

    def keyed(self, settings: Settings) -> RunUnit:
        """This unit with its key filled in."""
        return RunUnit(
            self.order,
            self.target_sha,
            self.target,
            self.transport,
            self.task,
            self.reply_set,
            self.reply,
            unit_key(self.inputs(settings)),
        )


@dataclass(frozen=True)
class TargetUnit:
    """One target's report from its scan and its runs."""

    target: str
    repo: str
    scan_key: str
    run_keys: tuple[str, ...]

    def inputs(self, settings: Settings) -> dict[str, Any]:
        """What the report depends on."""
        digest = hashlib.sha256("\n".join(self.run_keys).encode()).hexdigest()
        return {
            "kind": "target",
            "scan": self.scan_key,
            "runs": digest,
            "probes": settings.probes,
            "flags": list(settings.command_flags),
            **_common(),
        }
