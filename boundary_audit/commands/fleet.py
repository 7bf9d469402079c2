"""`boundary-audit fleet PLAN.toml`: audit many harnesses with many reply sets on a Dask cluster.

Thin: read the plan (`fleet.plan.load_plan`: every error before anything runs, exit 4), run it
(`fleet.run.execute`: a local cluster of `--workers` processes, or `--scheduler`), build the
report from the store (`fleet.merge.build_report`), render it to --output or stdout, keep it
in the store for the next run's diff, and print one summary line. Exit 0 when every unit was
carried out; 6 when some could not be (the report is written, with them counted and named);
130 on Ctrl-C and 143 on SIGTERM (the runs in flight finish first, nothing else is lost: rerun
the same plan to finish it); 4 for a bad plan or store; 5 when the cluster cannot be reached.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, ReportError
from boundary_audit.report.fleet import FleetFormat

RUN, OUTPUT = "Run", "Output"


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


# fmt: off
def fleet(
    plan_file: Annotated[Path, typer.Argument(
        metavar="PLAN", show_default=False, dir_okay=False,
        help="The fleet plan (TOML: targets, replies, transports, tasks, store).")],
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", envvar=_env("SCHEDULER"), rich_help_panel=RUN, show_default=False,
        help="A Dask scheduler (tcp://HOST:PORT) whose workers run boundary-audit and reach "
             "the plan's store. Default: a local cluster.")] = None,
    workers: Annotated[int, typer.Option(
        "--workers", "-w", envvar=_env("WORKERS"), rich_help_panel=RUN, min=1, max=256,
        help="Worker processes of the local cluster (each runs the plan's `jobs` runs at "
             "once).")] = 2,
    batch: Annotated[int, typer.Option(
        "--batch", envvar=_env("BATCH"), rich_help_panel=RUN, min=1, max=1024,
        help="Runs per scheduled task.")] = 8,
    store: Annotated[Path | None, typer.Option(
        "--store", envvar=_env("FLEET_STORE"), rich_help_panel=RUN, file_okay=False,
        show_default=False,
        help="The results store (default: the plan's `store`, else <plan name>.store beside "
             "it). A path every worker can reach.")] = None,
    refresh: Annotated[bool, typer.Option(
        "--refresh", rich_help_panel=RUN,
        help="Resolve every target's revision again (a branch may have moved); runs already "
             "in the store for a commit are kept.")] = False,
    offline: Annotated[bool, typer.Option(
        "--offline", envvar=_env("OFFLINE"), rich_help_panel=RUN,
        help="Use cached clones only.")] = False,
    cache_dir: Annotated[Path | None, typer.Option(
        "--cache-dir", envvar="BOUNDARY_AUDIT_CACHE_DIR", rich_help_panel=RUN,
        file_okay=False, show_default=False, help="Where clones are cached.")] = None,
    fmt: Annotated[FleetFormat, typer.Option(
        "--format", "-f", envvar=_env("FORMAT"), rich_help_panel=OUTPUT, case_sensitive=False,
        help="Report format.")] = FleetFormat.TERMINAL,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", envvar=_env("OUTPUT"), rich_help_panel=OUTPUT, dir_okay=False,
        help="Write the report to FILE instead of stdout.")] = None,
) -> int:
    # fmt: on
    """Audit every target of PLAN with every reply set on a Dask cluster; one report."""
    from boundary_audit.fleet.merge import build_report
    from boundary_audit.fleet.plan import load_plan
    from boundary_audit.fleet.run import FleetOptions, execute
    from boundary_audit.fleet.store import Store
    from boundary_audit.report.fleet import renderer_for
    from boundary_audit.report.fleet.json_v1 import FleetJson
    from boundary_audit.report.fleet.text import summary_line
    from boundary_audit.report.progress import UnitsBar

    plan = load_plan(plan_file)
    if store is not None:
        plan = replace(plan, store=store.resolve())
    options = FleetOptions(
        plan, scheduler=scheduler, workers=workers, batch=batch, refresh=refresh,
        offline=offline, cache_dir=cache_dir,
    )  # fmt: skip
    bar = UnitsBar()
    try:
        run = execute(options, progress=bar)
    except KeyboardInterrupt:
        bar.finish()
        sys.stderr.write(
            f"boundary-audit: fleet {plan.name} stopped; the store keeps every finished unit: "
            "run the same plan again to finish it\n"
        )
        raise
    finally:
        bar.finish()
    kept = Store(plan.store)
    report = build_report(run, kept, kept.previous_report())
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 24)).columns if to_tty else 120
    text = renderer_for(fmt, color=to_tty, width=width).render(report)
    if output is None:
        typer.echo(text, nl=False)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ReportError(f"{output}: cannot write report: {exc.strerror or exc}") from None
    if report.complete:
        kept.save_report(FleetJson().render(report).encode("utf-8"))
    sys.stderr.write(summary_line(report, run.ran) + "\n")
    return int(ExitCode.OK if report.complete else ExitCode.RUN)


def register(app: typer.Typer) -> None:
    """Add `fleet` to the CLI."""
    app.command("fleet", rich_help_panel="Dynamic")(fleet)
