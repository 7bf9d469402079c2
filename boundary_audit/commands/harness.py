"""`boundary-audit harness install|list|run|compare`: drive the audited systems' own code.

Thin: parse options into `HarnessOptions`, call the library (`harness.install`,
`pipelines.harness.run_harness`), render with `report.harness`, write each `--output` (format by
suffix: .json, .md, anything else plain text) or stdout, and print a one-line summary on stderr.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import BoundaryAuditError, ExitCode, ReportError, UsageError
from boundary_audit.harness import SYSTEMS, select
from boundary_audit.harness.install import install, installed, venv_dir
from boundary_audit.metrics import format_percent
from boundary_audit.pipelines.harness import HarnessOptions, Params, run_harness
from boundary_audit.report.harness.text import render_json, render_markdown, render_text
from boundary_audit.report.progress import progress_for
from boundary_audit.results.harness import HarnessReport

RUN, OUTPUT = "Run", "Output"
FORMATS = {"terminal": render_text, "json": render_json, "markdown": render_markdown}

app = typer.Typer(
    name="harness",
    help="Run the task suite through each audited system's own released code.",
    no_args_is_help=True,
)


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


def _say(message: str) -> None:
    sys.stderr.write(f"boundary-audit: {message}\n")


def _params(pairs: list[str] | None, flag: str) -> Params:
    out = []
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {item!r}: expected KEY=VALUE")
        out.append((key, value))
    return tuple(out)


@app.command("install", no_args_is_help=True)
def install_cmd(
    systems: Annotated[list[str], typer.Argument(help="System names, or `all`.")],
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if installed.")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", envvar=_env("OFFLINE"), help="Never install; check only.")
    ] = False,
) -> int:
    """Install the pinned environments of the SYSTEMS' drivers (once; safe to run twice)."""
    chosen = [cls for name in dict.fromkeys(systems) for cls in select(name)]
    skipped = 0
    for cls in dict.fromkeys(chosen):
        try:
            found = install(cls.spec, offline=offline, force=force, progress=_say)
        except BoundaryAuditError as exc:
            skipped += 1
            typer.echo(f"{cls.spec.name}: skipped: {exc.message}")
            continue
        state = f"installed in {found.install_s:g}s" if found.fresh else "already installed"
        typer.echo(f"{cls.spec.name}: {state} ({found.path}, Python {found.python_version})")
    return int(ExitCode.ENVIRONMENT if skipped else ExitCode.OK)


@app.command("list")
def list_cmd() -> int:
    """List the systems and whether their driver is installed."""
    for name, cls in SYSTEMS.items():
        state = "installed" if installed(cls.spec) else "not installed"
        typer.echo(f"{name:15} {', '.join(cls.spec.packages):62} {state}: {venv_dir(cls.spec)}")
    return int(ExitCode.OK)


def _command(words: list[str]) -> str:
    return "boundary-audit harness " + shlex.join(words)


def _content_flags(o: HarnessOptions) -> list[str]:
    flags: list[str] = []
    flags += ["--select", o.select] if o.select else []
    if o.reply_sets != ("oracle", "naive"):
        flags += [w for rs in o.reply_sets for w in ("--replies", rs)]
    flags += [w for k, v in o.params for w in ("--param", f"{k}={v}")]
    flags += [w for name in o.against for w in ("--against", name)]
    flags += [w for k, v in o.against_params for w in ("--against-param", f"{k}={v}")]
    flags += ["--explanations", str(o.explanations)] if o.explanations else []
    flags += ["--sandbox", o.sandbox] if o.sandbox != "auto" else []
    flags += [] if o.baseline else ["--no-baseline"]
    flags += ["--timings"] if o.timings else []
    return flags


def _write(report: HarnessReport, fmt: str, outputs: list[Path]) -> None:
    for path in outputs:
        render = {".json": render_json, ".md": render_markdown}.get(path.suffix, render_text)
        try:
            path.write_text(render(report), encoding="utf-8")
        except OSError as exc:
            raise ReportError(f"{path}: cannot write report: {exc.strerror or exc}") from None
    if not outputs:
        typer.echo(FORMATS[fmt](report), nl=False)


def _summary(report: HarnessReport) -> str:
    rates = ", ".join(
        f"{rs} {format_percent(r.headline)}% ({r.tasks.count})"
        for rs, r in sorted(report.harness.rates.items())
    )
    line = f"{report.harness.label}: {rates}"
    for comp in report.comparisons:
        line += (
            f"; vs {comp.against}: {len(comp.differences)} of "
            f"{comp.compared} differ, {len(comp.unexplained)} unexplained"
        )
    return line


def _run(options: HarnessOptions, fmt: str, outputs: list[Path]) -> int:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    progress = progress_for(description="running replies")
    report = run_harness(options, progress=progress, notice=_say)
    _write(report, fmt, outputs)
    sys.stderr.write(_summary(report) + "\n")
    return int(ExitCode.OK)


SystemArg = Annotated[
    str,
    typer.Argument(
        help="The system: swe-agent, langchain, autogen, openhands, terminal-bench or codex."
    ),
]
SelectOpt = Annotated[
    str | None,
    typer.Option(
        "--select",
        envvar=_env("SELECT"),
        rich_help_panel=RUN,
        help="Tasks to run (id, family, glob, `core`, `boundary`); default: all of them.",
    ),
]
RepliesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--replies",
        envvar=_env("REPLIES"),
        rich_help_panel=RUN,
        help="Reply set: oracle, naive or a JSONL file (repeatable; default: oracle and naive).",
    ),
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        rich_help_panel=RUN,
        metavar="KEY=VALUE",
        help="A driver parameter, e.g. timeout=10 (repeatable).",
    ),
]
SandboxOpt = Annotated[
    str,
    typer.Option(
        "--sandbox",
        envvar=_env("SANDBOX"),
        rich_help_panel=RUN,
        help="auto, bwrap or tempdir (the drivers need host programs: not docker).",
    ),
]
JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs", "-j", envvar=_env("JOBS"), rich_help_panel=RUN, min=1, help="Parallel runs."
    ),
]
NoBaselineOpt = Annotated[
    bool,
    typer.Option(
        "--no-baseline", rich_help_panel=RUN, help="Do not run the raw baseline (no damage)."
    ),
]
OfflineOpt = Annotated[
    bool,
    typer.Option(
        "--offline",
        envvar=_env("OFFLINE"),
        rich_help_panel=RUN,
        help="Never install a missing driver: fail instead.",
    ),
]
TimingsOpt = Annotated[
    bool,
    typer.Option(
        "--timings",
        rich_help_panel=OUTPUT,
        help="Add per-run durations and the cost per run (the report is then not reproducible).",
    ),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        envvar=_env("FORMAT"),
        rich_help_panel=OUTPUT,
        help="Format on stdout: terminal, json or markdown.",
    ),
]
OutputOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--output",
        "-o",
        rich_help_panel=OUTPUT,
        dir_okay=False,
        help="Write the report to FILE, format by suffix: .json, .md, else text (repeatable).",
    ),
]


def _finish(options: HarnessOptions, fmt: str, output: list[Path] | None) -> int:
    outputs = output or []
    words = [
        "compare" if options.compare else "run",
        options.system,
        *_content_flags(options),
        *[f"--output={p}" for p in outputs],
    ]
    return _run(replace(options, command=_command(words)), fmt, outputs)


@app.command("run", no_args_is_help=True)
def run_cmd(
    system: SystemArg,
    select: SelectOpt = None,
    replies: RepliesOpt = None,
    param: ParamOpt = None,
    sandbox: SandboxOpt = "auto",
    jobs: JobsOpt = 2,
    no_baseline: NoBaselineOpt = False,
    offline: OfflineOpt = False,
    timings: TimingsOpt = False,
    fmt: FormatOpt = "terminal",
    output: OutputOpt = None,
) -> int:
    """Run the task suite (oracle and naive replies) through SYSTEM's real harness."""
    options = HarnessOptions(
        system=system,
        select=select,
        reply_sets=tuple(replies or ("oracle", "naive")),
        params=_params(param, "--param"),
        sandbox=sandbox,
        jobs=jobs,
        baseline=not no_baseline,
        offline=offline,
        timings=timings,
    )
    return _finish(options, fmt, output)


@app.command("compare", no_args_is_help=True)
def compare_cmd(
    system: SystemArg,
    against: Annotated[
        list[str] | None,
        typer.Option(
            "--against",
            envvar=_env("AGAINST"),
            rich_help_panel=RUN,
            help="What to compare with: `adapter` (the system adapter's matching path; the "
            "default), `adapter:PATH`, or a transport name, e.g. session (repeatable).",
        ),
    ] = None,
    against_param: Annotated[
        list[str] | None,
        typer.Option(
            "--against-param",
            rich_help_panel=RUN,
            metavar="KEY=VALUE",
            help="A parameter of the --against transport (repeatable).",
        ),
    ] = None,
    explanations: Annotated[
        Path | None,
        typer.Option(
            "--explanations",
            rich_help_panel=OUTPUT,
            dir_okay=False,
            help="Explanations of disagreements to use instead of the packaged ones.",
        ),
    ] = None,
    select: SelectOpt = None,
    replies: RepliesOpt = None,
    param: ParamOpt = None,
    sandbox: SandboxOpt = "auto",
    jobs: JobsOpt = 2,
    no_baseline: NoBaselineOpt = False,
    offline: OfflineOpt = False,
    timings: TimingsOpt = False,
    fmt: FormatOpt = "terminal",
    output: OutputOpt = None,
) -> int:
    """Run the suite through SYSTEM's real harness and a model of it; list what differs."""
    options = HarnessOptions(
        system=system,
        select=select,
        reply_sets=tuple(replies or ("oracle", "naive")),
        params=_params(param, "--param"),
        sandbox=sandbox,
        jobs=jobs,
        baseline=not no_baseline,
        offline=offline,
        timings=timings,
        compare=True,
        against=tuple(against or ()),
        against_params=_params(against_param, "--against-param"),
        explanations=explanations,
    )
    return _finish(options, fmt, output)


def register(root: typer.Typer) -> None:
    """Add the `harness` command group to the CLI."""
    root.add_typer(app, name="harness")
