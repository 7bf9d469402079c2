"""CLI subcommands, one module each.

COMMANDS lists their `register(app)` functions in help order.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from boundary_audit.commands import (
    checks,
    crossover,
    default,
    fleet,
    generate,
    harness,
    observe,
    probe,
    scan,
    source,
    table8,
    tasks,
)

COMMANDS: list[Callable[[typer.Typer], None]] = [
    scan.register,
    checks.register,
    harness.register,
    probe.register,
    table8.register,
    default.register,
    tasks.register,
    source.register,
    generate.register,
    crossover.register,
    observe.register,
    fleet.register,
]
