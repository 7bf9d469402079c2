"""CLI subcommands, one module each, imported only when their command runs.

COMMANDS lists them in help order (typer's: single commands, then groups): the command's
name, its module here (which has `register(app)`), and what the root `--help` shows for it
(the first paragraph of its help, line breaks included, and its panel), so that
`boundary-audit --version` and `--help` import no subcommand and nothing below one
(`tests/test_cli_startup.py` holds both to that, and the summaries to the modules' help).
`LazyGroup` is the root command group that resolves a name to its module on first use.
"""

from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click as click
from typer import main as typer_main
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Entry:
    """One subcommand: `name` is registered by `boundary_audit.commands.<module>`."""

    name: str
    module: str
    summary: str
    panel: str | None = None


DYNAMIC, MODELS = "Dynamic", "Models"

COMMANDS: tuple[Entry, ...] = (
    Entry(
        "scan",
        "scan",
        "Find and classify every parser boundary in TARGET at one commit, and measure each\n"
        "model-controlled one by running the task suite through it (--no-probe: static only).",
    ),
    Entry("checks", "checks", "List the static checks: code, name, boundary class(es) and status."),
    Entry(
        "probe",
        "probe",
        "Run reply sets through transports in a sandbox; report pass rates and damage vs raw.",
        DYNAMIC,
    ),
    Entry(
        "table8",
        "table8",
        "Measure every audited system's boundary paths and print the Table-8 report.",
        DYNAMIC,
    ),
    Entry(
        "demo",
        "default",
        "Scan and probe the packaged specimen harnesses; write a full report, offline.",
        DYNAMIC,
    ),
    Entry(
        "generate",
        "generate",
        "Ask an OpenAI-compatible model for replies to the tasks, under raw/disclosed/native.",
        MODELS,
    ),
    Entry(
        "crossover",
        "crossover",
        "The 2x2 crossover of raw/disclosed contract with raw/boundary execution, per model.",
        DYNAMIC,
    ),
    Entry(
        "observe",
        "observe",
        "Observe a harness's command boundary from its behaviour: no source, no adapter.",
        DYNAMIC,
    ),
    Entry(
        "fleet",
        "fleet",
        "Audit every target of PLAN with every reply set on a Dask cluster; one report.",
        DYNAMIC,
    ),
    Entry(
        "harness", "harness", "Run the task suite through each audited system's own released code."
    ),
    Entry(
        "tasks",
        "tasks",
        "The task suite: list, show, and check that every task proves itself.",
        DYNAMIC,
    ),
    Entry("source", "source", "Resolve a target spec and list what a scan would read."),
)


SETTINGS: dict[str, Any] = {
    "rich_markup_mode": "rich",
    "pretty_exceptions_enable": False,
    "add_completion": False,
}
"""The root app's typer settings, which every command is built with."""


def load(entry: Entry) -> click.Command:
    """The real click command of `entry`: its module imported and registered on a scratch app
    with the root's `SETTINGS`, so it parses and renders exactly as if registered eagerly."""
    module: Any = importlib.import_module(f"boundary_audit.commands.{entry.module}")
    # NOTE(h2): what is alive now (the modules, their tables, typer) lives as long as the
    # process: leave it out of every collection, including the one at exit. It saves about
    # 0.06 s of a 2-file scan's 0.47 s (benchmarks/bench_startup.py), and scan workers
    # forked later do not write to those objects' pages just to collect them.
    gc.freeze()
    scratch = typer.Typer(**SETTINGS)
    scratch.callback()(_no_op)  # a callback makes typer build a group even for one command
    module.register(scratch)
    return typer_main.get_group(scratch).commands[entry.name]


def _no_op() -> None:
    """(the scratch group's callback; never shown)"""


class LazyGroup(TyperGroup):
    """The root group: `COMMANDS` by name, each module imported when its command is resolved.

    Help listings use each entry's summary instead, so `--help` imports no subcommand.
    """

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.commands, *(e.name for e in COMMANDS if e.name not in self.commands)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is not None:
            return found
        entry = next((e for e in COMMANDS if e.name == cmd_name), None)
        if entry is None:
            return None
        if self._listing:
            return TyperCommand(name=entry.name, help=entry.summary, rich_help_panel=entry.panel)
        command = load(entry)
        self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """typer's, with "Did you mean" drawn from `COMMANDS` (typer looks only at the ones
        already loaded)."""
        try:
            return self._click_resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                suggestions = ", ".join(f"{m!r}" for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise
