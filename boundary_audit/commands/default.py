"""`boundary-audit demo`: the embedded default, offline, in one command.

Builds a git repository from the packaged specimens (one small harness per boundary class),
scans it, runs the hostile tier of the task suite through every model-controlled finding's
boundary, and writes into --output-dir (default `./boundary-audit-report/`): the repository
(`specimens/`), the scan report with its measured evidence (`scan.json`, `scan.sarif`,
`scan.md`) and the Table-8-style report of the findings (`table8.md`, `table8.json`). The
Table-8 table is printed; a one-line summary goes to stderr. Exit 6 when a run could not be
carried out (those runs are left out of every damage, and counted in the reports).
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.commands.table8 import write
from boundary_audit.errors import ExitCode
from boundary_audit.pipelines.demo import DemoOptions, run_demo
from boundary_audit.report import table8 as table8_report
from boundary_audit.report.progress import progress_for
from boundary_audit.report.scan import ScanFormat, renderer_for
from boundary_audit.report.table8 import FILE_NAMES, Table8Format
from boundary_audit.sandbox import SandboxChoice

DEFAULT_DIR = Path("boundary-audit-report")
DEFAULT_JOBS = 4
DEFAULT_SELECT = "*-t3"
"""The hostile tier (tier 3) of every family: what keeps the demo under a minute."""
SCAN_FILES = {
    ScanFormat.JSON: "scan.json",
    ScanFormat.SARIF: "scan.sarif",
    ScanFormat.MARKDOWN: "scan.md",
}


def regenerate_command(o: DemoOptions) -> str:
    """The command recorded in the reports."""
    argv = ["boundary-audit", "demo", "--output-dir", str(o.output_dir)]
    argv += ["--select", o.select] if o.select != DEFAULT_SELECT else []
    argv += [a for r in o.replies for a in ("--replies", r)] if o.replies != ("oracle",) else []
    argv += ["--sandbox", o.sandbox] if o.sandbox != SandboxChoice.AUTO.value else []
    argv += ["--no-probes"] if not o.probes else []
    argv += ["--jobs", str(o.jobs)] if o.jobs != DEFAULT_JOBS else []
    return shlex.join(argv)


# fmt: off
def demo(
    output_dir: Annotated[Path, typer.Option(
        "--output-dir", file_okay=False, help="Where the repository and reports are written.",
    )] = DEFAULT_DIR,
    select: Annotated[str, typer.Option(
        "--select", help="Tasks to run through each boundary.")] = DEFAULT_SELECT,
    replies: Annotated[list[str] | None, typer.Option(
        "--replies", "-r", help="Reply sets (repeatable; default oracle).")] = None,
    sandbox: Annotated[SandboxChoice, typer.Option(
        "--sandbox", case_sensitive=False, help="Where replies run.")] = SandboxChoice.AUTO,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", min=1,
        help="Runs in parallel (most of a run is waiting on tmux, ssh and sessions).",
    )] = DEFAULT_JOBS,
    no_probes: Annotated[bool, typer.Option(
        "--no-probes", help="Skip the fingerprint probes.")] = False,
) -> int:
    # fmt: on
    """Scan and probe the packaged specimen harnesses; write a full report, offline."""
    options = DemoOptions(output_dir=output_dir, select=select,
                          replies=tuple(replies or ("oracle",)), sandbox=sandbox.value,
                          jobs=jobs, probes=not no_probes)
    options = replace(options, command=regenerate_command(options))
    result = run_demo(options, progress=progress_for())
    scan, table = result.scan, result.table
    for fmt, name in SCAN_FILES.items():
        write(renderer_for(fmt).render(scan), output_dir / name)
    for kind, name in FILE_NAMES.items():
        write(table8_report.renderer_for(kind).render(table), output_dir / name)
    to_tty = sys.stdout.isatty()
    width = shutil.get_terminal_size((160, 24)).columns if to_tty else 160
    typer.echo(table8_report.renderer_for(Table8Format.TERMINAL, color=to_tty, width=width)
               .render(table), nl=False)
    confirmed = sum(1 for f in scan.active if f.evidence and f.confidence.value == "high")
    errors = (f", {result.error_runs} runs could not be carried out (left out of the damage)"
              if result.error_runs else "")
    sys.stderr.write(f"demo: {len(table.rows)} boundaries in the specimens, {confirmed} "
                     f"confirmed by measurement{errors}; reports in {output_dir}/\n")
    return int(ExitCode.RUN if result.error_runs else ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo", rich_help_panel="Dynamic")(demo)
