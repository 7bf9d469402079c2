"""`boundary-audit table8 [SYSTEM...]`: the Table-8 report of the audited systems, measured.

Thin: parse options into `Table8Options` (with the canonical command that regenerates the
report), call `build_table8`, render to stdout or --output, or write table8.md and
table8.json to --output-dir, and print a one-line summary to stderr. Exit 0 when the report
was written: runs the machinery could not carry out are data (counted per row), not a failure.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, ReportError, UsageError
from boundary_audit.pipelines.table8 import Table8Options, build_table8
from boundary_audit.report import table8 as table8_report
from boundary_audit.report.progress import progress_for
from boundary_audit.report.table8 import FILE_NAMES, Table8Format
from boundary_audit.results.table8 import Table8Report
from boundary_audit.sandbox import SandboxChoice

INPUTS, STATIC, RUN, OUTPUT = "Inputs", "Static", "Run", "Output"


def pairs(values: list[str], flag: str) -> dict[str, str]:
    """`["a=x", "b=y"]` as a mapping; anything else is a usage error naming the flag."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise UsageError(f"{flag} {value!r}: expected SYSTEM=VALUE")
        out[key] = rest
    return out


def regenerate_command(
    o: Table8Options, fmt: Table8Format, output: Path | None, output_dir: Path | None
) -> str:
    """The canonical command line recorded in the report's header."""
    argv = ["boundary-audit", "table8", *o.systems]
    argv += [a for f in o.adapter_files for a in ("--adapters", str(f))]
    argv += ["--select", o.select] if o.select != "all" else []
    argv += (
        [a for r in o.replies for a in ("--replies", r)] if o.replies != ("oracle", "naive") else []
    )
    argv += [a for k, v in sorted(o.repo_dirs.items()) for a in ("--repo-dir", f"{k}={v}")]
    argv += [a for k, v in sorted(o.commits.items()) for a in ("--commit", f"{k}={v}")]
    argv += ["--fetch"] if not o.offline else []
    argv += ["--no-static"] if not o.static else []
    argv += ["--no-probes"] if not o.probes else []
    argv += ["--harness-reports", str(o.harness_reports)] if o.harness_reports else []
    argv += ["--sandbox", o.sandbox] if o.sandbox != SandboxChoice.AUTO.value else []
    argv += ["--timeout", f"{o.timeout_s:g}"] if o.timeout_s != 10.0 else []
    if output_dir is not None:
        argv += ["--output-dir", str(output_dir)]
    else:
        argv += ["--format", fmt.value] if fmt != Table8Format.TERMINAL else []
        argv += ["--output", str(output)] if output is not None else []
    return shlex.join(argv)


def write(text: str, path: Path) -> None:
    """Write a rendered report; an unwritable path is a ReportError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{path}: cannot write report: {exc.strerror or exc}") from None


def emit(
    report: Table8Report, fmt: Table8Format, output: Path | None, output_dir: Path | None
) -> None:
    """Render to --output-dir (Markdown + JSON), --output, or stdout."""
    if output_dir is not None:
        for kind, name in FILE_NAMES.items():
            write(table8_report.renderer_for(kind).render(report), output_dir / name)
        return
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((160, 24)).columns if to_tty else 160
    text = table8_report.renderer_for(fmt, color=to_tty, width=width).render(report)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write(text, output)


def summary(report: Table8Report) -> str:
    """`table8: 7 rows, 3 variants; damage (oracle): codex -28.6, ...; 2 errored runs`."""
    first = report.reply_sets[0] if report.reply_sets else ""
    parts = [
        f"{r.system}:{r.path} {m.damage_pp:+.1f}" if m.measured else f"{r.system}:{r.path} -"
        for r in report.rows
        for m in r.measures
        if m.reply_set == first
    ]
    errors = sum(m.errors for r in report.all_rows for m in r.measures)
    return (
        f"table8: {len(report.rows)} rows, {len(report.variants)} variants; damage "
        f"({first}, pp): {', '.join(parts) or 'none'}; {errors} errored runs"
        + (" (left out of the damage)" if errors else "")
    )


# fmt: off
def table8(
    systems: Annotated[list[str] | None, typer.Argument(
        help="Systems (adapter ids) to report; default: all.", show_default=False)] = None,
    adapters: Annotated[list[Path] | None, typer.Option(
        "--adapters", rich_help_panel=INPUTS, envvar="BOUNDARY_AUDIT_ADAPTERS",
        help="An extra adapter file, or a folder of them (repeatable).")] = None,
    select: Annotated[str, typer.Option(
        "--select", rich_help_panel=INPUTS, help="Tasks (ids, families, core, boundary, all).",
    )] = "all",
    replies: Annotated[list[str] | None, typer.Option(
        "--replies", "-r", rich_help_panel=INPUTS,
        help="Reply sets: oracle, naive or a JSONL file (repeatable; default oracle + naive).",
    )] = None,
    repo_dir: Annotated[list[str] | None, typer.Option(
        "--repo-dir", rich_help_panel=STATIC, metavar="SYSTEM=PATH",
        help="Verify SYSTEM's anchors in this local clone (or plain directory).")] = None,
    commit: Annotated[list[str] | None, typer.Option(
        "--commit", rich_help_panel=STATIC, metavar="SYSTEM=REV",
        help="Check SYSTEM's anchors at REV instead of the pin, and report drift.")] = None,
    fetch: Annotated[bool, typer.Option(
        "--fetch", rich_help_panel=STATIC,
        help="Clone or fetch systems without --repo-dir (default: local clones and the cache "
             "only).")] = False,
    no_static: Annotated[bool, typer.Option(
        "--no-static", rich_help_panel=STATIC, help="Skip the static columns.")] = False,
    harness_reports: Annotated[Path | None, typer.Option(
        "--harness-reports", rich_help_panel=INPUTS, file_okay=False, metavar="DIR",
        help="Add the real-harness column from the `harness compare` JSON reports in DIR "
             "(e.g. reports/harness).")] = None,
    no_probes: Annotated[bool, typer.Option(
        "--no-probes", rich_help_panel=RUN, help="Skip the fingerprint probes.")] = False,
    sandbox: Annotated[SandboxChoice, typer.Option(
        "--sandbox", rich_help_panel=RUN, case_sensitive=False,
        help="Where replies run (auto: bwrap when it works here).")] = SandboxChoice.AUTO,
    jobs: Annotated[int, typer.Option("--jobs", "-j", rich_help_panel=RUN, min=1,
                                      help="Runs in parallel.")] = 2,
    timeout: Annotated[float, typer.Option(
        "--timeout", rich_help_panel=RUN, min=0.5, max=600,
        help="Seconds one run may take.")] = 10.0,
    fmt: Annotated[Table8Format, typer.Option(
        "--format", "-f", rich_help_panel=OUTPUT, case_sensitive=False,
        help="Report format.")] = Table8Format.TERMINAL,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT, dir_okay=False,
        help="Write the report to FILE instead of stdout.")] = None,
    output_dir: Annotated[Path | None, typer.Option(
        "--output-dir", rich_help_panel=OUTPUT, file_okay=False,
        help="Write table8.md and table8.json into DIR (e.g. reports/).")] = None,
) -> int:
    # fmt: on
    """Measure every audited system's boundary paths and print the Table-8 report."""
    options = Table8Options(
        systems=tuple(systems or ()), adapter_files=tuple(adapters or ()), select=select,
        replies=tuple(replies or ("oracle", "naive")), sandbox=sandbox.value, jobs=jobs,
        timeout_s=timeout, repo_dirs={k: Path(v) for k, v in pairs(repo_dir or [],
                                                                   "--repo-dir").items()},
        commits=pairs(commit or [], "--commit"), offline=not fetch, static=not no_static,
        probes=not no_probes, harness_reports=harness_reports)
    command = regenerate_command(options, fmt, output, output_dir)
    report = build_table8(replace(options, command=command), progress=progress_for())
    emit(report, fmt, output, output_dir)
    sys.stderr.write(summary(report) + "\n")
    errored = any(m.errors for r in report.all_rows for m in r.measures)
    return int(ExitCode.RUN if errored else ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `table8` to the CLI."""
    app.command("table8", rich_help_panel="Dynamic")(table8)
