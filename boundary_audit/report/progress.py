"""The CLI's progress bar: a rich bar on stderr behind the `boundary_audit.progress.Progress`
protocol.

Library code takes any `Progress` and defaults to a no-op; only the CLI builds this one, and
only when stderr is a terminal (so redirected output and CI logs stay clean); rich is imported
only then. `advance` is
called from the runner's threads; rich's Progress is thread-safe.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from boundary_audit.progress import NoProgress, Progress

if TYPE_CHECKING:
    from rich.progress import Progress as RichBar

    from boundary_audit.record import RunRecord


class BarProgress:
    """A transient bar: `probing  [#####     ] 12/56  3 failed  0:00:04`."""

    def __init__(self, stream: TextIO | None = None, description: str = "probing") -> None:
        from rich.console import Console

        self._stream = stream or sys.stderr
        self._console = Console(file=self._stream)
        self._description = description
        self._bar: RichBar | None = None
        self._task: object = None
        self._failed = 0

    def start(self, total: int) -> None:
        """Show the bar for `total` runs."""
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichBar

        self._bar = RichBar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            console=self._console,
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(self._description, total=total, failed=0)

    def advance(self, record: RunRecord) -> None:
        """One more run done; count it as failed if it did not pass."""
        if self._bar is None:
            return
        self._failed += not record.passed
        self._bar.update(self._task, advance=1, failed=self._failed)  # type: ignore[arg-type]

    def note(self, message: str) -> None:
        """A message line above the bar (`boundary-audit: MESSAGE`)."""
        line = f"boundary-audit: {message}"
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            self._stream.write(line + "\n")

    def finish(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def progress_for(stream: TextIO | None = None, description: str = "probing") -> Progress:
    """A bar when `stream` (default stderr) is a terminal, else the no-op."""
    stream = stream or sys.stderr
    if stream.isatty():
        return BarProgress(stream, description)
    return NoProgress()


class UnitsBar:
    """The fleet's bar: `fleet  [####   ] 120/540  3 failed  2 workers  0:01:04`.

    The total grows while the scans arrive (each brings its target's runs). On a stream that
    is not a terminal there is no bar; the notes are still written, one line each."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._bar: RichBar | None = None
        self._task: object = None
        if self._stream.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as RichBar

            self._bar = RichBar(
                TextColumn("fleet"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TextColumn("{task.fields[workers]} workers"),
                TimeElapsedColumn(),
                console=Console(file=self._stream),
                transient=True,
            )

    def units(self, total: int, done: int, failed: int, workers: int) -> None:
        """The counts now."""
        if self._bar is None:
            return
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task("fleet", total=total, failed=0, workers=0)
        self._bar.update(
            self._task,  # type: ignore[arg-type]
            total=total,
            completed=done + failed,
            failed=failed,
            workers=workers,
        )

    def note(self, message: str) -> None:
        """A message line above the bar (`boundary-audit: MESSAGE`)."""
        line = f"boundary-audit: {message}"
        if self._bar is not None and self._task is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            self._stream.write(line + "\n")
            self._stream.flush()

    def finish(self) -> None:
        """Remove the bar."""
        if self._bar is not None and self._task is not None:
            self._bar.stop()
        self._bar = None
