"""The `boundary-audit` command line: a thin typer app over library functions.

Each subcommand lives in `boundary_audit/commands/<name>.py` and registers itself through
`register(app)`; the root group (`commands.LazyGroup`) imports a command's module only when
that command runs, so `--version` and `--help` stay cheap. This module owns the single place
where errors are turned into one line on stderr and a documented exit code (see
`errors.ExitCode`).
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING

from boundary_audit import __version__
from boundary_audit.errors import BoundaryAuditError, ExitCode

if TYPE_CHECKING:
    import typer

# NOTE: everything else (typer, the supervisor, the commands) is imported once a command
# is to run, so that `--version` costs an interpreter start and little more
# (benchmarks/bench_startup.py, tests/test_cli_startup.py).

VERSION_LINE = f"boundary-audit {__version__}\n"
GC_THRESHOLDS = (100_000, 50, 100)
"""`gc.set_threshold` for a command's process: 57 collections in that scan, 0.06 s."""


@cache
def build_app() -> typer.Typer:
    """The root typer app (built once, on the first command that needs it)."""
    import typer

    from boundary_audit.commands import SETTINGS, LazyGroup, coercion

    coercion.install()

    app = typer.Typer(
        name="boundary-audit",
        help=(
            "Find every place where an LLM agent harness passes model output across a parser "
            "boundary on its way to a process, classify it, and measure the damage for real."
        ),
        no_args_is_help=True,
        cls=LazyGroup,
        **SETTINGS,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    def _version(value: bool) -> None:
        if value:
            typer.echo(VERSION_LINE, nl=False)
            raise typer.Exit(0)

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ) -> None:
        """boundary-audit: parser boundaries between an agent's reply and execve."""
        # Runs only when a command does (not for --version or --help): the sandbox package
        # is imported by the commands that use it anyway.
        from boundary_audit.sandbox import announce_with

        announce_with(_say)

    return app


def _internal_error(exc: BaseException) -> int:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    log = _crash_log(exc)
    where = f" (traceback in {log})" if log is not None else ""
    sys.stderr.write(f"boundary-audit: internal error: {type(exc).__name__}: {msg}{where}\n")
    return int(ExitCode.FATAL)


def _crash_log(exc: BaseException) -> str | None:
    """Write `exc`'s traceback to a new file of the user's private state directory
    (`<state>/crash/<UTC time>-<pid>.log`, mode 0600) and return its path, or None if it
    cannot be written. Never a fixed name in the shared /tmp: a traceback quotes what it
    read (a reply, a path, a URL), and a name there can be planted as a symlink first."""
    import os
    import time
    import traceback

    try:
        from boundary_audit import supervisor

        crash = supervisor.state_dir() / "crash"
        crash.mkdir(mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = crash / f"{stamp}-{os.getpid()}.log"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(traceback.format_exception(exc)))
    except Exception:  # noqa: BLE001 - a crash report must not crash: the message still goes out
        return None
    return str(path)


def _interrupted(exc: KeyboardInterrupt) -> int:
    from boundary_audit import supervisor

    if isinstance(exc, supervisor.Terminated):
        sys.stderr.write(f"boundary-audit: terminated ({exc.args[0]})\n")
        return int(ExitCode.TERMINATED)
    sys.stderr.write("boundary-audit: interrupted\n")
    return int(ExitCode.INTERRUPTED)


def _say(line: str) -> None:
    sys.stderr.write(f"boundary-audit: {line}\n")


def _signalled() -> int | None:
    import signal

    from boundary_audit import supervisor

    signum = supervisor.signalled()
    if signum is None:
        return None
    if signum == signal.SIGINT:
        return _interrupted(KeyboardInterrupt())
    return _interrupted(supervisor.Terminated(signum))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    if (sys.argv[1:] if argv is None else argv)[:1] == ["--version"]:
        sys.stdout.write(VERSION_LINE)  # what the eager --version option prints, app unbuilt
        return int(ExitCode.OK)
    import gc
    import threading

    # NOTE(h2): with the default threshold (700 allocations) the collector ran 631 times, for
    # 0.47 s of CPU, in a 9 s scan of openai-agents-python@7f7a44f: each time it walked the
    # live IR and tables again, and found no garbage (a scan makes no reference cycles:
    # tests/test_static_no_cycles.py). The command's modules are frozen out of every
    # collection once imported (`commands.load`).
    gc.set_threshold(*GC_THRESHOLDS)
    import typer

    from boundary_audit import supervisor

    if threading.current_thread() is threading.main_thread():
        supervisor.install_signal_handlers()
    try:
        rv = build_app()(args=argv, prog_name="boundary-audit", standalone_mode=False)
    except typer.Exit as exc:
        return _signalled() or int(exc.exit_code)
    except typer.Abort:
        return _signalled() or _interrupted(KeyboardInterrupt())
    except typer.TyperException as exc:  # usage errors of the vendored click
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            sys.stderr.write(f"boundary-audit: usage error: {exc.format_message()}\n")
        return int(ExitCode.USAGE) if exc.exit_code == 2 else int(exc.exit_code)
    except BoundaryAuditError as exc:
        sys.stderr.write(f"boundary-audit: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"  hint: {exc.hint}\n")
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes an exit code
        return _internal_error(exc)
    # NOTE: typer turns Ctrl-C (and so our SIGTERM, a KeyboardInterrupt) into a silent
    # return of 130; the signal that arrived says which it was.
    return _signalled() or (int(rv) if isinstance(rv, int) else int(ExitCode.OK))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
