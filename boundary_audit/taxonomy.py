"""The vocabulary every stage speaks: boundary classes, contracts, confidence, severity.

The nine boundary classes are those of DESIGN.md. Each says what happens to a model reply R
between the harness and execve, and how many shell parses R goes through on the way.
"""

from __future__ import annotations

from enum import Enum

BASELINE = "raw"
"""The transport every damage is measured against (`bash -c R`: one parse of the model's own
string), the name of `transports.raw.RawTransport`; the one definition of it."""


class BoundaryClass(str, Enum):
    """Where a reply crosses into a process (DESIGN.md, "Boundary taxonomy")."""

    SHELL_STRING = "shell-string"
    """`["bash","-c",R]`, `shell=True`, `sh -c`, `bash -lc`: one shell parse."""
    SHELL_STDIN = "shell-stdin"
    """R written to the stdin of a one-shot shell: commands that read stdin eat the rest of R."""
    SHELL_SESSION = "shell-session"
    """R sent into a persistent shell (pipe or pty, end markers): state and stdin persist."""
    TTY_KEYSTROKES = "tty-keystrokes"
    """R typed into an interactive shell (tmux send-keys, a pty).

    Line discipline and readline act on it."""
    ARGV_DIRECT = "argv-direct"
    """R tokenized and spawned without a shell: pipes, redirects, `$()` and globs are inert text."""
    SCRIPT_FILE = "script-file"
    """R written to a file and run as `[interpreter, path]`: one parse, no quoting damage."""
    REMOTE_STRING = "remote-string"
    """R handed as one string to `docker exec`, `ssh`, a sandbox API.

    One remote parse (+1 for ssh)."""
    NESTED_STRING = "nested-string"
    """R interpolated into a larger quoted command that a shell parses again: two parses."""
    SERIALIZED = "serialized"
    """R embedded in JSON/YAML, by a serializer (safe) or by string concatenation (unsafe)."""

    @property
    def parse_layers(self) -> int:
        """Shell parses R goes through before execve in the typical case of this class."""
        return _LAYERS[self]


_LAYERS: dict[BoundaryClass, int] = {
    BoundaryClass.SHELL_STRING: 1,
    BoundaryClass.SHELL_STDIN: 1,
    BoundaryClass.SHELL_SESSION: 1,
    BoundaryClass.TTY_KEYSTROKES: 1,
    BoundaryClass.ARGV_DIRECT: 0,
    BoundaryClass.SCRIPT_FILE: 1,
    BoundaryClass.REMOTE_STRING: 1,
    BoundaryClass.NESTED_STRING: 2,
    BoundaryClass.SERIALIZED: 0,
}


class Contract(str, Enum):
    """What the harness asks the model to produce."""

    RAW = "raw"
    """The model writes a command in text (a code block, JSON it writes itself, keystrokes)."""
    NATIVE = "native"
    """A structured tool call whose JSON arguments the harness decodes."""
    UNKNOWN = "unknown"
    """The static evidence does not say."""


class Confidence(str, Enum):
    """How sure a finding is. Static evidence reaches at most MEDIUM; measurement raises to HIGH."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Ordering key: low < medium < high."""
        return ("low", "medium", "high").index(self.value)


class Severity(str, Enum):
    """How much damage the boundary can do to a correct command (independent of confidence)."""

    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Ordering key: info < low < medium < high."""
        return ("info", "low", "medium", "high").index(self.value)
