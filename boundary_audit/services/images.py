"""The Docker backend's image, built locally with `docker import` (no registry is reachable).

The root filesystem is assembled from the host's own programs and the shared libraries `ldd`
says they need: bash, dash as /bin/sh, coreutils, findutils, grep, sed, awk, diff, git and a
few util-linux tools, plus a minimal /etc (root user), git's templates and the C.UTF-8 locale.
The layout is merged-/usr (/bin, /sbin, /lib, /lib64 are symlinks into /usr), so a library
found at /lib/x86_64-linux-gnu/... on the host is found at the same path in the image.

The tag is `boundary-audit/rootfs:<16 hex>`, a SHA-256 over every entry's path, mode and
content: the image is rebuilt only when an input changes (an upgraded bash, a new program in
PROGRAMS), and two machines with the same binaries get the same tag.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary_audit import _subprocess
from boundary_audit.errors import EnvironmentUnavailable, SandboxError

IMAGE_REPO = "boundary-audit/rootfs"
FORMAT = "2"
"""Bumped when the assembly itself changes, so that old images are not reused."""
SEARCH_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
PROGRAMS = (
    "bash dash sh env printf echo cat cp mv rm ln ls mkdir rmdir touch chmod chown stat "
    "readlink realpath basename dirname pwd head tail wc sort uniq tr cut paste join comm "
    "tee od base64 sha256sum md5sum cksum cmp diff printenv true false test [ expr seq yes "
    "sleep timeout nohup setsid kill mktemp date id whoami uname hostname nproc tac rev "
    "split csplit fold fmt nl expand unexpand truncate dd du df sync xargs find grep egrep "
    "fgrep sed awk mawk gawk git tar gzip gunzip zcat xxd hexdump"
).split()
SHELL_ALIASES = {"sh": "dash"}
MERGED = ("bin", "sbin", "lib", "lib64")
ETC = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/bash\n",
    "etc/group": b"root:x:0:\n",
    "etc/hostname": b"sandbox\n",
}
DATA_DIRS = ("/usr/share/git-core/templates", "/usr/lib/locale/C.utf8")


@dataclass(frozen=True)
class Entry:
    """One member of the root filesystem tarball."""

    path: str
    """Path inside the image, relative (`usr/bin/bash`)."""
    mode: int
    source: Path | None = None
    data: bytes | None = None
    link: str | None = None
    """Symlink target, for symlinks."""
    is_dir: bool = False

    def content(self) -> bytes:
        """The bytes this entry contributes to the digest."""
        if self.source is not None:
            return self.source.read_bytes()
        return self.data or (self.link or "").encode()


def _merged(path: str) -> str:
    """Host absolute path -> image relative path under merged /usr."""
    rel = path.lstrip("/")
    top = rel.split("/", 1)[0]
    return f"usr/{rel}" if top in MERGED else rel


def _programs() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name in PROGRAMS:
        target = SHELL_ALIASES.get(name, name)
        where = shutil.which(target, path=SEARCH_PATH)
        if where is not None:
            found[name] = Path(os.path.realpath(where))
    if "bash" not in found or "sh" not in found:
        raise EnvironmentUnavailable("docker image: bash and dash must be installed on the host")
    return found


def _libraries(binaries: list[Path]) -> set[str]:
    r = _subprocess.run(["ldd", *map(str, binaries)], timeout=60, what="ldd")
    libs = set()
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if not line.startswith(("\t", " ")):
            continue
        for token in line.split():
            if token.startswith("/"):
                libs.add(token)
    return libs


def rootfs_entries() -> list[Entry]:
    """Every file, directory and symlink of the image, sorted by path (cached per process)."""
    return list(_rootfs_entries())


@functools.cache
def _rootfs_entries() -> tuple[Entry, ...]:
    # NOTE(images): resolving ~150 programs' libraries with ldd takes about a second; the host's
    # binaries do not change under a running boundary-audit, so once per process is enough.
    programs = _programs()
    entries = {f"usr/bin/{n}": Entry(f"usr/bin/{n}", 0o755, source=p) for n, p in programs.items()}
    for lib in sorted(_libraries(sorted(set(programs.values())))):
        real = Path(os.path.realpath(lib))
        entries[_merged(lib)] = Entry(_merged(lib), 0o755, source=real)
    for top in MERGED:
        entries[top] = Entry(top, 0o777, link=f"usr/{top}")
    # The sandbox reaper's execute-only bash (see sandbox._launch): non-dumpable when run by a
    # uid that cannot read it, so a reply cannot trace it or write its memory.
    entries["usr/libexec/ba-reaper"] = Entry(
        "usr/libexec/ba-reaper", 0o111, source=programs["bash"]
    )
    for rel, data in ETC.items():
        entries[rel] = Entry(rel, 0o644, data=data)
    for d in ("usr/sbin", "usr/lib64", "tmp", "root", "proc", "sys", "dev", ".ba"):
        entries.setdefault(d, Entry(d, 0o1777 if d == "tmp" else 0o755, is_dir=True))
    for base in DATA_DIRS:
        for f in sorted(Path(base).rglob("*")) if Path(base).is_dir() else []:
            if f.is_file() and not f.is_symlink():
                rel = _merged(str(f))
                entries[rel] = Entry(rel, f.stat().st_mode & 0o777, source=f)
    return tuple(entries[k] for k in sorted(entries))


def rootfs_digest(entries: list[Entry]) -> str:
    """16 hex digits over FORMAT and every entry's path, kind, mode and content."""
    h = hashlib.sha256(f"boundary-audit rootfs {FORMAT}\n".encode())
    for e in entries:
        kind = "d" if e.is_dir else "l" if e.link else "f"
        h.update(f"{kind} {e.mode:o} {e.path}\0".encode())
        h.update(hashlib.sha256(e.content()).digest())
    return h.hexdigest()[:16]


def rootfs_tar(entries: list[Entry]) -> bytes:
    """A tarball of `entries` with fixed owners and times (root:root, mtime 0)."""
    buf = io.BytesIO()
    seen: set[str] = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for e in entries:
            parts = e.path.split("/")
            for i in range(1, len(parts)):
                parent = "/".join(parts[:i])
                if parent not in seen:
                    seen.add(parent)
                    tar.addfile(_info(parent, tarfile.DIRTYPE, 0o755))
            if e.is_dir:
                if e.path not in seen:
                    seen.add(e.path)
                    tar.addfile(_info(e.path, tarfile.DIRTYPE, e.mode))
            elif e.link:
                info = _info(e.path, tarfile.SYMTYPE, e.mode)
                info.linkname = e.link
                tar.addfile(info)
            else:
                data = e.content()
                info = _info(e.path, tarfile.REGTYPE, e.mode)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime, info.uid, info.gid = kind, mode, 0, 0, 0
    return info


def image_tag(entries: list[Entry] | None = None) -> str:
    """The tag the current host binaries produce."""
    return f"{IMAGE_REPO}:{rootfs_digest(entries if entries is not None else rootfs_entries())}"


def ensure_image(client: Any) -> str:
    """The tag of the image for this host's binaries, importing it into `client` if missing."""
    import docker.errors

    entries = rootfs_entries()
    tag = image_tag(entries)
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker: cannot list images: {exc}") from exc
    repo, _, version = tag.partition(":")
    try:
        client.api.import_image_from_data(rootfs_tar(entries), repository=repo, tag=version)
        client.images.get(tag)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker: cannot import the sandbox image {tag}: {exc}") from exc
    return tag
