"""Snapshot assertions for rendered reports, kept as plain files under tests/snapshots/.

`assert_snapshot(name, text)` compares `text` (after `normalize`) with tests/snapshots/NAME.
A missing or different snapshot fails; run with BOUNDARY_AUDIT_UPDATE_SNAPSHOTS=1 to (re)write
them, then review the diff in git. Normalization replaces what legitimately varies between
machines and releases: the tool version, temporary directories, the repository path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from boundary_audit import __version__

SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots"
REPO = Path(__file__).resolve().parent.parent.parent


def normalize(text: str, *, tmp: Path | None = None, version: str = __version__) -> str:
    """`text` with the version, `tmp` and the repository path replaced by placeholders."""
    if tmp is not None:
        text = text.replace(str(tmp), "@@TMP@@")
    text = text.replace(str(REPO), "@@REPO@@")
    return re.sub(rf"(?<![\d.]){re.escape(version)}(?![\d.])", "@@VERSION@@", text)


def assert_snapshot(
    name: str, text: str, *, tmp: Path | None = None, version: str = __version__
) -> None:
    """Fail unless normalized `text` equals tests/snapshots/NAME byte for byte."""
    got = normalize(text, tmp=tmp, version=version)
    path = SNAPSHOTS / name
    if os.environ.get("BOUNDARY_AUDIT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(got.encode("utf-8"))
        return
    assert path.exists(), f"no snapshot {path}; rerun with BOUNDARY_AUDIT_UPDATE_SNAPSHOTS=1"
    want = path.read_bytes().decode("utf-8")
    assert got == want, f"{name} differs from its snapshot (BOUNDARY_AUDIT_UPDATE_SNAPSHOTS=1)"
