"""Local repositories are read through a private git directory whose config is ours.

Whatever git command runs *in* a repository reads that repository's `.git/config`, and a
scanned repository is hostile: its config can name a clean/smudge/process filter for any
driver (`.gitattributes` then picks it), a `core.fsmonitor` command, hooks (`core.hooksPath`),
a pager, textconv and external diff drivers, `core.sshCommand`, `core.gitProxy`, a partial-clone
promisor whose `uploadpack` is a shell command, credential helpers, and `include.path` /
`includeIf` files that say the same from anywhere. So no git command of this package ever runs
in a scanned local repository. `Shadow(layout)` builds, in a fresh temp dir:

- `config`: written by us (repository format and object format copied, a short allow-list of
  plain `core.*` stat/line-ending booleans copied when their values are plain words), nothing
  else: no remote, no promisor, no filter, no hook, no include;
- `HEAD`, loose refs and `packed-refs`: copied after checking every name (git's refname rules)
  and value (an object id or `ref: refs/...`); `refs/replace/` is left out, so are symlinked refs;
- `objects/XX` and `objects/pack/pack-*.{pack,idx}`: symlinks to the repository's own loose
  object directories and pack files, each checked with lstat to be a real directory or a
  regular file (a link there is not followed); `objects/info/alternates`, the commit-graph and
  multi-pack-index are not linked, so only the repository's own objects are ever read;
- `index` (and a split index's `sharedindex.*`): symlinked, for the uncommitted-changes note;
- `shallow` and the `*_HEAD` pseudo-refs: copied after the same checks.

Every git command then runs with `--git-dir=<shadow>` and global/system config off (see
`_git`). The same shadow is the source of `file://` clones (`mirror`), so even upload-pack never
runs in the scanned repository. A shadow holds only links and small copies; it is removed by
`close()`, when its `Shadow` is garbage-collected, or at exit, and one left by a killed process
(its pid namespace and pid are in the name) is removed by the next `Shadow` built there.

`discover(path)` finds the repository git's way (a work tree's `.git` directory or `gitdir:`
file, a `.git` directory, a bare repository; `commondir` of linked worktrees) reading only
files, never config-driven locations (`core.worktree` is ignored).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

from boundary_audit.errors import SourceError

PREFIX = "boundary-audit-shadow-"
_HEX = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_PSEUDO = re.compile(r"[A-Z][A-Z_]*_HEAD")
_SMALL = 1 << 20
_COPIED_CORE = frozenset(
    {
        "filemode",
        "symlinks",
        "ignorecase",
        "precomposeunicode",
        "trustctime",
        "checkstat",
        "autocrlf",
        "eol",
        "safecrlf",
    }
)
_WORD = re.compile(r"[A-Za-z0-9_-]{1,16}")


@dataclass(frozen=True)
class Layout:
    """Where a local repository's parts are (all resolved, no `..`)."""

    git_dir: Path
    """The repository's git directory (per-worktree for a linked worktree): HEAD, index."""
    common_dir: Path
    """Objects, refs, packed-refs, config (`commondir` of a linked worktree, else git_dir)."""
    work_tree: Path | None
    """The work tree whose changes the note counts; None for a bare repository."""


def valid_refname(name: str) -> bool:
    """git's check_refname_format for a full name under `refs/`."""
    if not name.startswith("refs/") or name.endswith(("/", ".")) or "@{" in name:
        return False
    if _BAD_REF.search(name) or ".." in name:
        return False
    return all(p and not p.startswith(".") and not p.endswith(".lock") for p in name.split("/"))


def _ref_value_ok(data: bytes) -> bool:
    """A loose ref or HEAD: an object id (then whitespace or the end) or `ref: refs/...`."""
    if data.startswith(b"ref:"):
        return valid_refname(data[4:].strip().decode("utf-8", "replace"))
    m = _HEX.match(data)
    return m is not None and data[m.end() :].strip() == b""


def _small(path: Path, limit: int = _SMALL) -> bytes | None:
    """The bytes of regular file `path` (not a link, not a FIFO) up to `limit`, or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit + 1)[:limit]
    finally:
        os.close(fd)


def _is_dir(path: Path, *, links: bool) -> bool:
    try:
        st = os.stat(path) if links else os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode)


def config_entries(data: bytes) -> list[tuple[str, str]]:
    """(`section[.subsection].key`, value) pairs of a git config file, in order.

    Section and key names are lower-cased, a subsection keeps its case. Quotes, escapes,
    comments and continuation lines are handled as git does; `include`/`includeIf` are plain
    entries here, never followed.
    """
    out: list[tuple[str, str]] = []
    section = ""
    text = data.decode("utf-8", "surrogateescape").replace("\\\r\n", "").replace("\\\n", "")
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            m = re.match(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
            if m is None:
                section = ""
                continue
            name = m.group(1).lower()
            sub = re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else None
            if sub is None and "." in name:
                name, _, sub = name.partition(".")
            section = f"{name}.{sub}" if sub is not None else name
            line = line[m.end() :].strip()
        if not line or line[0] in "#;" or not section:
            continue
        m = re.match(r"([A-Za-z][A-Za-z0-9-]*)\s*(=?)(.*)", line)
        if m is None:
            continue
        key, eq, rest = m.group(1).lower(), m.group(2), m.group(3)
        out.append((f"{section}.{key}", _value(rest) if eq else "true"))
    return out


def _value(rest: str) -> str:
    value, quoted, i = [], False, 0
    escapes = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}
    while i < len(rest):
        c = rest[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(rest):
            i += 1
            value.append(escapes.get(rest[i], rest[i]))
        elif c in "#;" and not quoted:
            break
        else:
            value.append(c)
        i += 1
    return "".join(value).strip()


def read_config(common_dir: Path) -> dict[str, str]:
    """The repository's own config file as {key: last value} (includes not followed)."""
    return dict(config_entries(_small(common_dir / "config") or b""))


def is_promisor(common_dir: Path) -> bool:
    """True for a partial clone: objects may be absent on purpose (never fetched here)."""
    config = read_config(common_dir)
    if "extensions.partialclone" in config:
        return True
    for key, value in config.items():
        if key.startswith("remote.") and key.endswith(".promisor"):
            if value.lower() in ("true", "1", "yes", "on"):
                return True
    with contextlib.suppress(OSError):
        return any(n.endswith(".promisor") for n in os.listdir(common_dir / "objects" / "pack"))
    return False


def _gitdir_file(dotgit: Path) -> Path | None:
    data = _small(dotgit, 4096)
    if data is None or not data.startswith(b"gitdir:"):
        return None
    target = data[7:].strip().decode("utf-8", "surrogateescape")
    return Path(os.path.realpath(dotgit.parent / target)) if target else None


def _common(git_dir: Path) -> Path:
    data = _small(git_dir / "commondir", 4096)
    if data is None or not data.strip():
        return git_dir
    return Path(os.path.realpath(git_dir / data.strip().decode("utf-8", "surrogateescape")))


def is_git_dir(path: Path) -> bool:
    """git's is_git_directory: a valid HEAD, and `objects/` and `refs/` directories."""
    if not _is_dir(path, links=True):
        return False
    common = _common(path)
    head = _small(path / "HEAD", 4096)
    return (
        head is not None
        and _ref_value_ok(head)
        and _is_dir(common / "objects", links=True)
        and _is_dir(common / "refs", links=True)
    )


def discover(path: Path) -> Layout:
    """The repository at `path` (the top of a work tree, its `.git`, or a bare repository)."""
    if not os.path.lexists(path):
        raise SourceError(f"no such path: {str(path)!r}")
    top = Path(os.path.realpath(path))
    dotgit = top / ".git"
    if _is_dir(top, links=True):
        if _is_dir(dotgit, links=True) and is_git_dir(dotgit):
            return Layout(Path(os.path.realpath(dotgit)), _common(dotgit), top)
        linked = _gitdir_file(dotgit) if not _is_dir(dotgit, links=True) else None
        if linked is not None and is_git_dir(linked):
            return Layout(linked, _common(linked), top)
        if is_git_dir(top):
            common = _common(top)
            bare = read_config(common).get("core.bare", "false").lower() in ("true", "1", "yes")
            tree = top.parent if top.name == ".git" and not bare else None
            return Layout(top, common, tree)
    raise SourceError(f"not a git repository: {path}", hint=_hint(path))


def _hint(path: Path) -> str:
    for parent in Path(os.path.abspath(path)).parents:
        dotgit = parent / ".git"
        if (_is_dir(dotgit, links=True) and is_git_dir(dotgit)) or (
            not _is_dir(dotgit, links=True) and _gitdir_file(dotgit) is not None
        ):
            return (
                f"{path} is inside the work tree {parent}; give that directory (and @REV if needed)"
            )
    return "give the top of a work tree, a .git directory, a bare repository or a URL"


class Shadow:
    """The private git directory of one local repository (see the module docstring)."""

    def __init__(self, layout: Layout) -> None:
        _remove_stale()
        self.layout = layout
        prefix = f"{PREFIX}{_pid_namespace()}-{os.getpid()}-"
        self.path = Path(tempfile.mkdtemp(prefix=prefix))
        self._finalizer = weakref.finalize(self, _remove, str(self.path), os.getpid())
        try:
            self._fill()
        except OSError as exc:
            self.close()
            raise SourceError(
                f"cannot read the repository at {layout.git_dir}: {exc.strerror or exc}"
            ) from exc
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Remove the shadow directory (the scanned repository is never touched). Idempotent."""
        self._finalizer()

    def __enter__(self) -> Shadow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self) -> None:
        src, common, dst = self.layout.git_dir, self.layout.common_dir, self.path
        self._config(read_config(common))
        head = _small(src / "HEAD", 4096)
        if head is None or not _ref_value_ok(head):
            raise SourceError(f"{src}/HEAD is not a valid HEAD")
        (dst / "HEAD").write_bytes(head)
        for name in os.listdir(src):
            if _PSEUDO.fullmatch(name):
                data = _small(src / name)
                if data is not None and _HEX.match(data):
                    (dst / name).write_bytes(data)
        self._refs(common)
        self._packed_refs(common)
        shallow = _small(common / "shallow", 64 << 20)
        if shallow is not None and all(_HEX.fullmatch(x) for x in shallow.split()):
            (dst / "shallow").write_bytes(shallow)
        self._objects(common)
        for name in os.listdir(src):
            if name == "index" or re.fullmatch(r"sharedindex\.[0-9a-f]{40,64}", name):
                self._link(src / name, dst / name, directory=False)

    def _config(self, theirs: dict[str, str]) -> None:
        version = theirs.get("core.repositoryformatversion", "0")
        v1 = version == "1"
        fmt = theirs.get("extensions.objectformat", "sha1").lower() if v1 else "sha1"
        refs = theirs.get("extensions.refstorage", "files").lower() if v1 else "files"
        unsupported = (
            f"format version {version}"
            if version not in ("0", "1")
            else f"object format {fmt}"
            if fmt not in ("sha1", "sha256")
            else f"ref storage {refs}"
            if refs != "files"
            else None
        )
        if unsupported:
            raise SourceError(
                f"{self.layout.git_dir} uses an unsupported repository {unsupported}",
                hint="boundary-audit reads sha1 and sha256 repositories with files refs",
            )
        lines = ["[core]", f"\trepositoryformatversion = {1 if fmt != 'sha1' else 0}"]
        lines += ["\tbare = true", "\tfsmonitor = false", "\thooksPath = /dev/null"]
        lines += [
            f"\t{key.removeprefix('core.')} = {value}"
            for key, value in theirs.items()
            if key.startswith("core.")
            and key.removeprefix("core.") in _COPIED_CORE
            and _WORD.fullmatch(value)
        ]
        lines += ["[gc]", "\tauto = 0", "[maintenance]", "\tauto = false"]
        if fmt != "sha1":
            lines += ["[extensions]", f"\tobjectFormat = {fmt}"]
        (self.path / "config").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _refs(self, common: Path) -> None:
        top = common / "refs"
        if not _is_dir(top, links=False):
            raise SourceError(f"{top} is not a directory (a link is not followed)")
        (self.path / "refs").mkdir()
        for root, dirs, files in os.walk(top):
            rel_root = Path(root).relative_to(common).as_posix()
            dirs[:] = [d for d in dirs if f"{rel_root}/{d}" != "refs/replace"]
            for name in files:
                ref = f"{rel_root}/{name}"
                data = _small(Path(root) / name, 4096)
                if data is None or not valid_refname(ref) or not _ref_value_ok(data):
                    continue  # a symlinked, special or malformed ref: git would warn or follow
                target = self.path / ref
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)

    def _packed_refs(self, common: Path) -> None:
        path = common / "packed-refs"
        if not os.path.lexists(path):
            return
        data = _small(path, 1 << 30)
        if data is None:
            raise SourceError(f"{path} is not a regular file (a link is not followed)")
        out, keep = [], True
        for line in data.split(b"\n"):
            if not line or line.startswith(b"#"):
                out.append(line)
                continue
            if line.startswith(b"^"):
                if _HEX.fullmatch(line[1:]) is None:
                    raise SourceError(f"{path}: unexpected line")
                if keep:
                    out.append(line)
                continue
            oid, _, ref = line.partition(b" ")
            name = ref.decode("utf-8", "surrogateescape")
            if _HEX.fullmatch(oid) is None or not valid_refname(name):
                raise SourceError(f"{path}: unexpected line")
            keep = not name.startswith("refs/replace/")
            if keep:
                out.append(line)
        (self.path / "packed-refs").write_bytes(b"\n".join(out))

    def _objects(self, common: Path) -> None:
        objects = common / "objects"
        if not _is_dir(objects, links=False):
            raise SourceError(f"{objects} is not a directory (a link is not followed)")
        real = Path(os.path.realpath(objects))
        mine = self.path / "objects"
        (mine / "info").mkdir(parents=True)
        (mine / "pack").mkdir()
        for name in os.listdir(real):
            if re.fullmatch(r"[0-9a-f]{2}", name):
                self._link(real / name, mine / name, directory=True)
        pack_dir = real / "pack"
        if not _is_dir(pack_dir, links=False):
            return
        names = os.listdir(pack_dir)
        for name in names:
            m = re.fullmatch(r"(pack-[0-9a-f]{40,64})\.idx", name)
            if m and f"{m.group(1)}.pack" in names:
                self._link(pack_dir / name, mine / "pack" / name, directory=False)
                pack = f"{m.group(1)}.pack"
                self._link(pack_dir / pack, mine / "pack" / pack, directory=False)

    def _link(self, source: Path, target: Path, *, directory: bool) -> None:
        """Link `target` to `source` if `source` is a real directory / regular file (lstat)."""
        try:
            st = os.lstat(source)
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode):
            os.symlink(source, target)


def _remove(path: str, owner: int) -> None:
    if os.getpid() == owner:  # not in a forked child (the scan's worker processes)
        shutil.rmtree(path, ignore_errors=True)


def _pid_namespace() -> str:
    """The inode of our pid namespace: a pid means something only inside it."""
    try:
        return re.sub(r"\D", "", os.readlink("/proc/self/ns/pid")) or "0"
    except OSError:
        return "0"


def _remove_stale() -> None:
    """Remove shadows of dead processes of our pid namespace (killed with kill -9)."""
    base = Path(tempfile.gettempdir())
    pattern = re.compile(rf"{re.escape(PREFIX)}{_pid_namespace()}-(\d+)-\w+")
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            m = pattern.fullmatch(entry.name)
            if m is None or not entry.is_dir(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_uid != os.getuid() or _alive(int(m[1])):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
