"""The adapter model: one audited system as data, built by the loader from system_adapters/*.toml.

An `Adapter` pins a repository at the study's commit, quotes the study's Table-8 row verbatim
(`StudyRow`), and lists one or more `BoundaryPath`s. A path is one way model output reaches a
process in that system: its contract and boundary class, the parse layers R goes through, the
source `Anchor`s where the static scan must find it, the named pre-processors the harness
applies to R, and the transport (name + parameters) that reproduces the mechanism for real.
`expect` holds the boundary facts systems.md predicts (probe id -> outcome), which the
probes measure and the tests compare. See docs/adapters.md for the file format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from boundary_audit.taxonomy import BoundaryClass, Contract

ANCHOR_KINDS = ("sink", "text")
"""`sink`: the static scan must report a finding of the path's class there; `text`: the
anchor's lines must contain a literal text (context anchors such as a caller)."""


@dataclass(frozen=True)
class Anchor:
    """A span of the system's source that carries the boundary: the Table-8 "file:lines"."""

    path: str
    """Path relative to the repository root."""
    start_line: int
    end_line: int
    kind: str
    """One of ANCHOR_KINDS."""
    boundary_class: BoundaryClass | None = None
    """For `sink` anchors: the class the static finding must have."""
    sink: str | None = None
    """For `sink` anchors: optional text the finding's sink name must contain."""
    text: str | None = None
    """For `text` anchors: the literal text that must appear within the lines."""
    note: str = ""

    def label(self, commit: str | None = None) -> str:
        """`path:start-end` (and `@sha7` when a commit is given)."""
        lines = (
            f"{self.start_line}"
            if self.start_line == self.end_line
            else f"{self.start_line}-{self.end_line}"
        )
        return f"{self.path}:{lines}" + (f"@{commit[:7]}" if commit else "")


@dataclass(frozen=True)
class StepSpec:
    """A pre-processor named in the adapter, with its parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TransportSpec:
    """The transport that reproduces the mechanism, with its parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BoundaryPath:
    """One route from model output to a process in the audited system."""

    id: str
    title: str
    row: bool
    """True: a Table-8 row of its own; False: a variant listed under the table."""
    extra: bool
    """True for a row the study's table does not have (compared with no study row)."""
    contract: Contract
    boundary_class: BoundaryClass
    shell_parses: int
    """Shell parses R goes through before execve (the taxonomy default or the system's own)."""
    parse_layers: tuple[str, ...]
    """Every layer R crosses, in order (JSON decode, regex, tokenizer, tmux, pty, shell...)."""
    observed: str
    """What the harness does with R, in one sentence (read from the code)."""
    fix: str
    """What would remove the damage at this boundary."""
    transport: TransportSpec
    preprocess: tuple[StepSpec, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    marked: str = ""
    """Where the study's row and the code disagree ("" when they agree)."""
    expect: Mapping[str, str] = field(default_factory=dict)
    """Probe id -> outcome the mechanism must show (checked by the tests)."""
    notes: tuple[str, ...] = ()
    """What the reproduction leaves out, said plainly."""


@dataclass(frozen=True)
class StudyRow:
    """The study's Table-8 row, verbatim."""

    contract: str
    anchor: str
    observed: str


@dataclass(frozen=True)
class Adapter:
    """One audited system."""

    id: str
    name: str
    repository: str
    commit: str
    """The study's pinned commit as printed (a short sha) or a full sha."""
    study: StudyRow
    paths: tuple[BoundaryPath, ...]
    source_file: str
    """Where the adapter was read from (a packaged path or a user file)."""
    language: str = ""
    order: int = 1000
    """Position in the report (the study's Table-8 order for the six); then by id."""

    def path(self, path_id: str) -> BoundaryPath:
        """The path with id `path_id` (KeyError if none)."""
        for p in self.paths:
            if p.id == path_id:
                return p
        raise KeyError(path_id)

    def label(self, path: BoundaryPath) -> str:
        """`system:path`, the transport label every record of this path carries."""
        return f"{self.id}:{path.id}"
