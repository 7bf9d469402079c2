"""What a long-running pipeline reports while it works: one protocol for every pipeline.

`Progress` follows runs (the probe runner, Table 8, the demo, the harness suites): `start`
once with the number of runs, `advance` per finished run (from the runner's threads, in
completion order), `finish` at the end; `note` carries a one-line message (what is being
resolved, scanned or measured). The CLI shows a rich bar (`report.progress.BarProgress`);
library callers and tests get `NoProgress` or record. `Say` is the plain message callback of
lower stages (a clone's fetch, a harness install) that have no runs to count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from boundary_audit.record import RunRecord

Say = Callable[[str], None]
"""A one-line message callback (no runs to count)."""


def silent(_: str) -> None:
    """The default `Say`: says nothing."""


class Progress(Protocol):
    """What a pipeline reports while it works (see the module docstring)."""

    def start(self, total: int) -> None:
        """`total` runs are about to start."""

    def advance(self, record: RunRecord) -> None:
        """One run finished."""

    def note(self, message: str) -> None:
        """A one-line message about what happens now."""

    def finish(self) -> None:
        """Every run finished."""


class NoProgress:
    """The default: report nothing."""

    def start(self, total: int) -> None:
        """Nothing."""

    def advance(self, record: RunRecord) -> None:
        """Nothing."""

    def note(self, message: str) -> None:
        """Nothing."""

    def finish(self) -> None:
        """Nothing."""
