"""`boundary-audit generate`: ask an OpenAI-compatible endpoint for replies to the task suite.

Thin: parse options into the engine's `Sampling`, `Endpoint` and `Pacing`, build the plan
(`llm.generate.plan`: tasks x contracts x draws, the disclosure from `--disclose-for`), then
either print the request bodies (`--dry-run`, nothing is sent) or run it into `--output`
(resuming what is already there) with progress on stderr and one summary line. The key comes
from `--api-key` or OPENAI_API_KEY and is never printed or written. Exit codes: 0 done; 2
usage (and a request the endpoint refuses, 400/422); 4 an output file that is not ours; 5
the endpoint cannot be reached or refuses the key or the model; 6 it kept failing (5xx,
429, timeouts, answers that are not JSON) after the retries. A failed reply (a refusal, no
command in the answer) is not an error: it is a line of the output.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode, UsageError
from boundary_audit.llm.extract import METHODS

ASK, WHAT, PACE, OUTPUT = "Endpoint", "What to ask", "Pacing", "Output"
DEFAULT_SELECT = "core"


def _env(name: str) -> str:
    return f"BOUNDARY_AUDIT_{name}"


# fmt: off
def generate(
    model: Annotated[str, typer.Option(
        "--model", "-m", envvar=_env("MODEL"), rich_help_panel=ASK, show_default=False,
        help="Model name the endpoint serves.")],
    base_url: Annotated[str, typer.Option(
        "--base-url", envvar="OPENAI_BASE_URL", rich_help_panel=ASK,
        help="OpenAI-compatible base URL (ends in /v1 for most servers).",
    )] = "https://api.openai.com/v1",
    api_key: Annotated[str | None, typer.Option(
        "--api-key", envvar="OPENAI_API_KEY", rich_help_panel=ASK, show_default=False,
        help="API key (prefer the environment: a flag shows in `ps`). Never written anywhere. "
             "Local servers that take none get a placeholder.")] = None,
    api: Annotated[str, typer.Option(
        "--api", envvar=_env("API"), rich_help_panel=ASK,
        help="`chat` (chat completions) or `responses` (the Responses API).")] = "chat",
    stream: Annotated[bool, typer.Option(
        "--stream", rich_help_panel=ASK, help="Ask for streamed answers.")] = False,
    temperature: Annotated[float | None, typer.Option(
        "--temperature", rich_help_panel=ASK, min=0.0, max=2.0, show_default=False,
        help="Sampling temperature; not sent unless given.")] = None,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", rich_help_panel=ASK, min=1, show_default=False,
        help="Output token limit (max_completion_tokens / max_output_tokens); not sent "
             "unless given.")] = None,
    reasoning_effort: Annotated[str | None, typer.Option(
        "--reasoning-effort", rich_help_panel=ASK, show_default=False,
        help="Reasoning effort (minimal, low, medium, high, ...); not sent unless given.",
    )] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", rich_help_panel=ASK, show_default=False,
        help="Seed; draw d is asked with seed+d. Not sent unless given.")] = None,
    select: Annotated[str, typer.Option(
        "--select", envvar=_env("SELECT"), rich_help_panel=WHAT,
        help="Tasks: ids, families, `core`, `boundary`, `all`, tags or globs, comma-separated.",
    )] = DEFAULT_SELECT,
    contract: Annotated[list[str], typer.Option(
        "--contract", "-c", rich_help_panel=WHAT, show_default=False,
        help="Contract: raw, disclosed or native (contracts/). Repeatable. Default: raw.",
    )] = [],  # noqa: B006 - typer needs a list default
    draws: Annotated[int, typer.Option(
        "--draws", "-k", rich_help_panel=WHAT, min=1, max=1000,
        help="Replies per task and contract.")] = 1,
    disclose_for: Annotated[str | None, typer.Option(
        "--disclose-for", rich_help_panel=WHAT, show_default=False,
        help="The boundary the disclosed contract describes: a transport (default nested), "
             "an adapter path SYSTEM:PATH, or a scan finding FILE#N / FILE#FINGERPRINT.")] = None,
    adapters: Annotated[list[Path], typer.Option(
        "--adapters", rich_help_panel=WHAT, show_default=False,
        help="More adapter files or folders for --disclose-for SYSTEM:PATH.",
    )] = [],  # noqa: B006
    extract_method: Annotated[str | None, typer.Option(
        "--extract", rich_help_panel=WHAT, show_default=False,
        help=f"How the command is taken from a text answer: {', '.join(METHODS[:-1])}. "
             "Default: the contract's.")] = None,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-j", envvar=_env("CONCURRENCY"), rich_help_panel=PACE, min=1, max=512,
        help="Requests in flight at once.")] = 4,
    rate: Annotated[float, typer.Option(
        "--rate", envvar=_env("RATE"), rich_help_panel=PACE, min=0.0,
        help="Requests started per second at most; 0 is no limit.")] = 0.0,
    retries: Annotated[int, typer.Option(
        "--retries", rich_help_panel=PACE, min=0, max=50,
        help="Retries of a request on 429, 408, 409, 5xx, timeouts and broken answers.")] = 4,
    backoff: Annotated[float, typer.Option(
        "--backoff", rich_help_panel=PACE, min=0.0, max=60.0,
        help="First backoff in seconds (doubled per retry, jittered; Retry-After wins).")] = 1.0,
    timeout: Annotated[float, typer.Option(
        "--timeout", rich_help_panel=PACE, min=0.1, max=3600.0,
        help="Seconds one request may take.")] = 120.0,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT, dir_okay=False, show_default=False,
        help="The reply JSONL (appended to: answered requests are not asked again).",
    )] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", rich_help_panel=OUTPUT,
        help="Print each request's body as a JSON line and send nothing.")] = False,
    progress_every: Annotated[float, typer.Option(
        "--progress-every", rich_help_panel=OUTPUT, min=0.0, hidden=True,
        help="Seconds between progress lines when stderr is not a terminal.")] = 10.0,
) -> int:
    # fmt: on
    """Ask an OpenAI-compatible model for replies to the tasks, under raw/disclosed/native."""
    from boundary_audit.llm import generate as engine

    if api not in engine.APIS:
        raise UsageError(f"--api {api!r} is not one of {', '.join(engine.APIS)}")
    if extract_method is not None and extract_method not in METHODS:
        raise UsageError(f"--extract {extract_method!r} is not one of {', '.join(METHODS)}")
    if output is None and not dry_run:
        raise UsageError("give --output FILE (or --dry-run to see the requests)")
    the_plan = engine.plan(
        select=select,
        contracts=tuple(contract) or ("raw",),
        draws=draws,
        disclose_for=disclose_for,
        adapters=tuple(adapters),
        extract_method=extract_method,
    )
    sampling = engine.Sampling(model, temperature, max_tokens, reasoning_effort, seed)
    endpoint = engine.Endpoint(base_url, api_key or engine.NO_KEY, api, stream, timeout)
    if dry_run:
        for line in engine.dry_run_lines(the_plan, endpoint, sampling):
            sys.stdout.write(line)
        sys.stdout.flush()
        return int(ExitCode.OK)
    assert output is not None
    if the_plan.boundary is not None:
        sys.stderr.write(f"boundary-audit: disclosed boundary: {the_plan.boundary.label}\n")
    pacing = engine.Pacing(concurrency, rate, retries, backoff)
    result = engine.run(
        the_plan,
        endpoint=endpoint,
        sampling=sampling,
        pacing=pacing,
        output=output,
        progress=sys.stderr,
        progress_every=progress_every,
    )
    for note in result.notes:
        sys.stderr.write(f"boundary-audit: {note}\n")
    sys.stderr.write(engine.summary(result, the_plan, output) + "\n")
    return int(ExitCode.OK)


def register(app: typer.Typer) -> None:
    """Add `generate` to the CLI."""
    app.command("generate", rich_help_panel="Models")(generate)
