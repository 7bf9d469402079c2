"""The static columns: does each adapter anchor still hold in a checkout of the system?

Where the files come from, in order: `--repo-dir SYSTEM=PATH` (a local git repository, bare or
not, read at the pinned commit or at `--commit SYSTEM=REV`; or a plain directory, read as is
and labelled so), else `open_checkout(repository@rev)` (the cache, or the network unless
offline). When none is available the anchors are "not verified" with the reason; the report
never fails because a remote is unreachable.

A `text` anchor holds when its text occurs within its lines. A `sink` anchor holds when
`scan_files`, run on the anchor's file only (scope off: the anchor names the file), reports
a finding of the expected class (and sink name, if given) whose primary lines overlap the
anchor's. When it does not hold, the
rest of the file is searched: the same text or finding elsewhere is reported as `moved` (drift,
with the new lines), a finding of another class at the lines as `class differs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from boundary_audit.adapters.model import Adapter, Anchor
from boundary_audit.errors import BoundaryAuditError
from boundary_audit.finding import Finding
from boundary_audit.source import open_checkout
from boundary_audit.static.engine import ScanOptions, scan_files

VERIFIED = "verified"
MOVED = "moved"
CLASS_DIFFERS = "class differs"
NOT_FOUND = "not found"
NO_FILE = "no such file"
NOT_VERIFIED = "not verified"
ANCHOR_STATUSES = (VERIFIED, MOVED, CLASS_DIFFERS, NOT_FOUND, NO_FILE, NOT_VERIFIED)
"""Every anchor status, best first."""


@dataclass(frozen=True)
class AnchorCheck:
    """One anchor and what the checkout said about it."""

    anchor: str
    """`path:start-end` as the adapter declares it."""
    kind: str
    """`sink` or `text`."""
    expected: str
    """The class (sink anchors) or the text (text anchors) that must be there."""
    status: str
    """One of ANCHOR_STATUSES."""
    detail: str = ""
    """What was found: the finding's code, class and lines, or where the text moved."""


@dataclass(frozen=True)
class StaticCheck:
    """The static columns of one system: which checkout was read, and every anchor's status."""

    source: str
    """`repository@sha`, a directory, or "" when no checkout was available."""
    commit: str | None
    """Full sha that was read (None for a plain directory or no checkout)."""
    pinned: bool
    """True when the commit read is the adapter's pin (False: drift against another rev)."""
    note: str
    """One line: "verified at pin", "drift against REV", "not verified: no checkout (...)"."""
    anchors: tuple[AnchorCheck, ...] = ()


@dataclass(frozen=True)
class _File:
    path: str
    data: bytes | None
    skipped: str | None = None


@dataclass
class Files:
    """The anchor files of one checkout: their bytes and their static findings."""

    read: Callable[[str], bytes | None]
    commit: str | None
    _findings: dict[str, tuple[Finding, ...]]

    def data(self, path: str) -> bytes | None:
        """The file's bytes, None if absent."""
        return self.read(path)

    def findings(self, path: str) -> tuple[Finding, ...]:
        """Every finding `scan_files` reports in this one file (cached)."""
        if path not in self._findings:
            data = self.read(path)
            found: tuple[Finding, ...] = ()
            if data is not None:
                result = scan_files(
                    [_File(path, data)],
                    commit=self.commit,
                    options=ScanOptions(jobs=1, include_constant=True, scope=False),
                )
                found = result.findings
            self._findings[path] = found
        return self._findings[path]


def _git_files(spec: str, offline: bool, paths: Sequence[str]) -> tuple[Files, str]:
    checkout = open_checkout(spec, offline=offline, timeout=60.0)
    blobs = {f.path: f.data for f in checkout.files(paths=list(paths), max_bytes=8 << 20)}
    return Files(blobs.get, checkout.sha, {}), checkout.url


def _dir_files(root: Path) -> Files:
    def read(path: str) -> bytes | None:
        target = root / path
        try:
            return target.read_bytes() if target.is_file() else None
        except OSError:
            return None

    return Files(read, None, {})


def open_files(
    adapter: Adapter, repo_dir: Path | None, rev: str | None, offline: bool
) -> tuple[Files | None, StaticCheck]:
    """The files to check, and the static header (source, commit, pinned, note)."""
    paths = sorted({a.path for p in adapter.paths for a in p.anchors})
    want = rev or adapter.commit
    if repo_dir is not None and not _is_git(repo_dir):
        if not repo_dir.is_dir():
            why = f"not verified: {repo_dir} is not a directory"
            return None, StaticCheck("", None, False, why)
        shown = portable(str(repo_dir))
        note = f"checked in directory {shown} (not git: the pin {adapter.commit} is unconfirmed)"
        return _dir_files(repo_dir), StaticCheck(shown, None, False, note)
    where = str(repo_dir) if repo_dir is not None else adapter.repository
    try:
        files, url = _git_files(f"{where}@{want}", offline, paths)
    except BoundaryAuditError as exc:
        why = "no checkout" if repo_dir is None else "checkout failed"
        return None, StaticCheck("", None, False, f"not verified: {why} ({portable(exc.message)})")
    assert files.commit is not None
    pinned = files.commit.startswith(adapter.commit)
    note = (
        f"anchors checked at the pin {files.commit[:12]}"
        if pinned
        else f"drift check at {want} = {files.commit[:12]} (pin {adapter.commit})"
    )
    # NOTE: a local clone (--repo-dir) is named by the repository it is a clone of: the commit
    # says what was read, and a report must not carry this machine's paths.
    source = adapter.repository if url.startswith("file://") else url
    return files, StaticCheck(f"{source}@{files.commit}", files.commit, pinned, note)


def portable(text: str) -> str:
    """`text` with this user's home directory written `~`, for reports another machine reads."""
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home not in ("", "/") else text


def _is_git(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def check_anchor(anchor: Anchor, files: Files) -> AnchorCheck:
    """The status of one anchor in `files`."""
    data = files.data(anchor.path)
    label = anchor.label()
    if anchor.kind == "text":
        expected = anchor.text or ""
    else:
        expected = anchor.boundary_class.value if anchor.boundary_class else ""
    if data is None:
        return AnchorCheck(label, anchor.kind, expected, NO_FILE, f"{anchor.path} is absent")
    if anchor.kind == "text":
        return _check_text(anchor, label, expected, data)
    return _check_sink(anchor, label, expected, files.findings(anchor.path))


def _check_text(anchor: Anchor, label: str, text: str, data: bytes) -> AnchorCheck:
    lines = data.decode("utf-8", "replace").splitlines()
    window = lines[anchor.start_line - 1 : anchor.end_line]
    if text in "\n".join(window):
        at = next(
            (anchor.start_line + k for k, line in enumerate(window) if text in line),
            anchor.start_line,
        )
        return AnchorCheck(label, "text", text, VERIFIED, f"text at line {at}")
    elsewhere = [i + 1 for i, line in enumerate(lines) if text in line]
    if elsewhere:
        return AnchorCheck(label, "text", text, MOVED, f"text now at line {elsewhere[0]}")
    return AnchorCheck(label, "text", text, NOT_FOUND, "text absent from the file")


def _matches(f: Finding, anchor: Anchor) -> bool:
    if f.boundary_class != anchor.boundary_class:
        return False
    return anchor.sink is None or anchor.sink.lower() in f.sink.lower()


def _overlaps(f: Finding, anchor: Anchor) -> bool:
    return f.primary.start_line <= anchor.end_line and f.primary.end_line >= anchor.start_line


def _where(f: Finding) -> str:
    p = f.primary
    lines = f"{p.start_line}" if p.start_line == p.end_line else f"{p.start_line}-{p.end_line}"
    return f"{f.code} {f.boundary_class.value} `{f.sink}` at line {lines}"


def _check_sink(anchor: Anchor, label: str, cls: str, found: Sequence[Finding]) -> AnchorCheck:
    here = [f for f in found if _overlaps(f, anchor)]
    hit = next((f for f in here if _matches(f, anchor)), None)
    if hit is not None:
        return AnchorCheck(label, "sink", cls, VERIFIED, _where(hit))
    moved = next((f for f in found if _matches(f, anchor)), None)
    if moved is not None:
        return AnchorCheck(label, "sink", cls, MOVED, "now " + _where(moved))
    if here:
        return AnchorCheck(label, "sink", cls, CLASS_DIFFERS, "found " + _where(here[0]))
    return AnchorCheck(label, "sink", cls, NOT_FOUND, "no finding of this class in the file")


def verify_adapter(
    adapter: Adapter, *, repo_dir: Path | None = None, rev: str | None = None, offline: bool = False
) -> dict[str, StaticCheck]:
    """Path id -> the static check of that path's anchors."""
    files, head = open_files(adapter, repo_dir, rev, offline)
    out: dict[str, StaticCheck] = {}
    for path in adapter.paths:
        if files is None:
            checks = tuple(
                AnchorCheck(
                    a.label(),
                    a.kind,
                    a.text or (a.boundary_class.value if a.boundary_class else ""),
                    NOT_VERIFIED,
                    "",
                )
                for a in path.anchors
            )
        else:
            checks = tuple(check_anchor(a, files) for a in path.anchors)
        out[path.id] = StaticCheck(head.source, head.commit, head.pinned, head.note, checks)
    return out
