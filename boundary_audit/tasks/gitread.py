"""A read-only git object reader for a repository a hostile reply has just edited.

The validator must know HEAD's history and tree in the fixture repository after the reply ran,
and the reply could rewrite everything in `.git`: its config (a partial-clone promisor whose
`uploadpack` is a shell command, an fsmonitor, hooks, filters, includes), its refs (symlinks to
`/etc/shadow`), its objects (FIFOs, links, zip bombs, delta loops). Running the host's `git`
there runs whatever that config says. This module runs no program at all: it parses the
repository's files itself, and guarantees:

- **Nothing is executed.** No program, hook, filter, pager, fetch or config-named command; a
  missing object is an error, never fetched.
- **Nothing outside the repository is read.** The git directory is given as a descriptor; every
  file is reached from it one path component at a time with O_NOFOLLOW (`wsfs`), so a symlink
  anywhere (`.git/objects`, a loose object, a ref, `packed-refs`, a pack) is an error, never
  followed, and a file is read only when `fstat` says it is a regular file (opened
  non-blocking: a FIFO never blocks the reader). `objects/info/alternates`, replace refs
  (`refs/replace/`), `info/grafts`, the commit-graph, config includes and linked-worktree
  `commondir` files are never read. Of `config`, only `core.repositoryformatversion` and
  `extensions.objectFormat` / `extensions.refStorage` are looked at, to refuse what this
  reader cannot read (sha256, reftable) instead of misreading it.
- **Bounded.** Each object at most `Limits.max_object_bytes` inflated, every object's
  compressed stream at most a little more than that, all inflated bytes of one `Repository`
  together at most `max_total_bytes`, at most `max_commits` commits walked, `max_tree_entries`
  tree entries listed, delta chains at most `max_delta_depth` deep, `max_packs` packs, and the
  small files (refs, `packed-refs`, `config`, `shallow`) at most `max_small_file_bytes`.
- **Verified.** An object is returned only when its content hashes to its id (SHA-1 of
  `type size\\0data`), so a rewritten object file cannot pass for the original; this also
  rules out cycles in the history.
- **Errors are reasons.** Every problem (missing, corrupt, oversized, unsupported, a link or
  a special file where a file should be) raises `GitReadError` with a one-line message that
  names only repository-relative paths and object ids; no other exception leaves the public
  methods.
- **Exact.** `rev_list(oid)` is the order `git rev-list --topo-order <oid>` prints (git's
  graph-order topological sort: a stack of commits whose children have all been shown, parents
  pushed in order, so the last parent's line comes first), honouring `shallow` as git does; the
  tests compare it with real git on linear histories, merges and random DAGs, loose and packed.
  `ls_tree(oid)` is `git ls-tree -r --full-tree <oid>` (canonical modes, tree order).

Supported formats: SHA-1 repositories with loose objects (zlib) and pack files (version 2 or 3)
with version-2 indexes, including OFS_DELTA and REF_DELTA entries; loose refs, `packed-refs`,
HEAD as a symref or detached.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import struct
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from boundary_audit.tasks import wsfs

_HEX40 = re.compile(rb"[0-9a-f]{40}")
_HEX64 = re.compile(rb"[0-9a-f]{64}")
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
_OFS_DELTA, _REF_DELTA = 6, 7
_SYMREF_DEPTH = 5
"""How many symref hops are followed (git's SYMREF_MAXDEPTH)."""
_TAG_DEPTH = 16
_HEADER_MAX = 32
"""A loose object header (`commit 123\\0`) is at most this long."""
_BAD_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")

MODE_TREE = 0o040000
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000


class GitReadError(Exception):
    """Why the repository could not be read; a one-line message (no "git: " prefix)."""


class Unsupported(GitReadError):
    """The repository uses a format this reader refuses to guess at (sha256, reftable...)."""


@dataclass(frozen=True)
class Limits:
    """What one `Repository` may read at most."""

    max_object_bytes: int = 64 << 20
    max_total_bytes: int = 512 << 20
    max_commits: int = 20_000
    max_tree_entries: int = 200_000
    max_delta_depth: int = 1_000
    max_packs: int = 256
    max_small_file_bytes: int = 16 << 20
    cache_bytes: int = 32 << 20
    """Inflated pack objects kept for delta bases (not a limit on what is read)."""


@dataclass(frozen=True)
class Commit:
    """A parsed commit: its tree, parents (in order) and raw message bytes."""

    oid: str
    tree: str
    parents: tuple[str, ...]
    message: bytes


@dataclass(frozen=True)
class TreeEntry:
    """One non-tree entry of a recursive listing (`git ls-tree -r`)."""

    raw_path: bytes
    mode: int
    """Canonical mode: 0o100644, 0o100755, 0o120000 or 0o160000."""
    oid: str

    @property
    def kind(self) -> str:
        """`blob` (files and symlinks) or `commit` (a gitlink), as ls-tree prints it."""
        return "commit" if self.mode == MODE_GITLINK else "blob"


P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    """Let only GitReadError out: what the OS or zlib raise on hostile input becomes one."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except GitReadError:
            raise
        except wsfs.NotRegular as exc:
            raise GitReadError(f"a {exc.kind} where a regular file should be") from None
        except OSError as exc:
            raise GitReadError(f"cannot read the repository: {_oserror(exc)}") from None
        except (zlib.error, ValueError, struct.error, IndexError, OverflowError) as exc:
            raise GitReadError(f"corrupt repository data ({type(exc).__name__})") from None

    return wrapper


def _oserror(exc: OSError) -> str:
    what = os.strerror(exc.errno) if exc.errno else str(exc)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        what = "a symlink or a non-directory on the way (not followed)"
    return what


def _canon_mode(mode: int) -> int:
    """git's canon_mode: what `ls-tree` prints for a tree entry's stored mode."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind == MODE_SYMLINK:
        return MODE_SYMLINK
    if kind == MODE_TREE:
        return MODE_TREE
    return MODE_GITLINK


def valid_refname(name: str) -> bool:
    """git's check_refname_format for a full ref name under `refs/` (never `..`, never a lock)."""
    if not name.startswith("refs/") or name.endswith(("/", ".")) or "@{" in name:
        return False
    if _BAD_REF_CHARS.search(name) or ".." in name or name == "@":
        return False
    return all(p and not p.startswith(".") and not p.endswith(".lock") for p in name.split("/"))


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.inflated = 0

    def spend(self, n: int) -> None:
        self.inflated += n
        if self.inflated > self.limits.max_total_bytes:
            raise GitReadError(
                f"reading needs more than {self.limits.max_total_bytes} inflated bytes"
            )


class _Stream:
    """Compressed bytes from a descriptor at an offset, read in chunks on demand, capped."""

    def __init__(self, fd: int, offset: int, end: int, cap: int, what: str) -> None:
        self.fd, self.pos, self.end, self.left, self.what = fd, offset, end, cap, what

    def chunk(self) -> bytes:
        if self.pos >= self.end:
            return b""
        if self.left <= 0:
            raise GitReadError(f"{self.what}: compressed data longer than its size allows")
        data = os.pread(self.fd, min(wsfs.CHUNK, self.end - self.pos, self.left), self.pos)
        self.pos += len(data)
        self.left -= len(data)
        return data


def _compressed_cap(size: int) -> int:
    # Deflate never needs much more than the data (stored blocks: 5 bytes per 64 KiB); a
    # stream of empty blocks that produces nothing would otherwise be read to its end.
    return size + size // 8 + 4096


class _Inflater:
    """zlib inflation with a hard cap on the output, fed from a `_Stream`."""

    def __init__(self, stream: _Stream, budget: _Budget) -> None:
        self.stream, self.budget, self.what = stream, budget, stream.what
        self.z = zlib.decompressobj()

    def read(self, n: int) -> bytes:
        """Up to `n` more inflated bytes (fewer only at the end of the stream)."""
        out = bytearray()
        while len(out) < n and not self.z.eof:
            data = self.z.unconsumed_tail or self.stream.chunk()
            if not data:
                raise GitReadError(f"{self.what} is truncated")
            piece = self.z.decompress(data, n - len(out))
            self.budget.spend(len(piece))
            out += piece
        return bytes(out)

    def read_exact(self, n: int) -> bytes:
        """Exactly `n` bytes and then the end of the stream, or a GitReadError."""
        data = self.read(n)
        if len(data) != n:
            raise GitReadError(f"{self.what} is shorter than its header says")
        if not self.z.eof and self.read(1):
            raise GitReadError(f"{self.what} is longer than its header says")
        if not self.z.eof:
            raise GitReadError(f"{self.what} is truncated")
        return data


def _varint_header(data: bytes) -> tuple[int, int, int]:
    """(type, size, length) of a pack entry header."""
    c = data[0]
    typ, size, shift, i = (c >> 4) & 7, c & 15, 4, 1
    while c & 0x80:
        if shift > 60:
            raise GitReadError("pack entry header is too long")
        c = data[i]
        i += 1
        size |= (c & 0x7F) << shift
        shift += 7
    return typ, size, i


def _delta_size(delta: bytes, pos: int) -> tuple[int, int]:
    size, shift = 0, 0
    while True:
        if shift > 60:
            raise GitReadError("delta header is too long")
        c = delta[pos]
        pos += 1
        size |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return size, pos


def apply_delta(base: bytes, delta: bytes, max_bytes: int) -> bytes:
    """git's patch_delta: `base` rebuilt by the copy/insert instructions of `delta`."""
    src_size, pos = _delta_size(delta, 0)
    dst_size, pos = _delta_size(delta, pos)
    if src_size != len(base):
        raise GitReadError("delta does not fit its base")
    if dst_size > max_bytes:
        raise GitReadError(f"object is larger than {max_bytes} bytes")
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = size = 0
            for bit, shift in ((0x01, 0), (0x02, 8), (0x04, 16), (0x08, 24)):
                if op & bit:
                    offset |= delta[pos] << shift
                    pos += 1
            for bit, shift in ((0x10, 0), (0x20, 8), (0x40, 16)):
                if op & bit:
                    size |= delta[pos] << shift
                    pos += 1
            size = size or 0x10000
            if offset + size > len(base) or len(out) + size > dst_size:
                raise GitReadError("delta copies outside its base")
            out += base[offset : offset + size]
        elif op:
            if pos + op > len(delta) or len(out) + op > dst_size:
                raise GitReadError("delta inserts past its end")
            out += delta[pos : pos + op]
            pos += op
        else:
            raise GitReadError("delta has a reserved instruction")
    if len(out) != dst_size:
        raise GitReadError("delta result has the wrong size")
    return bytes(out)


class _Pack:
    """One `pack-X.pack` with its version-2 `pack-X.idx`, read with pread, never mapped."""

    def __init__(self, name: str, pack_fd: int, pack_size: int, idx_fd: int, idx_size: int):
        self.name = name
        self.fd, self.size, self.idx_fd = pack_fd, pack_size, idx_fd
        head = os.pread(idx_fd, 8 + 1024, 0)
        if len(head) != 8 + 1024 or head[:4] != b"\xfftOc":
            raise GitReadError(f"{name}.idx is not a version-2 pack index")
        (version,) = struct.unpack(">I", head[4:8])
        if version != 2:
            raise GitReadError(f"{name}.idx: unsupported pack index version {version}")
        self.fanout = struct.unpack(">256I", head[8:])
        if any(a > b for a, b in zip(self.fanout, self.fanout[1:], strict=False)):
            raise GitReadError(f"{name}.idx: corrupt fan-out table")
        self.count = n = self.fanout[255]
        self.names_at = 8 + 1024
        self.offsets_at = self.names_at + 24 * n
        self.large_at = self.offsets_at + 4 * n
        extra = idx_size - (self.large_at + 40)
        if extra < 0 or extra % 8 or extra // 8 > n:
            raise GitReadError(f"{name}.idx has the wrong size for {n} objects")
        self.large_count = extra // 8
        header = os.pread(pack_fd, 12, 0)
        if len(header) != 12 or header[:4] != b"PACK":
            raise GitReadError(f"{name}.pack is not a pack file")
        version, count = struct.unpack(">II", header[4:])
        if version not in (2, 3) or count != n:
            raise GitReadError(f"{name}.pack does not match its index")

    def find(self, raw: bytes) -> int | None:
        """The offset of object `raw` (20 bytes) in the pack, or None."""
        lo = self.fanout[raw[0] - 1] if raw[0] else 0
        hi = self.fanout[raw[0]]
        names = os.pread(self.idx_fd, 20 * (hi - lo), self.names_at + 20 * lo)
        if len(names) != 20 * (hi - lo):
            raise GitReadError(f"{self.name}.idx is truncated")
        a, b = 0, hi - lo
        while a < b:
            mid = (a + b) // 2
            here = names[20 * mid : 20 * mid + 20]
            if here == raw:
                return self._offset(lo + mid)
            if here < raw:
                a = mid + 1
            else:
                b = mid
        return None

    def _offset(self, i: int) -> int:
        off: int = struct.unpack(">I", os.pread(self.idx_fd, 4, self.offsets_at + 4 * i))[0]
        if off & 0x80000000:
            j = off & 0x7FFFFFFF
            if j >= self.large_count:
                raise GitReadError(f"{self.name}.idx: bad large offset")
            off = struct.unpack(">Q", os.pread(self.idx_fd, 8, self.large_at + 8 * j))[0]
        if not 12 <= off < self.size - 20:
            raise GitReadError(f"{self.name}.idx points outside the pack")
        return off

    def entry(self, offset: int) -> tuple[int, int, int, int | bytes | None]:
        """(type, inflated size, offset of the zlib data, delta base: offset, oid or None)."""
        head = os.pread(self.fd, 32, offset)
        if not head:
            raise GitReadError(f"{self.name}.pack is truncated")
        typ, size, n = _varint_header(head)
        pos = offset + n
        base: int | bytes | None = None
        if typ == _OFS_DELTA:
            c = head[n]
            back, i = c & 0x7F, n + 1
            while c & 0x80:
                if i - n > 9:
                    raise GitReadError(f"{self.name}.pack: delta base offset is too long")
                c = head[i]
                i += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            if not 0 < back <= offset - 12:
                raise GitReadError(f"{self.name}.pack: delta base outside the pack")
            base, pos = offset - back, offset + i
        elif typ == _REF_DELTA:
            raw = os.pread(self.fd, 20, pos)
            if len(raw) != 20:
                raise GitReadError(f"{self.name}.pack is truncated")
            base, pos = raw, pos + 20
        elif typ not in _TYPES:
            raise GitReadError(f"{self.name}.pack: bad object type {typ} at offset {offset}")
        return typ, size, pos, base


class Repository:
    """A git directory opened by descriptor; see the module docstring for the guarantees."""

    def __init__(self, git_dir_fd: int, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._budget = _Budget(self.limits)
        self._fds: list[int] = []
        self._cache: OrderedDict[tuple[int, int], tuple[str, bytes]] = OrderedDict()
        self._cached = 0
        self._commits: dict[str, Commit] = {}
        self._fd = os.dup(git_dir_fd)
        self._fds.append(self._fd)
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close every descriptor this reader opened. Idempotent."""
        while self._fds:
            os.close(self._fds.pop())

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- setup -------------------------------------------------------------------------------

    @_guarded
    def _setup(self) -> None:
        self._check_format()
        try:
            objects = wsfs.open_dir(self._fd, "objects")
        except FileNotFoundError:
            raise GitReadError("objects directory is missing") from None
        self._fds.append(objects)
        self._objects = objects
        self._packs = self._open_packs()
        self._shallow = self._read_shallow()

    def _small(self, rel: str) -> bytes | None:
        """A small regular file under the git dir, or None if it does not exist."""
        try:
            st, data = wsfs.read_prefix(self._fd, rel, self.limits.max_small_file_bytes + 1)
        except FileNotFoundError:
            return None
        except wsfs.NotRegular as exc:
            if exc.kind == "dir" and rel.startswith("refs/"):
                return None  # git: a directory where a loose ref would be is no such ref
            raise GitReadError(f"{rel} is a {exc.kind}, not a regular file") from None
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return None
            raise GitReadError(f"cannot read {rel}: {_oserror(exc)}") from None
        if len(data) > self.limits.max_small_file_bytes or st.st_size != len(data):
            raise GitReadError(f"{rel} is larger than {self.limits.max_small_file_bytes} bytes")
        return data

    def _check_format(self) -> None:
        config = self._small("config")
        values = _config_values(config or b"")
        version = values.get("core.repositoryformatversion", "0")
        if version not in ("0", "1"):
            raise Unsupported(f"unsupported repository format version {version}")
        fmt = values.get("extensions.objectformat", "sha1").lower()
        if fmt != "sha1":
            raise Unsupported(f"unsupported object format {fmt}")
        refs = values.get("extensions.refstorage", "files").lower()
        if refs != "files":
            raise Unsupported(f"unsupported ref storage {refs}")

    def _open_packs(self) -> list[_Pack]:
        try:
            pack_dir = wsfs.open_dir(self._objects, "pack")
        except FileNotFoundError:
            return []
        self._fds.append(pack_dir)
        names = sorted(
            n[:-4]
            for n in os.listdir(pack_dir)
            if n.startswith("pack-") and n.endswith(".idx") and "/" not in n
        )
        if len(names) > self.limits.max_packs:
            raise GitReadError(f"more than {self.limits.max_packs} pack files")
        packs = []
        for name in names:
            try:
                pack_fd, pack_st = wsfs.open_file(pack_dir, name + ".pack")
            except FileNotFoundError:
                continue  # git ignores an index without its pack
            except wsfs.NotRegular as exc:
                raise GitReadError(
                    f"objects/pack/{name}.pack is a {exc.kind}, not a regular file"
                ) from None
            self._fds.append(pack_fd)
            try:
                idx_fd, idx_st = wsfs.open_file(pack_dir, name + ".idx")
            except wsfs.NotRegular as exc:
                raise GitReadError(
                    f"objects/pack/{name}.idx is a {exc.kind}, not a regular file"
                ) from None
            self._fds.append(idx_fd)
            packs.append(_Pack(name, pack_fd, pack_st.st_size, idx_fd, idx_st.st_size))
        return packs

    def _read_shallow(self) -> frozenset[str]:
        data = self._small("shallow")
        if data is None:
            return frozenset()
        lines = data.split()
        if not all(_HEX40.fullmatch(x) for x in lines):
            raise GitReadError("shallow: not a list of object ids")
        return frozenset(x.decode() for x in lines)

    # -- refs --------------------------------------------------------------------------------

    @_guarded
    def head(self) -> str:
        """The object id HEAD names: a symref (followed, at most 5 hops) or a detached id."""
        return self._resolve("HEAD", 0)

    def _resolve(self, name: str, depth: int) -> str:
        data = self._small(name)
        if data is None and name != "HEAD":
            data = self._packed_ref(name)
        if data is None:
            raise GitReadError(f"{name} does not exist")
        if data.startswith(b"ref:"):
            target = data[4:].strip().decode("utf-8", "replace")
            if depth >= _SYMREF_DEPTH:
                raise GitReadError(f"{name}: too many symbolic refs")
            if not valid_refname(target):
                raise GitReadError(f"{name} points to a bad ref name {target!r}")
            return self._resolve(target, depth + 1)
        if _HEX64.fullmatch(data[:64]):
            raise Unsupported("unsupported object format sha256")
        if not _HEX40.fullmatch(data[:40]) or (len(data) > 40 and not data[40:41].isspace()):
            raise GitReadError(f"{name} does not hold an object id")
        return data[:40].decode()

    def _packed_ref(self, name: str) -> bytes | None:
        data = self._small("packed-refs")
        if data is None:
            return None
        want = name.encode()
        for line in data.split(b"\n"):
            if not line or line.startswith((b"#", b"^")):
                continue
            oid, sep, ref = line.partition(b" ")
            if not sep or not _HEX40.fullmatch(oid):
                raise GitReadError("packed-refs: unexpected line")
            if ref == want:
                return oid
        return None

    # -- objects -----------------------------------------------------------------------------

    @_guarded
    def read(self, oid: str) -> tuple[str, bytes]:
        """(type, bytes) of object `oid`, verified against its id."""
        pack, offset = self._locate(oid)
        if pack is not None:
            kind, data = self._packed(pack, offset, oid)
        else:
            kind, size, data = self._loose(oid, prefix=None)
        self._verify(oid, kind, data)
        return kind, data

    @_guarded
    def blob_prefix(self, oid: str, limit: int) -> tuple[int, bytes]:
        """(size, first `limit` bytes) of blob `oid`.

        A blob up to `max_object_bytes` is read whole and verified; a larger one stored whole
        (loose, or undeltified in a pack) has only its first bytes inflated, so a huge file in
        HEAD costs what the comparison needs (it cannot be the expected content anyway).
        """
        pack, offset = self._locate(oid)
        if pack is None:
            kind, size, data = self._loose(oid, prefix=limit)
            if len(data) == size:
                self._verify(oid, kind, data)
        else:
            typ, size, pos, _ = pack.entry(offset)
            if typ == 3 and size > self.limits.max_object_bytes:
                kind, data = "blob", self._pack_inflater(pack, pos, size, oid).read(limit)
            else:
                kind, data = self.read(oid)
                size = len(data)
        if kind != "blob":
            raise GitReadError(f"object {oid} is a {kind}, not a blob")
        return size, data[:limit]

    def _verify(self, oid: str, kind: str, data: bytes) -> None:
        h = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)))  # noqa: S324 - git's id
        h.update(data)
        if h.hexdigest() != oid:
            raise GitReadError(f"object {oid} does not match its id (corrupt or rewritten)")

    def _locate(self, oid: str) -> tuple[_Pack | None, int]:
        """(pack, offset) holding `oid`, or (None, 0): then it can only be a loose object."""
        if not _HEX40.fullmatch(oid.encode()):
            raise GitReadError(f"bad object id {oid!r}")
        raw = bytes.fromhex(oid)
        for pack in self._packs:
            offset = pack.find(raw)
            if offset is not None:
                return pack, offset
        return None, 0

    def _loose(self, oid: str, *, prefix: int | None) -> tuple[str, int, bytes]:
        """(type, size, bytes) of loose object `oid`: all of it when it fits `max_object_bytes`,
        else its first `prefix` bytes (an error when `prefix` is None)."""
        rel = f"{oid[:2]}/{oid[2:]}"
        try:
            with wsfs.parent(self._objects, rel) as (dir_fd, name):
                fd, st = wsfs.open_file(dir_fd, name)
        except (FileNotFoundError, NotADirectoryError):
            raise GitReadError(f"object {oid} is missing") from None
        except wsfs.NotRegular as exc:
            raise GitReadError(f"objects/{rel} is a {exc.kind}, not a regular file") from None
        except OSError as exc:
            raise GitReadError(f"cannot read objects/{rel}: {_oserror(exc)}") from None
        try:
            stream = _Stream(fd, 0, st.st_size, _compressed_cap(_HEADER_MAX), f"object {oid}")
            inflater = _Inflater(stream, self._budget)
            head = b""
            while b"\0" not in head:
                more = inflater.read(1)
                if not more or len(head) >= _HEADER_MAX:
                    raise GitReadError(f"object {oid} has a bad header")
                head += more
            kind_raw, sep, size_text = head[:-1].partition(b" ")
            kind = kind_raw.decode("ascii", "replace")
            if not sep or kind not in _TYPES.values() or not size_text.isdigit():
                raise GitReadError(f"object {oid} has a bad header")
            size = int(size_text)
            whole = size <= self.limits.max_object_bytes
            if not whole and prefix is None:
                raise GitReadError(
                    f"object {oid} is larger than {self.limits.max_object_bytes} bytes"
                )
            stream.left = _compressed_cap(size)
            data = inflater.read_exact(size) if whole else inflater.read(prefix or 0)
            return kind, size, data
        finally:
            os.close(fd)

    def _pack_inflater(self, pack: _Pack, pos: int, size: int, oid: str) -> _Inflater:
        what = f"object {oid} in {pack.name}.pack"
        return _Inflater(_Stream(pack.fd, pos, pack.size - 20, _compressed_cap(size), what),
                         self._budget)  # fmt: skip

    def _packed(self, pack: _Pack, offset: int, oid: str) -> tuple[str, bytes]:
        """The object at `offset` in `pack`, its delta chain resolved (bounded, no recursion)."""
        limit = self.limits.max_object_bytes
        chain: list[tuple[tuple[int, int], bytes]] = []
        while True:
            key = (id(pack), offset)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                kind, data = cached
                break
            typ, size, pos, base = pack.entry(offset)
            if size > limit:
                raise GitReadError(f"object {oid} is larger than {limit} bytes")
            payload = self._pack_inflater(pack, pos, size, oid).read_exact(size)
            if typ in _TYPES:
                kind, data = _TYPES[typ], payload
                self._remember(key, kind, data)
                break
            chain.append((key, payload))
            if len(chain) > self.limits.max_delta_depth:
                raise GitReadError(f"object {oid}: delta chain deeper than {len(chain) - 1}")
            if isinstance(base, int):
                offset = base
                continue
            assert isinstance(base, bytes)
            base_pack, base_offset = self._locate(base.hex())
            if base_pack is None:
                kind, _, data = self._loose(base.hex(), prefix=None)
                break
            pack, offset = base_pack, base_offset
        for key, delta in reversed(chain):
            data = apply_delta(data, delta, limit)
            self._budget.spend(len(data))
            self._remember(key, kind, data)
        return kind, data

    def _remember(self, key: tuple[int, int], kind: str, data: bytes) -> None:
        self._cache[key] = (kind, data)
        self._cached += len(data)
        while self._cached > self.limits.cache_bytes and self._cache:
            _, (_, old) = self._cache.popitem(last=False)
            self._cached -= len(old)

    # -- commits and trees -------------------------------------------------------------------

    @_guarded
    def commit(self, oid: str) -> Commit:
        """The commit `oid` (parsed as git's parse_commit_buffer does; shallow cuts parents)."""
        found = self._commits.get(oid)
        if found is not None:
            return found
        kind, data = self.read(oid)
        if kind != "commit":
            raise GitReadError(f"object {oid} is a {kind}, not a commit")
        if len(data) < 46 or not data.startswith(b"tree ") or data[45:46] != b"\n":
            raise GitReadError(f"bogus commit object {oid}")
        tree = data[5:45]
        if not _HEX40.fullmatch(tree):
            raise GitReadError(f"bogus commit object {oid}")
        pos, parents = 46, []
        while data.startswith(b"parent ", pos):
            parent = data[pos + 7 : pos + 47]
            if not _HEX40.fullmatch(parent) or data[pos + 47 : pos + 48] != b"\n":
                raise GitReadError(f"bad parents in commit {oid}")
            parents.append(parent.decode())
            pos += 48
        _, sep, message = data.partition(b"\n\n")
        commit = Commit(
            oid,
            tree.decode(),
            () if oid in self._shallow else tuple(parents),
            message if sep else b"",
        )
        self._commits[oid] = commit
        return commit

    @_guarded
    def peel_commit(self, oid: str) -> str:
        """The commit `oid` names, through annotated tags (`oid^{commit}`)."""
        for _ in range(_TAG_DEPTH):
            kind, data = self.read(oid)
            if kind == "commit":
                return oid
            if kind != "tag":
                raise GitReadError(f"{oid} names a {kind}, not a commit")
            if not data.startswith(b"object ") or not _HEX40.fullmatch(data[7:47]):
                raise GitReadError(f"bogus tag object {oid}")
            oid = data[7:47].decode()
        raise GitReadError("too many nested tags")

    @_guarded
    def rev_list(self, start: str) -> list[str]:
        """Every commit reachable from commit `start`, in `git rev-list --topo-order` order."""
        parents: dict[str, tuple[str, ...]] = {}
        todo = [start]
        while todo:
            oid = todo.pop()
            if oid in parents:
                continue
            if len(parents) >= self.limits.max_commits:
                raise GitReadError(f"history has more than {self.limits.max_commits} commits")
            parents[oid] = self.commit(oid).parents
            todo.extend(parents[oid])
        # git's sort_in_topological_order in graph order: indegree 1 + children in the set;
        # the tips (only `start`) go on a stack; a parent is pushed when its last child is out.
        indegree = dict.fromkeys(parents, 1)
        for ps in parents.values():
            for p in ps:
                indegree[p] += 1
        stack = [start] if indegree[start] == 1 else []
        out: list[str] = []
        while stack:
            oid = stack.pop()
            for p in parents[oid]:
                if not indegree[p]:
                    continue
                indegree[p] -= 1
                if indegree[p] == 1:
                    stack.append(p)
            indegree[oid] = 0
            out.append(oid)
        if len(out) != len(parents):
            raise GitReadError("history is not a DAG")
        return out

    @_guarded
    def ls_tree(self, oid: str) -> list[TreeEntry]:
        """Every blob, symlink and gitlink under tree (or commit) `oid`, as `ls-tree -r`."""
        kind, _ = self.read(oid)
        if kind == "commit":
            oid = self.commit(oid).tree
        out: list[TreeEntry] = []
        stack: list[Iterator[tuple[bytes, int, str]]] = [iter(self._tree(oid))]
        prefixes: list[bytes] = [b""]
        count = 0
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                prefixes.pop()
                continue
            name, mode, child = item
            count += 1
            if count > self.limits.max_tree_entries:
                raise GitReadError(f"tree has more than {self.limits.max_tree_entries} entries")
            path = prefixes[-1] + name
            if mode == MODE_TREE:
                if len(stack) > 512:
                    raise GitReadError("tree is nested too deeply")
                stack.append(iter(self._tree(child)))
                prefixes.append(path + b"/")
            else:
                out.append(TreeEntry(path, mode, child))
        return out

    def _tree(self, oid: str) -> list[tuple[bytes, int, str]]:
        kind, data = self.read(oid)
        if kind != "tree":
            raise GitReadError(f"object {oid} is a {kind}, not a tree")
        entries, pos = [], 0
        while pos < len(data):
            space = data.find(b" ", pos, pos + 8)
            nul = data.find(b"\0", space + 1)
            if space < 0 or nul < 0 or nul + 21 > len(data):
                raise GitReadError(f"malformed tree {oid}")
            mode_text, name = data[pos:space], data[space + 1 : nul]
            if not mode_text or any(c not in b"01234567" for c in mode_text):
                raise GitReadError(f"malformed mode in tree {oid}")
            if not name or name in (b".", b"..") or b"/" in name:
                raise GitReadError(f"malformed entry name in tree {oid}")
            entries.append((name, _canon_mode(int(mode_text, 8)), data[nul + 1 : nul + 21].hex()))
            pos = nul + 21
        return entries


def _config_values(data: bytes) -> dict[str, str]:
    """`section.key` -> last value, for plain sections only (no subsections, no includes).

    Enough to read `core.repositoryformatversion` and `extensions.*`; everything else a config
    says (commands, includes, URLs) is never looked at.
    """
    values: dict[str, str] = {}
    section = ""
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line.startswith("["):
            end = line.find("]")
            if end < 0:
                continue
            header = line[1:end].strip()
            section = header.lower() if '"' not in header and " " not in header else ""
            line = line[end + 1 :].strip()
        if not line or line[0] in "#;" or not section:
            continue
        key, eq, value = line.partition("=")
        value = re.split(r"\s[#;]", value, maxsplit=1)[0].strip().strip('"')
        values[f"{section}.{key.strip().lower()}"] = value if eq else "true"
    return values
