"""Reading a commit's tree straight from the object store: no work tree, no symlink following.

A checkout's files are enumerated with a fixed number of git processes whatever the number of
files: `ls-tree -r -z` for the entries (mode, oid, raw path bytes), `rev-list --missing=print`
for the blobs a partial clone lacks (only for partial clones), `cat-file --batch-check` for all
sizes at once, and one long-lived `cat-file --batch` streaming every blob that is read. The
batch process runs in its own process group, is killed when the iteration ends early, and is
registered with the supervisor (unguarded, as every local git call: see `_git`).
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import supervisor
from boundary_audit._subprocess import kill_group, popen
from boundary_audit.errors import SourceError
from boundary_audit.source import _git

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000
REGULAR = frozenset({MODE_FILE, MODE_EXEC, 0o100664})


@dataclass(frozen=True)
class TreeEntry:
    """One non-tree entry of a commit's tree."""

    mode: int
    oid: str
    raw_path: bytes

    @property
    def path(self) -> str:
        """Display path: UTF-8, with every byte that is not valid UTF-8 written as `\\xNN`."""
        return display_path(self.raw_path)


def display_path(raw: bytes) -> str:
    """`raw` decoded as UTF-8 with invalid bytes escaped as `\\xNN` (deterministic)."""
    return raw.decode("utf-8", "backslashreplace")


def list_tree(
    git_dir: Path,
    sha: str,
    *,
    timeout: float,
    path: bytes | None = None,
    where: Path | None = None,
) -> list[TreeEntry]:
    """Every blob, symlink and gitlink of `sha`'s tree (or the entry at `path`), in tree order.

    `git_dir` is where git runs; `where` (default `git_dir`) is the repository errors name.
    """
    args = ["ls-tree", "-z", "--full-tree"]
    args += ["--", sha] if path is None else [sha, "--", path.decode("utf-8", "surrogateescape")]
    if path is None:
        args.insert(1, "-r")
    res = _git.run_git(args, git_dir=git_dir, timeout=timeout)
    if res.returncode != 0 or res.timed_out:
        raise _git.failed(res, f"cannot list the tree of {sha[:12]} in {where or git_dir}", timeout)
    entries = []
    for record in res.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, _kind, oid = meta.split(b" ")
        entries.append(TreeEntry(int(mode, 8), oid.decode("ascii"), raw_path))
    return entries


def missing_blobs(
    git_dir: Path, sha: str, *, timeout: float, where: Path | None = None
) -> frozenset[str]:
    """Objects of `sha`'s tree absent from a partial clone (listed without fetching them)."""
    res = _git.run_git(
        ["rev-list", "--objects", "--no-walk", "--missing=print", sha],
        git_dir=git_dir,
        timeout=timeout,
    )
    if res.returncode != 0 or res.timed_out:
        raise _git.failed(
            res, f"cannot list the objects of {sha[:12]} in {where or git_dir}", timeout
        )
    lines = res.stdout.decode("ascii", "replace").splitlines()
    return frozenset(line[1:].strip() for line in lines if line.startswith("?"))


def blob_sizes(
    git_dir: Path, oids: Iterable[str], *, timeout: float, where: Path | None = None
) -> dict[str, int | None]:
    """Size of each blob; None when the object is absent from the store."""
    unique = list(dict.fromkeys(oids))
    if not unique:
        return {}
    res = _git.run_git(
        ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        git_dir=git_dir,
        timeout=timeout,
        input=("\n".join(unique) + "\n").encode("ascii"),
    )
    if res.returncode != 0 or res.timed_out:
        raise _git.failed(res, f"cannot read object sizes in {where or git_dir}", timeout)
    sizes: dict[str, int | None] = {}
    for line in res.stdout.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[1] == "blob":
            sizes[parts[0]] = int(parts[2])
        elif parts:
            sizes[parts[0]] = None
    return sizes


class BlobStream:
    """One `git cat-file --batch` process that streams the contents of many blobs in order."""

    def __init__(self, git_dir: Path, *, timeout: float, where: Path | None = None) -> None:
        self._git_dir = git_dir
        self._where = where or git_dir
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._token = -1
        self._stderr = tempfile.TemporaryFile()

    def contents(self, oids: list[str]) -> Iterator[tuple[str, bytes | None]]:
        """(oid, bytes) for each oid in order; bytes is None for an absent object."""
        self._stop()
        if not oids:
            return
        proc = self._start()
        feeder = threading.Thread(target=_feed, args=(proc, oids), daemon=True)
        feeder.start()
        assert proc.stdout is not None
        for oid in oids:
            header = proc.stdout.readline()
            if not header:
                raise self._died(oid)
            fields = header.split()
            if len(fields) == 2 and fields[1] == b"missing":
                yield oid, None
                continue
            size = int(fields[2])
            data = proc.stdout.read(size)
            if len(data) != size or proc.stdout.read(1) != b"\n":
                raise self._died(oid)
            yield oid, data

    def close(self) -> None:
        """Kill the batch process (and its group) and release its stderr file."""
        self._stop()
        self._stderr.close()

    def _stop(self) -> None:
        if self._proc is not None:
            kill_group(self._proc.pid)
            self._proc.wait()
            supervisor.ledger().release(self._token)
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
            self._proc = None

    def __enter__(self) -> BlobStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            self._stderr.seek(0)
            self._stderr.truncate()
            argv = _git.git_argv(
                ["cat-file", "--batch"], git_dir=self._git_dir, timeout=self._timeout
            )
            stderr = self._stderr
            try:
                # NOTE: ends at the EOF of its stdin if we die (see `_git`): written down,
                # unguarded.
                self._proc, self._token = supervisor.spawned(
                    lambda child_env: popen(
                        argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=stderr,
                        env=child_env,
                        start_new_session=True,
                        bufsize=1 << 16,
                    ),
                    _git.git_env(network=False, timeout=self._timeout),
                    guarded=False,
                )
            except OSError as exc:
                raise SourceError(f"cannot run git cat-file: {exc.strerror}") from exc
        return self._proc

    def _died(self, oid: str) -> SourceError:
        self._stderr.seek(0)
        why = _git.reason(self._stderr.read()) or "unexpected end of output"
        return SourceError(f"cannot read blob {oid} from {self._where}: {why}")


def _feed(proc: subprocess.Popen[bytes], oids: list[str]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(("\n".join(oids) + "\n").encode("ascii"))
        proc.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the reader stopped early and killed the process
