"""Git for fixtures and validators: build the fixture repository, read HEAD's history and tree.

`build_repo` runs the host's `git` (through `_subprocess.run`, with a fixed identity and fixed
dates so that commit ids are reproducible, global/system configuration off): it runs before any
reply, on a repository that is ours then.

Inspection after the reply ran never runs git: the reply may have rewritten the repository's
config (a partial-clone promisor whose `uploadpack` is a shell command makes `rev-list` run it
as a lazy fetch), hooks, refs and objects. `head_messages` and `head_tree` read the repository
with `gitread.Repository`, a pure-Python reader given the `.git` directory's descriptor (never
a path, never a link followed, nothing outside the repository read, every read bounded), and
turn everything odd into a failing validator reason that starts with "git: ", never an
exception.
"""

from __future__ import annotations

import os
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.errors import SandboxError
from boundary_audit.tasks import gitread
from boundary_audit.tasks.model import GitSpec

FIXTURE_DATE = "2024-01-01T00:00:00Z"
REPLY_DATE = "2024-01-02T00:00:00Z"
AUTHOR = ("Fixture Author", "fixture@example.invalid")

_SAFE = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "log.showSignature=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "safe.directory=*",
)


def identity_env(date: str) -> dict[str, str]:
    """Author/committer variables for `date` (replies get them too: their commits are stable)."""
    name, email = AUTHOR
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }


def _env(date: str = FIXTURE_DATE) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        **identity_env(date),
    }


def _git(
    repo: Path, *args: str, stdin: bytes | None = None, check: bool = True
) -> _subprocess.ProcessResult:
    return _subprocess.run(
        ["git", *_SAFE, "-C", str(repo), *args],
        input=stdin,
        env=_env(),
        timeout=30,
        check=check,
        error=SandboxError,
        what=f"git {args[0]}",
    )


def build_repo(repo: Path, spec: GitSpec) -> None:
    """Create the fixture repository: init, local identity, then each commit in order."""
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q", "-b", spec.branch)
    name, email = AUTHOR
    _git(repo, "config", "user.name", name)
    _git(repo, "config", "user.email", email)
    for commit in spec.commits:
        for f in commit.files:
            target = repo / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.content)
            os.chmod(target, f.mode if f.mode is not None else 0o644)
        _git(repo, "add", "-A")
        _git(
            repo,
            "commit",
            "-q",
            "--allow-empty",
            "--cleanup=verbatim",
            "-F",
            "-",
            stdin=commit.message,
        )


def open_repository(git_dir_fd: int) -> tuple[gitread.Repository | None, str]:
    """The reader of the git directory `git_dir_fd` (its own descriptor); or (None, why not)."""
    try:
        return gitread.Repository(git_dir_fd), ""
    except gitread.GitReadError as exc:
        return None, f"git: {exc}"


def head_messages(repo: gitread.Repository) -> tuple[tuple[bytes, ...] | None, str]:
    """HEAD's commit messages in `git rev-list --topo-order HEAD` order, exact bytes; or
    (None, why not)."""
    try:
        shas = repo.rev_list(repo.peel_commit(repo.head()))
        return tuple(repo.commit(sha).message for sha in shas), ""
    except gitread.Unsupported as exc:
        return None, f"git: {exc}"
    except gitread.GitReadError as exc:
        return None, f"git: no history at HEAD ({exc})"


def head_tree(repo: gitread.Repository) -> tuple[dict[str, gitread.TreeEntry] | None, str]:
    """HEAD's tree as {path: entry} (`ls-tree -r --full-tree HEAD`); or (None, why not)."""
    try:
        entries = repo.ls_tree(repo.peel_commit(repo.head()))
    except gitread.Unsupported as exc:
        return None, f"git: {exc}"
    except gitread.GitReadError as exc:
        return None, f"git: cannot list HEAD's tree ({exc})"
    return {os.fsdecode(e.raw_path): e for e in entries}, ""


def blob_prefix(
    repo: gitread.Repository, entry: gitread.TreeEntry, limit: int
) -> tuple[tuple[int, bytes] | None, str]:
    """(size, first `limit` bytes) of a tree entry's blob (b"" for a gitlink); or (None, why)."""
    if entry.kind != "blob":
        return (0, b""), ""
    try:
        return repo.blob_prefix(entry.oid, limit), ""
    except gitread.GitReadError as exc:
        return None, f"git: could not read HEAD's blobs ({exc})"
