"""One exception tree for the whole tool, and the exit codes the CLI documents.

Every error a user can cause (a bad repo spec, an invalid task file, a missing daemon) is a
`BoundaryAuditError` subclass carrying its exit code and an optional hint. The CLI catches this
tree once (`boundary_audit.cli.main`) and prints one line; anything else is a bug and is
reported as an internal error with the traceback written to a log file, never to the terminal.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes. The table in README.md is generated from these docstrings' order."""

    OK = 0
    """The command completed and no gate tripped."""
    FATAL = 1
    """Internal error (a bug in boundary-audit); details are in the log file named on stderr."""
    USAGE = 2
    """The command line is wrong (unknown option, missing argument)."""
    SOURCE = 3
    """The target cannot be resolved: bad repo spec, unknown revision, unreachable remote."""
    INPUT = 4
    """A data file is invalid: task, probe, adapter, reply file, config, baseline."""
    ENVIRONMENT = 5
    """A required component is unavailable: bwrap, sshd, Docker engine, tmux, a harness package."""
    RUN = 6
    """A run could not be carried out as a whole (a transport or sandbox failed, not a task)."""
    GATE = 10
    """A gate tripped: findings matched --fail-on, or `tasks check` found a broken task."""
    INTERRUPTED = 130
    """Interrupted by the user (Ctrl-C); everything it started was stopped."""
    TERMINATED = 143
    """Terminated by SIGTERM or SIGHUP; everything it started was stopped."""


class BoundaryAuditError(Exception):
    """Base of every expected error. `str(err)` is the one-line message shown to the user."""

    exit_code: ExitCode = ExitCode.FATAL

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(BoundaryAuditError):
    """Arguments that parse but do not make sense together."""

    exit_code = ExitCode.USAGE


class SourceError(BoundaryAuditError):
    """A repository spec, revision, clone or fetch failed."""

    exit_code = ExitCode.SOURCE


class QueryError(BoundaryAuditError):
    """A packaged tree-sitter query does not compile or lacks a required capture (a bug)."""

    exit_code = ExitCode.FATAL


class ScanError(BoundaryAuditError):
    """The static scan could not run at all (individual files are skipped, not errors)."""

    exit_code = ExitCode.RUN


class TaskError(BoundaryAuditError):
    """A task file under tasks/ is invalid; the message names the file."""

    exit_code = ExitCode.INPUT


class ProbeError(BoundaryAuditError):
    """A probe file or a reply file is invalid; the message names the file and line."""

    exit_code = ExitCode.INPUT


class AdapterError(BoundaryAuditError):
    """A system adapter file is invalid; the message names the file."""

    exit_code = ExitCode.INPUT


class ConfigError(BoundaryAuditError):
    """Configuration, suppression or baseline input is invalid."""

    exit_code = ExitCode.INPUT


class EnvironmentUnavailable(BoundaryAuditError):
    """A component the command needs is not installed or cannot start."""

    exit_code = ExitCode.ENVIRONMENT


class SandboxError(BoundaryAuditError):
    """A sandbox could not be created or torn down."""

    exit_code = ExitCode.RUN


class TransportError(BoundaryAuditError):
    """A transport could not carry a reply (its machinery failed, not the reply)."""

    exit_code = ExitCode.RUN


class HarnessError(BoundaryAuditError):
    """A real-harness driver could not be installed or run."""

    exit_code = ExitCode.ENVIRONMENT


class ReportError(BoundaryAuditError):
    """A report could not be rendered or written."""

    exit_code = ExitCode.RUN
