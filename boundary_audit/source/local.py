"""Local repositories: read in place, never fetched into, never written, never run git in.

Rules (see docs/source.md):
- The path must be the top of a work tree, its `.git` directory, or a bare repository. A
  subdirectory of a work tree is refused with a hint naming the top; a plain directory is
  "not a git repository".
- Without a rev, HEAD's *committed* tree is audited, never the working files, so the result
  is reproducible from `path@sha`; uncommitted changes produce a note saying they were not
  scanned. With a rev, it must resolve in this repository (nothing is fetched).
- Missing objects (a partial clone, a damaged repository) are reported per file later; they
  are never fetched, not even from the repository's own promisor remote.

A scanned repository is hostile, and every git command run in it would obey its config
(filters, fsmonitor, hooks, pager, promisor `uploadpack`, includes...). So `shadow.discover`
finds it by reading files only, and every git command (resolving the rev, the note's `status`,
reading objects) runs in a `shadow.Shadow`: a private git directory with our config, its refs
copied and its own object files linked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boundary_audit.errors import SourceError
from boundary_audit.source import _git
from boundary_audit.source.mirror import resolve
from boundary_audit.source.shadow import Shadow, discover, is_promisor
from boundary_audit.source.spec import RepoSpec


@dataclass(frozen=True)
class LocalRepo:
    """A local repository resolved to a commit, and the shadow its objects are read through."""

    git_dir: Path
    sha: str
    notes: tuple[str, ...]
    shadow: Shadow
    partial: bool


def open_local(spec: RepoSpec, *, timeout: float) -> LocalRepo:
    """Find the repository at `spec.location` and resolve `spec.rev` (HEAD if None)."""
    path = Path(spec.location)
    layout = discover(path)
    shadow = Shadow(layout)
    try:
        sha = resolve(shadow.path, spec.rev or "HEAD", timeout)
        if sha is None:
            if spec.rev is None:
                raise SourceError(
                    f"{path} has no commits yet", hint="commit something, or give a rev"
                )
            raise SourceError(
                f"unknown revision {spec.rev!r} in {path}",
                hint="local repositories are never fetched into; fetch it yourself",
            )
        notes: tuple[str, ...] = ()
        if spec.rev is None and layout.work_tree is not None:
            changed = _changed_files(shadow.path, layout.work_tree, timeout)
            if changed:
                notes = (
                    f"{path} has {changed} uncommitted change(s); scanned HEAD ({sha[:12]}) "
                    "as committed, not the working files",
                )
        return LocalRepo(layout.git_dir, sha, notes, shadow, is_promisor(layout.common_dir))
    except BaseException:
        shadow.close()
        raise


def _changed_files(shadow: Path, work_tree: Path, timeout: float) -> int:
    """`git status` of the work tree against the repository's index, run in the shadow: the
    repository's filters, fsmonitor and hooks are not configured there, so none runs."""
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
        git_dir=shadow,
        timeout=timeout,
    )
    if res.returncode != 0:
        return 0  # the note is best-effort; the audit of HEAD does not depend on it
    return sum(1 for rec in res.stdout.split(b"\0") if rec)
