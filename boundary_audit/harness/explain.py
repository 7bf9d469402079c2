"""Written explanations of harness/model disagreements, kept as data next to the drivers.

Every disagreement a `harness compare` finds must be either explained (the mechanism that makes
the real harness differ, when our model is right to differ or cannot follow) or answered with
a fix proposal for the adapter. Both live in `explanations/<system>.toml`, shipped with the
package (`--explanations FILE` reads another file):

    [[explanation]]
    id = "bashlex-heredoc"            # unique in the file
    kind = "explanation"              # or "adapter-fix"
    tasks = ["heredoc-write-*"]       # task-id globs (required)
    against = ["session"]             # transport labels it applies to (optional: any)
    reply_sets = ["oracle"]           # optional: any
    harness_status = ["executed"]     # the harness's own status (optional: any)
    text = "why the two differ, or what the adapter should change"

A disagreement takes the first entry whose every filter matches. A malformed file is a
ConfigError naming the file and the entry.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from boundary_audit.errors import ConfigError
from boundary_audit.record import RunRecord

KINDS = ("explanation", "adapter-fix")
_FILTERS = ("tasks", "against", "reply_sets", "harness_status")
_KEYS = {"id", "kind", "text", *_FILTERS}


@dataclass(frozen=True)
class Explanation:
    """Why a set of disagreements happens, or how the adapter should change."""

    id: str
    kind: str
    text: str
    tasks: tuple[str, ...]
    against: tuple[str, ...] = ()
    reply_sets: tuple[str, ...] = ()
    harness_status: tuple[str, ...] = ()

    def covers(self, harness: RunRecord, against: RunRecord) -> bool:
        """True when every filter of this entry matches the pair."""
        return (
            any(fnmatch.fnmatchcase(harness.task_id, p) for p in self.tasks)
            and (not self.against or against.transport in self.against)
            and (not self.reply_sets or harness.reply_set in self.reply_sets)
            and (not self.harness_status or harness.status in self.harness_status)
        )


def explain(
    entries: Sequence[Explanation], harness: RunRecord, against: RunRecord
) -> Explanation | None:
    """The first entry covering the pair, or None."""
    return next((e for e in entries if e.covers(harness, against)), None)


def packaged(system: str) -> tuple[Explanation, ...]:
    """The explanations shipped for `system` (none if there is no file)."""
    node = resources.files("boundary_audit.harness").joinpath("explanations", f"{system}.toml")
    if not node.is_file():
        return ()
    return parse(node.read_text(encoding="utf-8"), f"explanations/{system}.toml")


def load(path: Path) -> tuple[Explanation, ...]:
    """Explanations from a user's file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read explanations: {exc}") from None
    return parse(text, str(path))


def parse(text: str, where: str) -> tuple[Explanation, ...]:
    """Parse and check an explanations document."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    extra = sorted(set(doc) - {"explanation"})
    if extra:
        raise ConfigError(f"{where}: unknown top-level key {extra[0]!r} (expected [[explanation]])")
    entries = [
        _entry(raw, f"{where}: explanation[{i}]")
        for i, raw in enumerate(doc.get("explanation", []))
    ]
    ids = [e.id for e in entries]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise ConfigError(f"{where}: duplicate explanation id {dup!r}")
    return tuple(entries)


def _entry(raw: Any, where: str) -> Explanation:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    for key in ("id", "kind", "text"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(f"{where}: {key}: a non-empty string is required")
    if raw["kind"] not in KINDS:
        raise ConfigError(f"{where}: kind: {raw['kind']!r} is not one of {', '.join(KINDS)}")
    lists = {}
    for key in _FILTERS:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where}: {key}: a list of non-empty strings is required")
        lists[key] = tuple(value)
    if not lists["tasks"]:
        raise ConfigError(f"{where}: tasks: at least one task-id glob is required")
    return Explanation(id=raw["id"], kind=raw["kind"], text=" ".join(raw["text"].split()), **lists)
