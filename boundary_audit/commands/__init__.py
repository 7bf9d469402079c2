"""CLI subcommands, one module each; COMMANDS lists their `register(app)` functions in help order."""

from __future__ import annotations

from collections.abc import Callable

import typer

COMMANDS: list[Callable[[typer.Typer], None]] = []
