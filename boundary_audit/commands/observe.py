"""`boundary-audit observe -- HARNESS...`: a harness's command boundary from its behaviour.

Thin: parse options into `ObserveOptions` (the harness command, its exposed paths, config
templates and variables), call `run_observe`, render the report to --output or stdout and one
summary line to stderr. Exit 0; 2 for a harness that cannot be executed or a bad option; 5
without strace or bubblewrap; 6 when no canary arrived (the observation says nothing) or the
machinery failed in some damage runs (they are in the report as `error: ...`).
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
from boundary_audit.observe.endpoint import ConfigTemplate
from boundary_audit.observe.harness import HarnessCommand
from boundary_audit.observe.model import SHAPES
from boundary_audit.pipelines.observe import MEMORY, ObserveOptions, run_observe
from boundary_audit.report import observe as observe_report
from boundary_audit.report.observe import ObserveFormat
from boundary_audit.report.progress import progress_for
from boundary_audit.results.observe import ObserveReport

HARNESS, MODEL, RUN, OUTPUT = "Harness", "Model", "Run", "Output"
DEFAULT_TIMEOUT = 60.0


def pairs(values: list[str], flag: str) -> dict[str, str]:
    """`["A=x"]` as a mapping; anything else is a usage error naming the flag."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {value!r}: expected NAME=VALUE")
        out[key] = rest
    return out


def regenerate_command(
    o: ObserveOptions, templates: list[str], fmt: ObserveFormat, output: Path | None
) -> str:
    """The canonical command line recorded in the report's header."""
    h = o.harness
    argv = ["boundary-audit", "observe"]
    argv += [a for p in h.expose for a in ("--expose", str(p))]
    argv += [a for t in templates for a in ("--config-template", t)]
    argv += [a for k, v in sorted(h.env.items()) for a in ("--env", f"{k}={v}")]
    argv += ["--name", h.name] if h.name else []
    argv += ["--source", o.source] if o.source != "mock" else []
    argv += ["--shape", h.shape] if h.shape != "auto" else []
    argv += ["--count", str(o.count)] if o.count != 2 else []
    argv += ["--ssh"] if o.ssh else []
    argv += ["--no-fingerprint"] if not o.fingerprint else []
    argv += ["--no-damage"] if not o.damage else []
    argv += ["--select", o.select] if o.select != "core" else []
    argv += (
        [a for r in o.replies for a in ("--replies", r)] if o.replies != ("oracle", "naive") else []
    )
    argv += ["--compare", o.compare] if o.compare else []
    argv += [a for k, v in sorted(o.explanations.items()) for a in ("--explain", f"{k}={v}")]
    argv += ["--timeout", f"{o.timeout_s:g}"] if o.timeout_s != DEFAULT_TIMEOUT else []
    argv += ["--memory", str(o.memory_bytes >> 20)] if o.memory_bytes != MEMORY else []
    argv += ["--format", fmt.value] if fmt != ObserveFormat.TERMINAL else []
    argv += ["--output", str(output)] if output is not None else []
    return shlex.join([*argv, "--", *h.argv])


def summary(report: ObserveReport) -> str:
    """`observe codex: shell-string raw(flags=-lc), native, 1 shell parse; damage (pp): ...`."""
    p = report.path
    what = "no boundary" if p is None else f"{p.boundary_class.value}, {report.contract}"
    parses = f", {p.shell_parses} shell parse{'' if p.shell_parses == 1 else 's'}" if p else ""
    row = report.table8.rows[0] if report.table8 and report.table8.rows else None
    transport = f" {row.transport}" if row else ""
    damage = ""
    if row is not None:
        damage = "; damage (pp): " + (
            ", ".join(f"{m.reply_set} {m.damage_pp:+.1f}" for m in row.measures)
            or f"not measured ({row.skipped})"
        )
    n = len(report.differences)
    diff = (
        f"; {n} difference{'' if n == 1 else 's'} from {report.compared}" if report.compared else ""
    )
    return f"observe {report.name}: {what}{transport}{parses}{damage}{diff}"


def _announce(line: str) -> None:
    sys.stderr.write(f"boundary-audit: {line}\n")


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{output}: cannot write report: {exc.strerror or exc}") from None


# fmt: off
def observe(
    harness: Annotated[list[str] | None, typer.Argument(
        metavar="-- HARNESS...", show_default=False,
        help="The harness's command line, after `--` (e.g. `-- node cli.js exec 'Run it.'`).",
    )] = None,
    expose: Annotated[list[Path] | None, typer.Option(
        "--expose", rich_help_panel=HARNESS, metavar="PATH",
        help="A host path the harness needs inside the sandbox, read-only (its install dir; "
             "repeatable). The home directory and /tmp are hidden otherwise.")] = None,
    config_template: Annotated[list[str] | None, typer.Option(
        "--config-template", rich_help_panel=HARNESS, metavar="FILE:DEST",
        help="Write FILE to DEST under the harness's HOME, with {{base_url}}, {{api_key}}, "
             "{{model}}, {{home}}, {{work}} filled (repeatable).")] = None,
    env: Annotated[list[str] | None, typer.Option(
        "--env", rich_help_panel=HARNESS, metavar="NAME=VALUE",
        help="A variable for the harness (repeatable); OPENAI_BASE_URL, OPENAI_API_KEY... "
             "are set already.")] = None,
    name: Annotated[str, typer.Option(
        "--name", rich_help_panel=HARNESS, help="The harness's name in the report.")] = "",
    source: Annotated[str, typer.Option(
        "--source", rich_help_panel=MODEL,
        help="Where the replies come from: mock (an OpenAI-compatible model at "
             "OPENAI_BASE_URL), env, file or stdin (docs/observe.md).")] = "mock",
    shape: Annotated[str, typer.Option(
        "--shape", rich_help_panel=MODEL,
        help="How the mock answers: auto (a tool call when the request offers a shell tool, "
             "else a ```bash block), tool, fenced.")] = "auto",
    count: Annotated[int, typer.Option(
        "--count", rich_help_panel=MODEL, min=1, max=16,
        help="Arrival canaries in the traced run (two show whether a session persists).")] = 2,
    ssh: Annotated[bool, typer.Option(
        "--ssh", rich_help_panel=HARNESS,
        help="Make the test sshd reachable ($BA_SSH_CONFIG) and trace its remote side.")] = False,
    no_fingerprint: Annotated[bool, typer.Option(
        "--no-fingerprint", rich_help_panel=RUN, help="Skip the probes.")] = False,
    no_damage: Annotated[bool, typer.Option(
        "--no-damage", rich_help_panel=RUN, help="Skip the task suite.")] = False,
    select: Annotated[str, typer.Option(
        "--select", rich_help_panel=RUN, help="Tasks for the damage run.")] = "core",
    replies: Annotated[list[str] | None, typer.Option(
        "--replies", "-r", rich_help_panel=RUN,
        help="Reply sets for the damage run (default oracle + naive).")] = None,
    compare: Annotated[str, typer.Option(
        "--compare", rich_help_panel=OUTPUT, metavar="SYSTEM:PATH",
        help="Compare the derived path with an adapter's (e.g. codex:shell-command).")] = "",
    explain: Annotated[list[str] | None, typer.Option(
        "--explain", rich_help_panel=OUTPUT, metavar="FIELD=TEXT",
        help="Why a difference from --compare is expected (repeatable).")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", rich_help_panel=RUN, min=1, max=3600,
        help="Seconds one harness run may take.")] = DEFAULT_TIMEOUT,
    memory: Annotated[int, typer.Option(
        "--memory", rich_help_panel=RUN, min=64, metavar="MIB",
        help="Memory of one harness run (MiB).")] = MEMORY >> 20,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", rich_help_panel=RUN, min=1, help="Damage runs in parallel.")] = 2,
    fmt: Annotated[ObserveFormat, typer.Option(
        "--format", "-f", rich_help_panel=OUTPUT, case_sensitive=False,
        help="terminal, markdown, json, or toml (the derived path alone).",
    )] = ObserveFormat.TERMINAL,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT, dir_okay=False,
        help="Write the report to FILE instead of stdout.")] = None,
) -> int:
    # fmt: on
    """Observe a harness's command boundary from its behaviour: no source, no adapter."""
    if shape not in SHAPES:
        raise UsageError(f"--shape {shape!r}: one of {', '.join(SHAPES)}")
    templates = [ConfigTemplate.parse(t) for t in config_template or []]
    harness = list(harness or [])
    if harness and "/" in harness[0] and not harness[0].startswith("/"):
        harness = [str(Path(harness[0]).absolute()), *harness[1:]]  # it runs in its work dir
    command = HarnessCommand(
        argv=tuple(harness), expose=tuple(p.resolve() for p in expose or ()),
        templates=tuple(templates), shape=shape, env=pairs(env or [], "--env"), name=name,
    )
    options = ObserveOptions(
        harness=command, source=source, count=count, ssh=ssh, fingerprint=not no_fingerprint,
        damage=not no_damage, select=select, replies=tuple(replies or ("oracle", "naive")),
        compare=compare, explanations=pairs(explain or [], "--explain"), timeout_s=timeout,
        jobs=jobs, memory_bytes=memory << 20,
    )
    options = replace(
        options, command=regenerate_command(options, config_template or [], fmt, output)
    )
    report = run_observe(
        options,
        progress=progress_for(),
        announce=_announce,
    )
    to_tty = output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((160, 24)).columns if to_tty else 160
    _emit(observe_report.renderer_for(fmt, color=to_tty, width=width).render(report), output)
    sys.stderr.write(summary(report) + "\n")
    rows = report.table8.rows if report.table8 else ()
    errors = sum(m.errors for r in rows for m in r.measures)
    return int(ExitCode.RUN if errors else ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `observe` to the CLI."""
    app.command("observe", rich_help_panel="Dynamic")(observe)
