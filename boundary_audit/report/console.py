"""One rich `Console` recipe for every terminal renderer: output that ignores the environment.

A renderer must give the same text whatever the caller's terminal, `COLUMNS`, `NO_COLOR`,
`FORCE_COLOR` or `TERM`; only its own `color` and `width` arguments may change the output.
rich reads all of those from the environment unless it is handed an empty one, so every
terminal renderer (scan, probe, Table 8) should build its console here.
"""

from __future__ import annotations

from typing import IO

from rich.console import Console


def isolated_console(file: IO[str], *, width: int, color: bool) -> Console:
    """A console writing to `file`, `width` columns wide, ANSI colors only when `color`."""
    return Console(
        file=file,
        width=width,
        color_system="standard" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
        soft_wrap=False,
        _environ={},
    )
