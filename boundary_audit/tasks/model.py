"""The task model: immutable records built by the loader from tasks/<family>/<id>.toml.

A task is what a model would be asked (instruction), the world it starts in (Fixture), two
fixed replies (the oracle, which passes on the raw path, and the typical naive reply), where
the naive reply is known to break, and the exact final state that counts as success
(Validator). All byte payloads are `bytes`; paths are relative to the work dir and use `/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

TaskId = NewType("TaskId", str)


@dataclass(frozen=True)
class FileSpec:
    """A regular file with exact bytes; `mode` None means "not checked" (fixtures default 0644)."""

    path: str
    content: bytes
    mode: int | None = None


@dataclass(frozen=True)
class SymlinkSpec:
    """A symbolic link at `path` whose target string is exactly `target` (never followed)."""

    path: str
    target: str


@dataclass(frozen=True)
class ProgramSpec:
    """A program installed in the workspace's bin dir (first on PATH).

    Either a built-in `helper` (argv-recorder, env-recorder, remote) or a custom POSIX sh
    `script`. `home` and `env` configure the `remote` helper's remote side.
    """

    name: str
    helper: str | None = None
    script: bytes | None = None
    home: str | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CommitSpec:
    """One fixture commit: the files it writes, then `git add -A` and a commit with `message`."""

    message: bytes
    files: tuple[FileSpec, ...]


@dataclass(frozen=True)
class GitSpec:
    """A git repository at `path` (relative to the work dir) built from `commits`."""

    path: str
    branch: str
    commits: tuple[CommitSpec, ...]


@dataclass(frozen=True)
class Fixture:
    """The starting state of a run. Files are written after the git commits (worktree edits)."""

    files: tuple[FileSpec, ...] = ()
    dirs: tuple[str, ...] = ()
    symlinks: tuple[SymlinkSpec, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    programs: tuple[ProgramSpec, ...] = ()
    git: GitSpec | None = None


@dataclass(frozen=True)
class ArgvCheck:
    """The argv recorder installed as `program` was called exactly `calls` (arguments, no argv0)."""

    program: str
    calls: tuple[tuple[bytes, ...], ...]


@dataclass(frozen=True)
class EnvCheck:
    """The env recorder `program` ran once and saw `vars` exactly and none of `unset`."""

    program: str
    vars: tuple[tuple[str, bytes], ...]
    unset: tuple[str, ...] = ()


@dataclass(frozen=True)
class GitCheck:
    """HEAD's history (messages, newest first, exact bytes) and HEAD's tree (every file)."""

    path: str
    messages: tuple[bytes, ...]
    tree: tuple[FileSpec, ...]


@dataclass(frozen=True)
class StdoutCheck:
    """The run's stdout equals `exact`, or contains `contains`."""

    exact: bytes | None = None
    contains: bytes | None = None


@dataclass(frozen=True)
class Validator:
    """The exact expected final state.

    The work dir must hold exactly: the fixture's files (unchanged unless listed in `files` or
    `absent`), `files`, `dirs`, `symlinks`, and their parent directories. Anything else is a
    collateral file. A fixture git repository's `.git` is checked through `git` only.
    """

    files: tuple[FileSpec, ...] = ()
    dirs: tuple[str, ...] = ()
    symlinks: tuple[SymlinkSpec, ...] = ()
    absent: tuple[str, ...] = ()
    argv: tuple[ArgvCheck, ...] = ()
    env: tuple[EnvCheck, ...] = ()
    git: GitCheck | None = None
    stdout: StdoutCheck | None = None


@dataclass(frozen=True)
class Task:
    """One task of the suite, as loaded from `source_file`."""

    id: TaskId
    family: str
    tier: int
    core: bool
    instruction: str
    hazards: tuple[str, ...]
    fixture: Fixture
    oracle: str
    naive: str
    naive_breaks: str
    """The transport on which the naive reply fails first (`raw`, `nested`, or a boundary one)."""
    validator: Validator
    source_file: str
    tags: tuple[str, ...] = ()
    oracle_passes: tuple[str, ...] = ("raw",)
    """Transports on which the oracle must pass (`tasks check` verifies those it can run)."""
    oracle_fails: tuple[str, ...] = ()
    """Transports on which the oracle is known, by design, to fail."""
    notes: str = ""
    """Why the task is built the way it is (mechanism, designed breakages)."""
    followup: str = ""
    """The harness's next command, run after the reply in the same session (stateful
    transports) or as a fresh process (the others); "" for none. Session state the reply
    leaves behind (a `cd`, a dead shell, a redirected stdout) shows in what it does."""

    @property
    def boundary(self) -> str | None:
        """The `boundary=<kind>` tag's kind for tasks outside the core, else None."""
        for tag in self.tags:
            if tag.startswith("boundary="):
                return tag.split("=", 1)[1]
        return None
