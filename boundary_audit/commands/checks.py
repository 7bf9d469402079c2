"""`boundary-audit checks`: list the registered static checks (code, name, class, status).

Plain aligned text (one check per line, sorted by code) so it pipes into grep and diff; the
summary column is the first sentence of each check's documentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from boundary_audit.pipelines.scan import check_infos
from boundary_audit.results.scan import CheckInfo

_COLUMNS = ("CODE", "NAME", "CLASS", "STATUS", "SUMMARY")


def render_checks(checks: Sequence[CheckInfo], *, summaries: bool = True) -> str:
    """The listing as aligned columns with a header line."""
    rows = [_COLUMNS if summaries else _COLUMNS[:-1]]
    for c in checks:
        row = (c.code, c.name, ",".join(c.classes) or "-", c.status, c.summary)
        rows.append(row if summaries else row[:-1])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(r, widths, strict=False)), r[-1]])
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def checks(
    short: Annotated[bool, typer.Option("--short", help="Leave out the summary column.")] = False,
) -> int:
    """List the static checks: code, name, boundary class(es) and status."""
    typer.echo(render_checks(check_infos(), summaries=not short), nl=False)
    return 0


def register(app: typer.Typer) -> None:
    """Add `checks` to the CLI."""
    app.command("checks")(checks)
