"""`boundary-audit scan TARGET`: the audit of a repository at a commit.

Thin: parse options into `StaticOptions`, call `run_static`, then (unless --no-probe) let
`pipelines.measure.probe_report` measure each model-controlled finding's derived path, render
with the chosen format to --output or stdout, write a baseline if asked, print the one-line
summary (with the resolved sha) to stderr, and turn --fail-on into exit code 10; a probe run
that could not be carried out makes the exit code 6 (the report is written first, with those
runs counted and named). Every option has a `BOUNDARY_AUDIT_*` environment alias.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, ReportError
from boundary_audit.pipelines.scan import StaticOptions, gate, run_static
from boundary_audit.report.progress import progress_for
from boundary_audit.report.scan import ScanFormat, renderer_for
from boundary_audit.results.baseline import write_baseline
from boundary_audit.results.scan import ScanReport, summary_line
from boundary_audit.sandbox import SandboxChoice
from boundary_audit.source import ENV_CACHE_DIR
from boundary_audit.taxonomy import BoundaryClass, Confidence, Severity

SOURCE, STATIC, PROBE, OUTPUT, GATE = "Source", "Static", "Probe", "Output", "Gate"


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


def content_flags(o: StaticOptions, fmt: ScanFormat) -> tuple[str, ...]:
    """The flags that shape the report's content, for the command recorded in it."""
    flags: list[str] = ["--format", fmt.value]
    flags += ["--include-constant"] if o.include_constant else []
    flags += ["--include-tests"] if o.include_tests else []
    flags += ["--no-ignores"] if o.no_ignores else []
    flags += ["--config", str(o.config)] if o.config else []
    flags += ["--baseline", str(o.baseline)] if o.baseline else []
    flags += ["--min-confidence", o.min_confidence.value] if o.min_confidence else []
    flags += ["--min-severity", o.min_severity.value] if o.min_severity else []
    return tuple(flags)


def _render(
    report: ScanReport, fmt: ScanFormat, output: Path | None, details: bool, show_skipped: bool
) -> str:
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 24)).columns if to_tty else 120
    return renderer_for(
        fmt, color=to_tty, width=width, details=details, show_skipped=show_skipped
    ).render(report)


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        sys.stdout.flush()
        return
    try:
        output.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise ReportError(f"{output}: cannot write report: {exc.strerror or exc}") from None


def _gate_exit(report: ScanReport, fail_on: list[BoundaryClass], no_exit_codes: bool) -> int:
    tripped = gate(report, fail_on)
    if not tripped:
        return int(ExitCode.OK)
    classes = sorted({f.boundary_class.value for f in tripped})
    verdict = "ignored (--no-exit-codes)" if no_exit_codes else "tripped"
    sys.stderr.write(
        f"gate {verdict}: {len(tripped)} active model-controlled finding"
        f"{'' if len(tripped) == 1 else 's'} of class {', '.join(classes)}\n"
    )
    return int(ExitCode.OK if no_exit_codes else ExitCode.GATE)


def scan(
    target: Annotated[
        str,
        typer.Argument(
            help="Repository to audit: a path, a git URL or owner/name, with an optional @rev "
            "(sha, tag or branch; default HEAD).",
            show_default=False,
        ),
    ],
    offline: Annotated[
        bool,
        typer.Option(
            "--offline",
            envvar=_env("OFFLINE"),
            rich_help_panel=SOURCE,
            help="Never touch the network: use the cached mirror only.",
        ),
    ] = False,
    refresh: Annotated[
        bool,
        typer.Option(
            "--refresh",
            envvar=_env("REFRESH"),
            rich_help_panel=SOURCE,
            help="Fetch the remote even when the cached mirror has the revision.",
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            envvar=ENV_CACHE_DIR,
            rich_help_panel=SOURCE,
            file_okay=False,
            help="Where bare mirrors are cached (default: the user cache directory).",
        ),
    ] = None,
    include_constant: Annotated[
        bool,
        typer.Option(
            "--include-constant",
            envvar=_env("INCLUDE_CONSTANT"),
            rich_help_panel=STATIC,
            help="Also report process spawns whose command is a constant or configured"
            " (environment, CLI flags, config files, hooks: no model output).",
        ),
    ] = False,
    include_tests: Annotated[
        bool,
        typer.Option(
            "--include-tests",
            envvar=_env("INCLUDE_TESTS"),
            rich_help_panel=STATIC,
            help="Also scan tests, docs, examples, benchmarks and vendored code (left out by "
            "default, as a reviewer would; the summary line says how many files).",
        ),
    ] = False,
    no_ignores: Annotated[
        bool,
        typer.Option(
            "--no-ignores",
            envvar=_env("NO_IGNORES"),
            rich_help_panel=STATIC,
            help="Disregard inline `boundary-audit: ignore[...]` comments and config ignores.",
        ),
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            envvar=_env("CONFIG"),
            rich_help_panel=STATIC,
            dir_okay=False,
            help="Configuration file to use instead of the target's boundary-audit.toml or "
            "\\[tool.boundary-audit].",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            envvar=_env("BASELINE"),
            rich_help_panel=STATIC,
            dir_okay=False,
            help="Suppress findings recorded in this baseline file (counted, not dropped).",
        ),
    ] = None,
    write_baseline_to: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            envvar=_env("WRITE_BASELINE"),
            rich_help_panel=STATIC,
            dir_okay=False,
            help="Write a baseline accepting this scan's findings to FILE.",
        ),
    ] = None,
    min_confidence: Annotated[
        Confidence | None,
        typer.Option(
            "--min-confidence",
            envvar=_env("MIN_CONFIDENCE"),
            rich_help_panel=STATIC,
            case_sensitive=False,
            help="Hide findings below this confidence.",
        ),
    ] = None,
    min_severity: Annotated[
        Severity | None,
        typer.Option(
            "--min-severity",
            envvar=_env("MIN_SEVERITY"),
            rich_help_panel=STATIC,
            case_sensitive=False,
            help="Hide findings below this severity.",
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            envvar=_env("JOBS"),
            rich_help_panel=STATIC,
            min=1,
            help="Worker processes for the scan (a scan of under 256 KiB of source uses one).",
        ),
    ] = 2,
    fmt: Annotated[
        ScanFormat,
        typer.Option(
            "--format",
            "-f",
            envvar=_env("FORMAT"),
            rich_help_panel=OUTPUT,
            case_sensitive=False,
            help="Report format.",
        ),
    ] = ScanFormat.TERMINAL,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            envvar=_env("OUTPUT"),
            rich_help_panel=OUTPUT,
            dir_okay=False,
            help="Write the report to FILE instead of stdout (the summary line still goes to "
            "stderr).",
        ),
    ] = None,
    fail_on: Annotated[
        list[BoundaryClass] | None,
        typer.Option(
            "--fail-on",
            envvar=_env("FAIL_ON"),
            rich_help_panel=GATE,
            case_sensitive=False,
            metavar="CLASS",
            help="Exit 10 if an active model-controlled finding of this boundary class exists "
            "(repeatable).",
        ),
    ] = None,
    no_exit_codes: Annotated[
        bool,
        typer.Option(
            "--no-exit-codes",
            envvar=_env("NO_EXIT_CODES"),
            rich_help_panel=GATE,
            help="Exit 0 even when --fail-on matches (errors keep their codes).",
        ),
    ] = False,
    details: Annotated[
        bool,
        typer.Option(
            "--details",
            envvar=_env("DETAILS"),
            rich_help_panel=OUTPUT,
            help="Terminal format: add each finding's derived path, every route and reply set "
            "by family, the fix, the adapter comparison and the probes.",
        ),
    ] = False,
    show_skipped: Annotated[
        bool,
        typer.Option(
            "--show-skipped",
            envvar=_env("SHOW_SKIPPED"),
            rich_help_panel=OUTPUT,
            help="Terminal format: list the skipped files (by default one count line).",
        ),
    ] = False,
    select: Annotated[
        str,
        typer.Option(
            "--select",
            envvar=_env("SELECT"),
            rich_help_panel=PROBE,
            help="Tasks pushed through each boundary path (ids, families, core, boundary, all).",
        ),
    ] = "all",
    replies: Annotated[
        list[str] | None,
        typer.Option(
            "--replies",
            "-r",
            envvar=_env("REPLIES"),
            rich_help_panel=PROBE,
            show_default=False,
            help="Reply sets: oracle, naive or a JSONL file (repeatable; default oracle + naive; "
            "the first one is the one-screen damage).",
        ),
    ] = None,
    sandbox: Annotated[
        SandboxChoice,
        typer.Option(
            "--sandbox",
            envvar=_env("SANDBOX"),
            rich_help_panel=PROBE,
            case_sensitive=False,
            help="Where replies run (auto: bwrap; tempdir has no isolation).",
        ),
    ] = SandboxChoice.AUTO,
    no_probe: Annotated[
        bool,
        typer.Option(
            "--no-probe",
            envvar=_env("NO_PROBE"),
            rich_help_panel=PROBE,
            help="Keep the scan static: do not run the task suite through each model-controlled "
            "finding's boundary.",
        ),
    ] = False,
) -> int:
    """Find and classify every parser boundary in TARGET at one commit, and measure each
    model-controlled one by running the task suite through it (--no-probe: static only)."""
    options = StaticOptions(
        target=target,
        offline=offline,
        refresh=refresh,
        cache_dir=cache_dir,
        include_constant=include_constant,
        include_tests=include_tests,
        no_ignores=no_ignores,
        config=config,
        baseline=baseline,
        min_confidence=min_confidence,
        min_severity=min_severity,
        jobs=jobs,
    )
    progress = progress_for()  # notes and a bar on a terminal only: CI logs stay one line
    probe_flags = (
        ("--no-probe",)
        if no_probe
        else (
            *(("--select", select) if select != "all" else ()),
            *(a for r in replies or () for a in ("--replies", r)),
            *(("--sandbox", sandbox.value) if sandbox != SandboxChoice.AUTO else ()),
        )
    )
    flags = content_flags(options, fmt) + tuple(probe_flags)
    report = run_static(replace(options, command_flags=flags), progress=progress)
    if not no_probe and any(f.model_controlled for f in report.active):
        # The dynamic step (sandbox, transports, tasks) is imported only when there is a
        # boundary to measure; with none it would return the report unchanged.
        from boundary_audit.pipelines.measure import ProbeSettings, probe_report

        settings = ProbeSettings(
            select=select, replies=tuple(replies or ("oracle", "naive")), sandbox=sandbox.value
        )
        report = probe_report(report, settings, progress=progress_for())
    _emit(_render(report, fmt, output, details, show_skipped), output)
    if write_baseline_to is not None:
        write_baseline(report, write_baseline_to)
    for note in report.notes:
        sys.stderr.write(f"note: {note}\n")
    sys.stderr.write(summary_line(report) + "\n")
    gated = _gate_exit(report, fail_on or [], no_exit_codes)
    if report.error_runs:
        first = report.probe.errors[0] if report.probe is not None else None
        sys.stderr.write(
            f"boundary-audit: {report.error_runs} probe run"
            f"{'' if report.error_runs == 1 else 's'} could not be carried out "
            f"(left out of the damage): {first.transport}: {first.reason}\n"
            if first
            else ""
        )
        return int(ExitCode.RUN)
    return gated


def register(app: typer.Typer) -> None:
    """Add `scan` to the CLI."""
    app.command("scan", no_args_is_help=True)(scan)
