"""`boundary-audit source resolve|files SPEC`: what a scan of SPEC would read (a debugging aid).

`resolve` prints the full sha on stdout (and the URL, git directory and notes on stderr);
`files` lists each file of the commit with its size or the reason it would be skipped. Both
use the same options and cache as `scan`; errors are one line with exit code 3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from boundary_audit.errors import ExitCode
from boundary_audit.source import DEFAULT_MAX_BYTES, Checkout, open_checkout

app = typer.Typer(
    help="Resolve a target spec and list what a scan would read.", no_args_is_help=True
)

Spec = Annotated[
    str,
    typer.Argument(
        metavar="SPEC", help="PATH, URL, user@host:path or owner/name, with optional @REV."
    ),
]
Offline = Annotated[
    bool,
    typer.Option(
        "--offline",
        envvar="BOUNDARY_AUDIT_OFFLINE",
        rich_help_panel="Source",
        help="Use only the cache; never touch the network.",
    ),
]
Refresh = Annotated[
    bool,
    typer.Option(
        "--refresh", rich_help_panel="Source", help="Fetch the remote even if the rev is cached."
    ),
]
CacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        envvar="BOUNDARY_AUDIT_CACHE_DIR",
        rich_help_panel="Source",
        help="Where mirrors are cached (default: the user cache dir).",
    ),
]
Timeout = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=1,
        max=3600,
        rich_help_panel="Source",
        help="Seconds a clone or fetch may take.",
    ),
]


def _open(
    spec: str, offline: bool, refresh: bool, cache_dir: Path | None, timeout: float
) -> Checkout:
    def progress(message: str) -> None:
        typer.echo(f"boundary-audit: {message}", err=True)

    co = open_checkout(
        spec,
        offline=offline,
        refresh=refresh,
        cache_dir=cache_dir,
        timeout=timeout,
        progress=progress,
    )
    for note in co.notes:
        typer.echo(f"note: {note}", err=True)
    return co


@app.command("resolve")
def resolve(
    spec: Spec,
    offline: Offline = False,
    refresh: Refresh = False,
    cache_dir: CacheDir = None,
    timeout: Timeout = 120.0,
) -> int:
    """Print the full sha SPEC resolves to (URL and git directory go to stderr)."""
    co = _open(spec, offline, refresh, cache_dir, timeout)
    typer.echo(f"{co.spec.kind} {co.url}\ngit dir {co.git_dir}", err=True)
    typer.echo(co.sha)
    return int(ExitCode.OK)


@app.command("files")
def files(
    spec: Spec,
    offline: Offline = False,
    refresh: Refresh = False,
    cache_dir: CacheDir = None,
    timeout: Timeout = 120.0,
    max_bytes: Annotated[
        int, typer.Option("--max-bytes", min=0, help="Skip files larger than this.")
    ] = DEFAULT_MAX_BYTES,
) -> int:
    """List the commit's files: `size<TAB>path`, or `skipped: REASON<TAB>path`."""
    co = _open(spec, offline, refresh, cache_dir, timeout)
    for f in co.files(max_bytes=max_bytes):
        typer.echo(
            f"{len(f.data) if f.data is not None else 'skipped: ' + str(f.skipped)}\t{f.path}"
        )
    return int(ExitCode.OK)


def register(root: typer.Typer) -> None:
    """Add the `source` command group to the CLI."""
    root.add_typer(app, name="source")
