"""The checkout stage's public face: `open_checkout(spec) -> Checkout`, read by the scanner.

A `Checkout` names a commit in a git directory (a cached bare mirror, or a local repository
read in place through its `shadow`, so that no git command runs with the scanned repository's
config) and reads that commit's tree from the object store. Nothing is checked out on
disk unless someone calls `materialize`. Files that cannot be scanned are yielded as
`SourceFile(data=None, skipped=REASON)`; the reasons are the `SKIP_*` constants and
`too large (N bytes)` / `LFS pointer (N bytes not fetched)`. gitpython and git failures leave
this package only as `SourceError` (exit code 3).
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from boundary_audit.errors import SourceError
from boundary_audit.source import _git, _gitpython
from boundary_audit.source.local import open_local
from boundary_audit.source.mirror import open_mirror
from boundary_audit.source.objects import (
    MODE_GITLINK,
    MODE_SYMLINK,
    REGULAR,
    BlobStream,
    TreeEntry,
    blob_sizes,
    list_tree,
    missing_blobs,
)
from boundary_audit.source.shadow import Shadow, is_promisor
from boundary_audit.source.spec import RepoSpec, parse_spec, redact

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
BINARY_PROBE = 8192
"""A file with a NUL byte in its first BINARY_PROBE bytes is binary (git's own heuristic)."""
SKIP_SYMLINK = "symlink"
SKIP_SUBMODULE = "submodule"
SKIP_MISSING = "missing blob"
SKIP_BINARY = "binary"
SKIP_NO_SUCH_PATH = "no such path"
_LFS = re.compile(
    rb"\Aversion https://(?:git-lfs|hawser)\.github\.com/spec/v1\n"
    rb"(?:[a-z0-9.-]+ [^\n]*\n)*?oid sha256:[0-9a-f]{64}\n(?:[a-z0-9.-]+ [^\n]*\n)*?size (\d+)\n"
)


def too_large(size: int) -> str:
    """Skip reason for a blob over the size limit."""
    return f"too large ({size} bytes)"


@dataclass(frozen=True)
class SourceFile:
    """One entry of the audited tree: its bytes, or why they are not given."""

    path: str
    """Display path, '/'-separated; bytes that are not UTF-8 are written `\\xNN`."""
    data: bytes | None
    """The file's bytes; None when skipped."""
    skipped: str | None
    """Why `data` is None (a SKIP_* reason), else None."""
    mode: int = 0o100644
    """git mode: 0o100644, 0o100755, 0o120000 (symlink), 0o160000 (submodule); 0 if absent."""
    raw_path: bytes = b""
    """The path exactly as stored in git (use it to read the file again)."""


@dataclass(frozen=True)
class Checkout:
    """A repository resolved to one commit, read from its object store."""

    spec: RepoSpec
    url: str
    """What was cloned or read: the remote URL (password redacted), or file:// for local."""
    sha: str
    """Full sha of the audited commit (40 hex digits; 64 in a sha256 repository)."""
    git_dir: Path
    """The cached bare mirror, or the local repository's git directory."""
    notes: tuple[str, ...] = ()
    """Things a user should know (e.g. uncommitted changes that were not scanned)."""
    partial: bool = field(default=False, repr=False)
    """The repository is a partial clone: absent blobs are expected and never fetched."""
    timeout: float = field(default=120.0, repr=False)
    shadow: Shadow | None = field(default=None, repr=False, compare=False)
    """For a local repository: the private git directory git runs in (see `shadow`); it
    lives as long as this Checkout."""
    _listing: list[list[TreeEntry]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )
    """The commit's tree, listed once (a commit's tree never changes); empty until then."""
    _absent: list[frozenset[str]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )
    """A partial clone's blobs of the commit that are absent, listed once: nothing here ever
    fetches one (the scan, the config discovery and the sink texts each read files)."""
    _sizes: dict[str, int | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Blob sizes already asked of git, by oid (an object's size never changes)."""

    @property
    def reads(self) -> Path:
        """The git directory every git command of this checkout runs in."""
        return self.shadow.path if self.shadow is not None else self.git_dir

    def entries(self) -> list[TreeEntry]:
        """Every blob, symlink and gitlink of the commit's tree, in tree order (one `ls-tree`
        per Checkout: the config discovery, the scan and the sink texts all read it)."""
        if not self._listing:
            self._listing.append(
                list_tree(self.reads, self.sha, timeout=self.timeout, where=self.git_dir)
            )
        return list(self._listing[0])

    def files(
        self,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        paths: Iterable[str] | None = None,
        want: Callable[[str], bool] | None = None,
    ) -> Iterator[SourceFile]:
        """Every file of the commit in tree order (or those under `paths`), read in one stream.

        `paths` holds display paths of files or directories; one that matches nothing is
        yielded as skipped "no such path" after the others. With `want`, a regular file
        whose display path it rejects is left out, neither read nor yielded (symlinks and
        submodules, never read, are yielded whatever their name).
        """
        entries = self.entries()
        unmatched: list[str] = []
        if paths is not None:
            entries, unmatched = _select(entries, paths)
        if want is not None:
            entries = [e for e in entries if e.mode not in REGULAR or want(e.path)]
        absent = self._missing()
        readable = [e for e in entries if e.mode in REGULAR and e.oid not in absent]
        sizes = self._blob_sizes([e.oid for e in readable])
        plan = [(e, _pre_skip(e, absent, sizes, max_bytes)) for e in entries]
        with BlobStream(self.reads, timeout=self.timeout, where=self.git_dir) as stream:
            blobs = stream.contents([e.oid for e, why in plan if why is None])
            for entry, why in plan:
                data = None if why else next(blobs)[1]
                if why is None and data is None:
                    why = SKIP_MISSING
                elif data is not None:
                    why = _content_skip(data)
                yield SourceFile(entry.path, None if why else data, why, entry.mode, entry.raw_path)
        for path in unmatched:
            yield SourceFile(
                path, None, SKIP_NO_SUCH_PATH, 0, path.encode("utf-8", "surrogateescape")
            )

    def read(self, path: str | bytes) -> bytes:
        """The bytes of one regular file at the commit (any size, binary or not).

        `path` is a display path or the raw bytes; SourceError if it is absent, not a regular
        file, or its blob is missing.
        """
        entry = self._entry(path)
        shown = entry.path
        if entry.mode == MODE_SYMLINK:
            raise SourceError(f"{shown} is a symlink at {self.sha[:12]}; it is not followed")
        if entry.mode not in REGULAR:
            kind = "submodule" if entry.mode == MODE_GITLINK else "directory"
            raise SourceError(f"{shown} is a {kind} at {self.sha[:12]}, not a file")
        with BlobStream(self.reads, timeout=self.timeout, where=self.git_dir) as stream:
            absent = entry.oid in self._missing()
            data = None if absent else next(stream.contents([entry.oid]))[1]
        if data is None:
            raise SourceError(f"the blob of {shown} is missing from {self.git_dir}")
        return data

    def _missing(self) -> frozenset[str]:
        """The blobs of the commit absent from a partial clone (one `rev-list` per Checkout)."""
        if not self.partial:
            return frozenset()
        if not self._absent:
            self._absent.append(
                missing_blobs(self.reads, self.sha, timeout=self.timeout, where=self.git_dir)
            )
        return self._absent[0]

    def _blob_sizes(self, oids: list[str]) -> dict[str, int | None]:
        """The size of each of `oids`, asking git only for those not asked before."""
        new = [o for o in oids if o not in self._sizes]
        if new:
            self._sizes.update(
                blob_sizes(self.reads, new, timeout=self.timeout, where=self.git_dir)
            )
        return {o: self._sizes.get(o) for o in oids}

    def _entry(self, path: str | bytes) -> TreeEntry:
        if isinstance(path, str) and "\\x" in path:
            matches = [e for e in self.entries() if e.path == path]
        else:
            raw = path if isinstance(path, bytes) else path.encode("utf-8", "surrogateescape")
            raw = raw.strip(b"/")
            found = (
                list_tree(self.reads, self.sha, timeout=self.timeout, path=raw, where=self.git_dir)
                if raw
                else []
            )
            matches = [e for e in found if e.raw_path == raw]
        if not matches:
            shown = path if isinstance(path, str) else path.decode("utf-8", "backslashreplace")
            raise SourceError(f"no such path at {self.sha[:12]}: {shown!r}")
        return matches[0]


def open_checkout(
    spec: str | RepoSpec,
    *,
    offline: bool = False,
    refresh: bool = False,
    cache_dir: Path | None = None,
    timeout: float = 120.0,
    progress: Callable[[str], None] | None = None,
) -> Checkout:
    """Resolve `spec` to a commit, cloning or fetching a cached mirror as the policy allows.

    See `mirror` for what `offline` and `refresh` do, `local` for local paths, `cache` for
    the cache directory; `timeout` bounds each network operation and the wait for the lock.
    """
    rs = spec if isinstance(spec, RepoSpec) else parse_spec(spec)
    report = progress or (lambda _msg: None)
    with _git_errors():
        if rs.kind == "local":
            local = open_local(rs, timeout=timeout)
            url = Path(rs.location).as_uri()
            return Checkout(
                rs, url, local.sha, local.git_dir, local.notes, local.partial, timeout, local.shadow
            )
        git_dir, sha = open_mirror(
            rs,
            offline=offline,
            refresh=refresh,
            cache_dir=cache_dir,
            timeout=timeout,
            progress=report,
        )
        return Checkout(rs, redact(rs.location), sha, git_dir, (), is_promisor(git_dir), timeout)


def materialize(checkout: Checkout, dest: Path) -> Path:
    """Write the commit's files into `dest` (new or empty): a plain directory, no `.git`.

    git's own checkout code writes it (symlinks as symlinks, executable bits, no writes
    through symlinks, `.git` paths refused); LFS files stay pointers; no filter runs: git runs
    in the mirror or the shadow, whose config defines none, with global config off.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SourceError(
            f"cannot materialize into {dest}: it exists and is not an empty directory"
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="boundary-audit-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        for args in (
            ["read-tree", checkout.sha],
            ["--work-tree", str(dest.resolve()), "checkout-index", "-a", "-f"],
        ):
            res = _git.run_git(
                args, git_dir=checkout.reads, timeout=checkout.timeout, extra_env=env
            )
            if res.returncode != 0 or res.timed_out:
                raise _git.failed(
                    res, f"cannot materialize {checkout.sha[:12]} into {dest}", checkout.timeout
                )
    return dest


def _pre_skip(
    entry: TreeEntry, absent: frozenset[str], sizes: dict[str, int | None], limit: int
) -> str | None:
    if entry.mode == MODE_SYMLINK:
        return SKIP_SYMLINK
    if entry.mode == MODE_GITLINK:
        return SKIP_SUBMODULE
    size = sizes.get(entry.oid)
    if entry.oid in absent or size is None:
        return SKIP_MISSING
    return too_large(size) if size > limit else None


def _content_skip(data: bytes) -> str | None:
    if len(data) < 1024:
        lfs = _LFS.match(data)
        if lfs:
            return f"LFS pointer ({int(lfs.group(1))} bytes not fetched)"
    return SKIP_BINARY if b"\0" in data[:BINARY_PROBE] else None


def _select(entries: list[TreeEntry], paths: Iterable[str]) -> tuple[list[TreeEntry], list[str]]:
    wanted = list(dict.fromkeys(p.strip("/") for p in paths))
    targets, hit = set(wanted), set()
    chosen = []
    for entry in entries:
        parts = entry.path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        found = [p for p in prefixes if p in targets]
        if found:
            chosen.append(entry)
            hit.update(found)
    return chosen, [p for p in wanted if p not in hit]


@contextlib.contextmanager
def _git_errors() -> Iterator[None]:
    """Let only SourceError out of this package: gitpython's and OS errors are wrapped."""
    try:
        yield
    except _gitpython.errors() as exc:
        raise SourceError(
            f"git: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from exc
    except OSError as exc:
        raise SourceError(f"{exc.filename or 'source'}: {exc.strerror or exc}") from exc
