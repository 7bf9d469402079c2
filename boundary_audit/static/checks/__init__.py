"""The registry of static checks: one explicit tuple, in code order.

Each check is one module here, one query file per language under
`static/queries/<dialect>/<name>.scm`, and one fixture folder `tests/fixtures/checks/<code>/`.
`OWNER` maps each boundary class to the check whose code its findings carry, and `RECORDS`
to the `ClassRecord` that check declares (severity, parse layers and their words, the fix, how
to replay it): adding a class is its check module, its queries and its fixture, plus the
class's name in `taxonomy.BoundaryClass`.
"""

from __future__ import annotations

from boundary_audit.static.checks.argv_spawn import ArgvSpawn
from boundary_audit.static.checks.base import Check, ClassRecord
from boundary_audit.static.checks.nested_shell_string import NestedShellString
from boundary_audit.static.checks.remote_command_string import RemoteCommandString
from boundary_audit.static.checks.script_file_exec import ScriptFileExec
from boundary_audit.static.checks.serialized_command import SerializedCommand
from boundary_audit.static.checks.shell_session_input import ShellSessionInput
from boundary_audit.static.checks.shell_stdin_write import ShellStdinWrite
from boundary_audit.static.checks.shell_string_sink import ShellStringSink
from boundary_audit.static.checks.suppression_without_reason import SuppressionWithoutReason
from boundary_audit.static.checks.tty_keystrokes import TtyKeystrokes
from boundary_audit.taxonomy import BoundaryClass

CHECKS: tuple[type[Check], ...] = (
    ShellStringSink,
    NestedShellString,
    ShellStdinWrite,
    ShellSessionInput,
    TtyKeystrokes,
    ArgvSpawn,
    ScriptFileExec,
    RemoteCommandString,
    SerializedCommand,
    SuppressionWithoutReason,
)

BY_CODE: dict[str, type[Check]] = {c.code: c for c in CHECKS}
OWNER: dict[BoundaryClass, type[Check]] = {bc: c for c in CHECKS for bc in c.classes}
assert set(OWNER) == set(BoundaryClass), "every boundary class needs an owning check"
RECORDS: dict[BoundaryClass, ClassRecord] = {
    c.record.boundary_class: c.record for c in CHECKS if c.record is not None
}
"""Each boundary class's record, as its owning check declares it."""
assert set(RECORDS) == set(BoundaryClass), "every boundary class needs a record on its check"


def record_of(cls: BoundaryClass) -> ClassRecord:
    """The record of boundary class `cls` (severity, parse layers, texts, fix, transport)."""
    return RECORDS[cls]


__all__ = ["BY_CODE", "CHECKS", "OWNER", "RECORDS", "Check", "ClassRecord", "record_of"]
