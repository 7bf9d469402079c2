"""Local repositories: read in place, never fetched into, never written.

Rules (see docs/source.md):
- The path must be the top of a work tree, its `.git` directory, or a bare repository. A
  subdirectory of a work tree is refused with a hint naming the top; a plain directory is
  "not a git repository".
- Without a rev, HEAD's *committed* tree is audited, never the working files, so the result
  is reproducible from `path@sha`; uncommitted changes produce a note saying they were not
  scanned. With a rev, it must resolve in this repository (nothing is fetched).
- Missing objects (a partial clone, a damaged repository) are reported per file later; they
  are never fetched, not even from the repository's own promisor remote.

gitpython finds and validates the repository and reads its config; commands that touch
objects or the work tree go through `run_git` with the no-network environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boundary_audit.errors import SourceError
from boundary_audit.source import _git
from boundary_audit.source._gitpython import git
from boundary_audit.source.mirror import resolve
from boundary_audit.source.spec import RepoSpec


@dataclass(frozen=True)
class LocalRepo:
    """A local repository resolved to a commit."""

    git_dir: Path
    sha: str
    notes: tuple[str, ...]


def open_local(spec: RepoSpec, *, timeout: float) -> LocalRepo:
    """Find the repository at `spec.location` and resolve `spec.rev` (HEAD if None)."""
    path = Path(spec.location)
    repo = _repo(path)
    git_dir = Path(repo.git_dir)
    sha = resolve(git_dir, spec.rev or "HEAD", timeout)
    if sha is None:
        if spec.rev is None:
            raise SourceError(f"{path} has no commits yet", hint="commit something, or give a rev")
        raise SourceError(
            f"unknown revision {spec.rev!r} in {path}",
            hint="local repositories are never fetched into; fetch it yourself",
        )
    notes: tuple[str, ...] = ()
    if spec.rev is None and repo.working_tree_dir is not None:
        changed = _changed_files(git_dir, Path(repo.working_tree_dir), timeout)
        if changed:
            notes = (
                f"{path} has {changed} uncommitted change(s); scanned HEAD ({sha[:12]}) "
                "as committed, not the working files",
            )
    return LocalRepo(git_dir, sha, notes)


def is_promisor(git_dir: Path) -> bool:
    """True for a partial clone (objects may be missing on purpose and would be lazily fetched)."""
    try:
        reader = git.Repo(git_dir).config_reader("repository")
    except (git.GitError, OSError):
        return False
    if reader.has_option("extensions", "partialclone"):
        return True
    for section in reader.sections():
        if section.startswith("remote ") and reader.has_option(section, "promisor"):
            if str(reader.get_value(section, "promisor")).lower() in ("true", "1", "yes", "on"):
                return True
    return any((git_dir / "objects" / "pack").glob("*.promisor"))


def _repo(path: Path) -> git.Repo:
    try:
        return git.Repo(path)
    except git.NoSuchPathError as exc:
        raise SourceError(f"no such path: {str(path)!r}") from exc
    except git.InvalidGitRepositoryError as exc:
        raise SourceError(f"not a git repository: {path}", hint=_hint(path)) from exc
    except (git.GitError, OSError) as exc:
        raise SourceError(f"cannot open the repository at {path}: {exc}") from exc


def _hint(path: Path) -> str:
    try:
        top = git.Repo(path, search_parent_directories=True).working_tree_dir
    except (git.GitError, OSError):
        top = None
    if top:
        return f"{path} is inside the work tree {top}; give that directory (and @REV if needed)"
    return "give the top of a work tree, a .git directory, a bare repository or a URL"


def _changed_files(git_dir: Path, work_tree: Path, timeout: float) -> int:
    res = _git.run_git(
        [
            "--work-tree",
            str(work_tree),
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--ignore-submodules=all",
            "--no-renames",
        ],
        git_dir=git_dir,
        timeout=timeout,
    )
    if res.returncode != 0:
        return 0  # the note is best-effort; the audit of HEAD does not depend on it
    return sum(1 for rec in res.stdout.split(b"\0") if rec)
