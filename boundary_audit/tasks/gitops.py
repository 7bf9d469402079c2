"""Host-side git for fixtures and validators: build a repository, read HEAD's history and tree.

Both run the host's `git` through `_subprocess.run` with a fixed identity and fixed dates (so
commit ids are reproducible) and with global/system configuration switched off. A reply may
have rewritten the repository's own config, so inspection also pins every setting that could
make a read-only command run a program (fsmonitor, signature display, hooks) and reads only
plumbing output (`rev-list`, `ls-tree`, `cat-file --batch`), never a pager or a diff driver.
"""

from __future__ import annotations

import os
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.errors import SandboxError
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


def head_messages(repo: Path) -> tuple[tuple[bytes, ...] | None, str]:
    """HEAD's commit messages, newest first, exact bytes; or (None, why not)."""
    revs = _git(repo, "rev-list", "--topo-order", "HEAD", check=False)
    if revs.returncode != 0:
        return None, f"git: no history at HEAD ({revs.stderr_line() or 'rev-list failed'})"
    shas = revs.stdout.split()
    objects = _batch(repo, shas)
    if objects is None:
        return None, "git: could not read the commits"
    return tuple(_message(body) for body in objects), ""


def head_tree(repo: Path) -> tuple[dict[str, tuple[str, bytes]] | None, str]:
    """HEAD's tree as {path: (mode, blob bytes)}; or (None, why not)."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", "HEAD", check=False)
    if listing.returncode != 0:
        return None, f"git: cannot list HEAD's tree ({listing.stderr_line() or 'ls-tree failed'})"
    entries = []
    for record in listing.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        raw_mode, raw_kind, raw_sha = meta.split(b" ")
        entries.append((os.fsdecode(raw_path), raw_mode.decode(), raw_kind.decode(), raw_sha))
    blobs = _batch(repo, [sha for _, _, kind, sha in entries if kind == "blob"])
    if blobs is None:
        return None, "git: could not read HEAD's blobs"
    it = iter(blobs)
    tree: dict[str, tuple[str, bytes]] = {}
    for path, mode, kind, _sha in entries:
        tree[path] = (mode, next(it) if kind == "blob" else b"")
    return tree, ""


def _batch(repo: Path, shas: list[bytes]) -> list[bytes] | None:
    if not shas:
        return []
    res = _git(repo, "cat-file", "--batch", stdin=b"".join(s + b"\n" for s in shas), check=False)
    if res.returncode != 0:
        return None
    out, pos = [], 0
    for _ in shas:
        end = res.stdout.index(b"\n", pos)
        header = res.stdout[pos:end].split(b" ")
        if len(header) != 3:
            return None
        size = int(header[2])
        out.append(res.stdout[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return out


def _message(commit: bytes) -> bytes:
    _, sep, message = commit.partition(b"\n\n")
    return message if sep else b""
