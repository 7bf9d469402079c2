"""Materialize a task's fixture into a fresh workspace.

Order: the git repository (its commits write their files), then directories, files (worktree
edits on top of the commits) and symlinks, then helper programs into the bin dir, then the
task's environment (plus a fixed git identity and date when there is a repository, so that a
reply's commit never depends on the host). Modes are set explicitly, whatever the umask.
"""

from __future__ import annotations

import os
from pathlib import Path

from boundary_audit._subprocess import write_executable
from boundary_audit.sandbox.interface import Workspace
from boundary_audit.tasks import gitops, helpers
from boundary_audit.tasks.model import ProgramSpec, Task


def materialize(task: Task, ws: Workspace) -> None:
    """Write `task.fixture` into `ws.work`, `ws.bin` and `ws.env`."""
    fixture = task.fixture
    if fixture.git is not None:
        repo = ws.work if fixture.git.path == "." else ws.work / fixture.git.path
        gitops.build_repo(repo, fixture.git)
        ws.env.update(gitops.identity_env(gitops.REPLY_DATE))
    for d in fixture.dirs:
        _mkdir(ws.work, d)
    for f in fixture.files:
        target = ws.work / f.path
        _mkdir(ws.work, os.path.dirname(f.path))
        write_executable(target, f.content, 0o644 if f.mode is None else f.mode)
    for s in fixture.symlinks:
        _mkdir(ws.work, os.path.dirname(s.path))
        os.symlink(s.target, ws.work / s.path)
    for program in fixture.programs:
        _install(task, ws, program)
    ws.env.update(dict(fixture.env))


def _mkdir(work: Path, rel: str) -> None:
    if not rel:
        return
    parts = rel.split("/")
    for i in range(len(parts)):
        d = work.joinpath(*parts[: i + 1])
        if not d.is_dir():
            d.mkdir()
            os.chmod(d, 0o755)


def program_text(task: Task, ws: Workspace, program: ProgramSpec) -> bytes:
    """The bytes of fixture program `program` as installed for workspace `ws`."""
    if program.script is not None:
        return program.script
    if program.helper == "argv-recorder":
        return helpers.argv_recorder(program.name, ws.inner_obs).encode()
    if program.helper == "env-recorder":
        watched = [
            name for c in task.validator.env if c.program == program.name for name, _ in c.vars
        ]
        watched += [
            name for c in task.validator.env if c.program == program.name for name in c.unset
        ]
        return helpers.env_recorder(program.name, watched, ws.inner_obs).encode()
    if program.helper == "remote":
        assert program.home is not None
        home = ws.inner_work.rstrip("/") + "/" + program.home
        script = helpers.remote(program.name, home, program.env, ws.inner_obs)
        return script.encode("utf-8", "surrogateescape")
    raise ValueError(f"unknown helper {program.helper!r}")  # the loader only admits known helpers


def _install(task: Task, ws: Workspace, program: ProgramSpec) -> None:
    write_executable(ws.bin / program.name, program_text(task, ws, program))
