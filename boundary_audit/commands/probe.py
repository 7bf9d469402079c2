"""`boundary-audit probe`: run reply sets through transports in a sandbox, report the damage.

Thin: parse options into `ProbeOptions`, check every input (`prepare_probes`: a bad reply file
exits 4 before anything starts), make the sandbox and print its notices to stderr, run
(`execute_probes`, with a progress bar when stderr is a terminal), render the report to
--output or stdout and the one-line summary to stderr. Exit 0, or 6 when the machinery
failed in some runs (those runs are in the report, with reason `error: ...`).
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, ReportError
from boundary_audit.pipelines.probe import (
    DEFAULT_SELECT,
    ProbeOptions,
    execute_probes,
    prepare_probes,
)
from boundary_audit.report import probe as probe_report
from boundary_audit.report.probe import ProbeFormat
from boundary_audit.report.progress import progress_for
from boundary_audit.results.probe import summary_line
from boundary_audit.sandbox import Limits, SandboxChoice, make_sandbox
from boundary_audit.taxonomy import BASELINE

INPUTS, RUN, OUTPUT = "Inputs", "Run", "Output"
DEFAULT_TIMEOUT = 10.0


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


def regenerate_command(
    o: ProbeOptions, fmt: ProbeFormat, output: Path | None, no_timings: bool
) -> str:
    """The canonical command line that reproduces the report (recorded in its header)."""
    argv = ["boundary-audit", "probe"]
    for spec in o.replies:
        argv += ["--replies", spec]
    for name in o.transports:
        argv += ["--transport", name]
    argv += ["--select", o.select] if o.select != DEFAULT_SELECT else []
    argv += ["--sandbox", o.sandbox] if o.sandbox != SandboxChoice.AUTO.value else []
    argv += ["--timeout", f"{o.timeout_s:g}"] if o.timeout_s != DEFAULT_TIMEOUT else []
    argv += ["--format", fmt.value] if fmt != ProbeFormat.TERMINAL else []
    argv += ["--output", str(output)] if output is not None else []
    argv += ["--no-timings"] if no_timings else []
    return shlex.join(argv)


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ReportError(f"{output}: cannot write report: {exc.strerror or exc}") from None


# fmt: off
def probe(
    replies: Annotated[list[str], typer.Option(
        "--replies", "-r", rich_help_panel=INPUTS, show_default=False,
        help="Reply set: `oracle`, `naive`, or a JSONL file of {task_id, reply, ...}. "
             "Repeatable. Default: oracle.")] = [],  # noqa: B006 - typer needs a list default
    transport: Annotated[list[str], typer.Option(
        "--transport", "-t", rich_help_panel=INPUTS, show_default=False,
        help="Transport name, or `all`. Repeatable. Default: raw. `raw` is added whenever "
             "another transport is asked for: damage is measured against it.")] = [],  # noqa: B006
    select: Annotated[str, typer.Option(
        "--select", envvar=_env("SELECT"), rich_help_panel=INPUTS,
        help="Tasks: ids, families, `core`, `boundary`, `all`, tags or globs, comma-separated.",
    )] = DEFAULT_SELECT,
    sandbox: Annotated[SandboxChoice, typer.Option(
        "--sandbox", envvar=_env("SANDBOX"), rich_help_panel=RUN, case_sensitive=False,
        help="Where replies run: bwrap when it works here (auto), tempdir (NO isolation), "
             "or docker (a private engine is started if none answers).")] = SandboxChoice.AUTO,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", envvar=_env("JOBS"), rich_help_panel=RUN, min=1,
        help="Runs in parallel.")] = 2,
    timeout: Annotated[float, typer.Option(
        "--timeout", envvar=_env("TIMEOUT"), rich_help_panel=RUN, min=0.1, max=3600,
        help="Seconds one run may take before its whole sandbox is killed.")] = DEFAULT_TIMEOUT,
    fmt: Annotated[ProbeFormat, typer.Option(
        "--format", "-f", envvar=_env("FORMAT"), rich_help_panel=OUTPUT, case_sensitive=False,
        help="Report format.")] = ProbeFormat.TERMINAL,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", envvar=_env("OUTPUT"), rich_help_panel=OUTPUT, dir_okay=False,
        help="Write the report to FILE instead of stdout.")] = None,
    no_timings: Annotated[bool, typer.Option(
        "--no-timings", envvar=_env("NO_TIMINGS"), rich_help_panel=OUTPUT,
        help="Leave run durations out of the JSON, so that equal runs give equal bytes.",
    )] = False,
) -> int:
    # fmt: on
    """Run reply sets through transports in a sandbox; report pass rates and damage vs raw."""
    options = ProbeOptions(
        replies=tuple(replies) or ("oracle",), transports=tuple(transport) or (BASELINE,),
        select=select, sandbox=sandbox.value, jobs=jobs, timeout_s=timeout,
    )
    options = replace(options, command=regenerate_command(options, fmt, output, no_timings))
    plan = prepare_probes(options)
    with make_sandbox(options.sandbox, Limits(timeout_s=options.timeout_s)) as box:
        report = execute_probes(plan, box, progress=progress_for())
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 24)).columns if to_tty else 120
    renderer = probe_report.renderer_for(fmt, timings=not no_timings, color=to_tty, width=width)
    _emit(renderer.render(report), output)
    sys.stderr.write(summary_line(report) + "\n")
    return int(ExitCode.RUN if report.summary.errors else ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `probe` to the CLI."""
    app.command("probe", rich_help_panel="Dynamic")(probe)
