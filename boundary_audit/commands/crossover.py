"""`boundary-audit crossover`: the study's 2×2 crossover of contract × transport, per model.

Thin: parse options into `CrossoverOptions`, check every input (`prepare_crossover`: a bad reply
file, or reply sets without both contracts, exit 4 before anything runs), run the replies
through raw and each boundary transport (or read runs back with `--runs`), render to --output
or stdout and print one summary line to stderr. Exit 0, or 6 when the machinery failed in some
runs (the report then says so and counts them; they are never damage).
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit import metrics
from boundary_audit.errors import ExitCode, ReportError
from boundary_audit.pipelines.crossover import (
    DEFAULT_TRANSPORTS,
    CrossoverOptions,
    execute_crossover,
    prepare_crossover,
)
from boundary_audit.report import crossover as crossover_report
from boundary_audit.report.crossover import CrossoverFormat
from boundary_audit.report.progress import progress_for
from boundary_audit.results.crossover import Bootstrap, ConfigCrossover, CrossoverReport
from boundary_audit.sandbox import SandboxChoice

INPUTS, STATS, RUN, OUTPUT = "Inputs", "Statistics", "Run", "Output"
DEFAULT_TIMEOUT = 10.0


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


def regenerate_command(
    o: CrossoverOptions, fmt: CrossoverFormat, output: Path | None, no_timings: bool
) -> str:
    """The canonical command line that reproduces the report (recorded in its header)."""
    argv = ["boundary-audit", "crossover"]
    for spec in o.replies:
        argv += ["--replies", spec]
    for spec in o.runs:
        argv += ["--runs", spec]
    if o.transports != DEFAULT_TRANSPORTS:
        for name in o.transports:
            argv += ["--transport", name]
    argv += ["--select", o.select] if o.select != "core" else []
    argv += ["--sandbox", o.sandbox] if o.sandbox != SandboxChoice.AUTO.value else []
    argv += ["--timeout", f"{o.timeout_s:g}"] if o.timeout_s != DEFAULT_TIMEOUT else []
    if o.bootstrap.resamples:
        argv += ["--resamples", str(o.bootstrap.resamples), "--seed", str(o.bootstrap.seed)]
    argv += ["--table8", o.table8] if o.table8 else []
    argv += ["--format", fmt.value] if fmt != CrossoverFormat.TERMINAL else []
    argv += ["--output", str(output)] if output is not None else []
    argv += ["--no-timings"] if no_timings else []
    return shlex.join(argv)


def summary_line(report: CrossoverReport) -> str:
    """The one line written to stderr after a crossover."""
    parts = []
    for f in report.flips:
        configs = [c for c in report.configs if c.transport == f.transport]

        def span(name: str, configs: list[ConfigCrossover] = configs) -> str:
            values = sorted(c.effects[name].value for c in configs)
            low, high = metrics.format_points(values[0]), metrics.format_points(values[-1])
            return low if low == high else f"{low}..{high}"

        parts.append(
            f"{len(configs)} configurations through {f.transport}: damage {span('damage')}, "
            f"compensation {span('compensation')}, matched gap {span('matched_gap')} pp, "
            f"{len(f.flips)} rank flips of {f.comparable} comparable pairs"
        )
    if report.errors:
        parts.append(f"{report.errors} errors")
    return "crossover: " + "; ".join(parts) + f" [sandbox {report.sandbox or '-'}]"


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ReportError(f"{output}: cannot write report: {exc.strerror or exc}") from None


# fmt: off
def crossover(
    replies: Annotated[list[str], typer.Option(
        "--replies", "-r", rich_help_panel=INPUTS, show_default=False,
        help="A JSONL reply file (as `generate` writes it) holding raw and disclosed replies, "
             "one file or several; several draws per task pair by (task, draw). Repeatable.",
    )] = [],  # noqa: B006 - typer needs a list default
    runs: Annotated[list[str], typer.Option(
        "--runs", rich_help_panel=INPUTS, show_default=False,
        help="Read the runs of a `probe --format json` or `crossover --format json` report "
             "instead of running replies (zero replays). Repeatable.",
    )] = [],  # noqa: B006
    transport: Annotated[list[str], typer.Option(
        "--transport", "-t", rich_help_panel=INPUTS, show_default=False,
        help="Boundary transport (N on the transport axis). Repeatable. Default: nested. "
             "`raw` is always the baseline.",
    )] = [],  # noqa: B006
    select: Annotated[str, typer.Option(
        "--select", envvar=_env("SELECT"), rich_help_panel=INPUTS,
        help="Tasks, as for probe.")] = "core",
    table8: Annotated[str | None, typer.Option(
        "--table8", rich_help_panel=INPUTS, metavar="FILE",
        help="A `table8 --format json` report whose rows the HTML report shows.")] = None,
    resamples: Annotated[int, typer.Option(
        "--resamples", rich_help_panel=STATS, min=0,
        help="Bootstrap resamples for the 95% intervals; 0 (default): the exact bootstrap "
             "distribution.")] = 0,
    seed: Annotated[int, typer.Option(
        "--seed", rich_help_panel=STATS,
        help="Seed of the resampled bootstrap.")] = 0,
    sandbox: Annotated[SandboxChoice, typer.Option(
        "--sandbox", envvar=_env("SANDBOX"), rich_help_panel=RUN, case_sensitive=False,
        help="Where replies run, as for probe.")] = SandboxChoice.AUTO,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", envvar=_env("JOBS"), rich_help_panel=RUN, min=1,
        help="Runs in parallel.")] = 2,
    timeout: Annotated[float, typer.Option(
        "--timeout", envvar=_env("TIMEOUT"), rich_help_panel=RUN, min=0.1, max=3600,
        help="Seconds one run may take before its whole sandbox is killed.")] = DEFAULT_TIMEOUT,
    fmt: Annotated[CrossoverFormat, typer.Option(
        "--format", "-f", envvar=_env("FORMAT"), rich_help_panel=OUTPUT, case_sensitive=False,
        help="Report format: terminal, json (boundary-audit/crossover/v1), markdown (the "
             "study's Table 4/15 layouts) or html (one self-contained page with figures).",
    )] = CrossoverFormat.TERMINAL,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", envvar=_env("OUTPUT"), rich_help_panel=OUTPUT, dir_okay=False,
        help="Write the report to FILE instead of stdout.")] = None,
    no_timings: Annotated[bool, typer.Option(
        "--no-timings", envvar=_env("NO_TIMINGS"), rich_help_panel=OUTPUT,
        help="Leave run durations out of the JSON, so that equal runs give equal bytes.",
    )] = False,
) -> int:
    # fmt: on
    """The 2x2 crossover of raw/disclosed contract with raw/boundary execution, per model."""
    options = CrossoverOptions(
        replies=tuple(replies), runs=tuple(runs),
        transports=tuple(transport) or DEFAULT_TRANSPORTS, select=select,
        sandbox=sandbox.value, jobs=jobs, timeout_s=timeout,
        bootstrap=Bootstrap(resamples=resamples, seed=seed, level=Fraction(95, 100)),
        table8=table8,
    )  # fmt: skip
    options = replace(options, command=regenerate_command(options, fmt, output, no_timings))
    plan = prepare_crossover(options)
    report = execute_crossover(plan, progress=progress_for() if plan.probe else None)
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 24)).columns if to_tty else 120
    renderer = crossover_report.renderer_for(
        fmt, timings=not no_timings, color=to_tty, width=width
    )
    _emit(renderer.render(report), output)
    sys.stderr.write(summary_line(report) + "\n")
    return int(ExitCode.RUN if report.errors else ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `crossover` to the CLI."""
    app.command("crossover", rich_help_panel="Dynamic")(crossover)
