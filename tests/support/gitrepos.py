"""Builders of test repositories with deterministic shas (one `git fast-import` per commit).

    sha = make_repo(path, {"a.py": b"print(1)\\n", "link": Symlink("../../etc/passwd"),
                           "bin/run": Executable(b"#!/bin/sh\\n"), "vendor/x": Submodule(SHA),
                           b"caf\\xe9.txt": b"latin-1 name\\n"},
                    tags={"v1": None}, annotated={"v1.0": "release"})
    sha2 = add_commit(path, {"b.py": b"x"}, delete=["a.py"], message="second")

Paths may be `str` or raw `bytes` (non-UTF-8 names). Author, committer and dates are fixed,
so the same call builds the same sha on any machine; global git config is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from boundary_audit._subprocess import run

EPOCH = 1_700_000_000
AUTHOR = "Test Author <author@example.invalid>"


@dataclass(frozen=True)
class Symlink:
    """A symlink entry (mode 120000) whose blob is `target`."""

    target: str


@dataclass(frozen=True)
class Executable:
    """A regular file with mode 100755."""

    data: bytes


@dataclass(frozen=True)
class Submodule:
    """A gitlink entry (mode 160000) pointing at commit `sha` (which need not exist)."""

    sha: str


Content = bytes | str | Symlink | Executable | Submodule


def git_env() -> dict[str, str]:
    """Environment for building repositories: no system or global config."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    return env


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    """Run git in `repo` (a work tree or a bare repository); return stdout, raise on failure."""
    res = run(["git", "-C", str(repo), *args], input=input, env=git_env(), timeout=60)
    if res.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {res.stderr.decode(errors='replace')}")
    return res.stdout.decode("utf-8", "replace").strip()


def make_repo(
    path: Path,
    files: Mapping[str | bytes, Content],
    *,
    bare: bool = False,
    branch: str = "main",
    message: str = "initial",
    tags: Iterable[str] = (),
    annotated: Mapping[str, str] | None = None,
    config: Mapping[str, str] | None = None,
) -> str:
    """Create a repository at `path` with one commit of `files`; return the commit's sha."""
    path.mkdir(parents=True, exist_ok=True)
    run(
        [
            "git",
            "init",
            "-q",
            f"--initial-branch={branch}",
            *(["--bare"] if bare else []),
            str(path),
        ],
        env=git_env(),
        check=True,
    )
    for key, value in (config or {}).items():
        git(path, "config", key, value)
    return add_commit(
        path, files, branch=branch, message=message, tags=tags, annotated=annotated, when=EPOCH
    )


def add_commit(
    path: Path,
    files: Mapping[str | bytes, Content],
    *,
    branch: str = "main",
    message: str = "change",
    delete: Iterable[str | bytes] = (),
    tags: Iterable[str] = (),
    annotated: Mapping[str, str] | None = None,
    when: int | None = None,
) -> str:
    """Commit `files` (and deletions) on top of `branch` (created if new); return the sha."""
    parent = _branch_sha(path, branch)
    when = (
        when
        if when is not None
        else EPOCH + 60 * (1 + int(git(path, "rev-list", "--count", "--all") or 0))
    )
    out = bytearray()
    out += f"commit refs/heads/{branch}\nmark :1\n".encode()
    out += f"author {AUTHOR} {when} +0000\ncommitter {AUTHOR} {when} +0000\n".encode()
    out += _data(message.encode())
    if parent:
        out += f"from {parent}\n".encode()
    for p in delete:
        out += b"D " + _quote(p) + b"\n"
    for p, content in files.items():
        out += _modify(p, content)
    for tag in tags:
        out += f"reset refs/tags/{tag}\nfrom :1\n\n".encode()
    for tag, msg in (annotated or {}).items():
        out += f"tag {tag}\nfrom :1\ntagger {AUTHOR} {when} +0000\n".encode() + _data(msg.encode())
    git(path, "fast-import", "--quiet", "--date-format=raw", input=bytes(out))
    if git(path, "rev-parse", "--is-bare-repository") == "false":
        git(path, "read-tree", "-u", "--reset", "HEAD")
    return git(path, "rev-parse", f"refs/heads/{branch}")


def _branch_sha(path: Path, branch: str) -> str | None:
    res = run(
        ["git", "-C", str(path), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
        env=git_env(),
        timeout=30,
    )
    return res.stdout.decode().strip() or None


def _modify(path: str | bytes, content: Content) -> bytes:
    q = _quote(path)
    if isinstance(content, Submodule):
        return b"M 160000 " + content.sha.encode() + b" " + q + b"\n"
    if isinstance(content, Symlink):
        return b"M 120000 inline " + q + b"\n" + _data(content.target.encode())
    if isinstance(content, Executable):
        return b"M 100755 inline " + q + b"\n" + _data(content.data)
    data = content.encode() if isinstance(content, str) else content
    return b"M 100644 inline " + q + b"\n" + _data(data)


def _data(payload: bytes) -> bytes:
    return b"data " + str(len(payload)).encode() + b"\n" + payload + b"\n"


def _quote(path: str | bytes) -> bytes:
    """fast-import's C-style quoted path: printable ASCII as is, every other byte as \\ooo."""
    raw = path.encode() if isinstance(path, str) else path
    body = b"".join(
        bytes([c]) if 0x20 <= c < 0x7F and c not in (0x22, 0x5C) else b"\\%03o" % c for c in raw
    )
    return b'"' + body + b'"'
