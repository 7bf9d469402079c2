"""`boundary-audit tasks list|show|check|hazards`: browse the task suite and let it test itself.

Thin: each command loads tasks through `boundary_audit.tasks`, calls a pure renderer from
`boundary_audit.report.tasks.text`, and prints. `check` exits 10 (GATE) when any task's claims fail.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, UsageError
from boundary_audit.report.tasks import text as render
from boundary_audit.sandbox import Limits, SandboxChoice, make_sandbox
from boundary_audit.tasks import load_tasks
from boundary_audit.tasks.check import check_tasks
from boundary_audit.tasks.vocabulary import HAZARDS

app = typer.Typer(
    help="The task suite: list, show, and check that every task proves itself.",
    no_args_is_help=True,
)

SELECT_HELP = (
    "Tasks: ids, families, `core`, `boundary`, `all`, tags (boundary=tty), globs; comma-separated."
)


class ListFormat(StrEnum):
    """Output formats of `tasks list`."""

    TABLE = "table"
    JSON = "json"


class ShowFormat(StrEnum):
    """Output formats of `tasks show`."""

    TEXT = "text"
    JSON = "json"


@app.command("list")
def list_tasks(
    fmt: Annotated[
        ListFormat, typer.Option("--format", "-f", case_sensitive=False, help="Output format.")
    ] = ListFormat.TABLE,
    select: Annotated[
        str | None, typer.Option("--select", "-s", envvar="BOUNDARY_AUDIT_SELECT", help=SELECT_HELP)
    ] = None,
) -> int:
    """List tasks with their family, tier, hazards and where the naive reply breaks."""
    tasks = load_tasks(select)
    typer.echo(
        render.list_json(tasks) if fmt is ListFormat.JSON else render.list_table(tasks), nl=False
    )
    return int(ExitCode.OK)


@app.command("show")
def show_task(
    task_id: Annotated[str, typer.Argument(metavar="ID", help="A task id, e.g. write-file-t3.")],
    fmt: Annotated[
        ShowFormat, typer.Option("--format", "-f", case_sensitive=False, help="Output format.")
    ] = ShowFormat.TEXT,
) -> int:
    """Show one task: instruction, hazards, fixture, oracle, naive reply, validator."""
    found = [t for t in load_tasks() if t.id == task_id]
    if not found:
        raise UsageError(f"no task {task_id!r}", hint="`boundary-audit tasks list` shows the ids")
    task = found[0]
    typer.echo(
        render.show_json(task) if fmt is ShowFormat.JSON else render.show_text(task), nl=False
    )
    return int(ExitCode.OK)


@app.command("check")
def check(
    select: Annotated[
        str | None, typer.Option("--select", "-s", envvar="BOUNDARY_AUDIT_SELECT", help=SELECT_HELP)
    ] = None,
    sandbox: Annotated[
        SandboxChoice,
        typer.Option(
            "--sandbox",
            envvar="BOUNDARY_AUDIT_SANDBOX",
            case_sensitive=False,
            help="Where replies run: bwrap when it works here (auto), tempdir (no isolation) "
            "or docker.",
        ),
    ] = SandboxChoice.AUTO,
    transport: Annotated[
        list[str],
        typer.Option(
            "--transport",
            "-t",
            show_default=False,
            help="Check claims on these transports only (repeatable). Default: every transport a "
            "task names that is registered here.",
        ),
    ] = [],  # noqa: B006 - typer needs a list default
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", "-j", envvar="BOUNDARY_AUDIT_JOBS", min=1, help="Tasks checked in parallel."
        ),
    ] = 2,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, max=3600, help="Seconds one run may take.")
    ] = 10.0,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Also list the claims that could not be verified."),
    ] = False,
) -> int:
    """Check every task: oracle passes, naive breaks where declared, validator rejects mutations."""
    tasks = load_tasks(select)
    with make_sandbox(sandbox.value, Limits(timeout_s=timeout)) as box:
        results = check_tasks(tasks, box, jobs=jobs, transports=transport or None)
    typer.echo(render.check_report(results, verbose=verbose), nl=False)
    return int(ExitCode.GATE if any(r.failed for r in results) else ExitCode.OK)


@app.command("hazards")
def hazards() -> int:
    """List the hazard vocabulary task files may use."""
    width = max(len(h) for h in HAZARDS)
    typer.echo(
        "".join(f"{name.ljust(width)}  {text}\n" for name, text in HAZARDS.items()), nl=False
    )
    return int(ExitCode.OK)


def register(root: typer.Typer) -> None:
    """Add the `tasks` command group to the CLI."""
    root.add_typer(app, name="tasks", rich_help_panel="Dynamic")
