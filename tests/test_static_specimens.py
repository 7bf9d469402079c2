"""The specimens (the embedded default target) yield exactly what specimens/README.md lists."""

from __future__ import annotations

import re
from pathlib import Path

from boundary_audit._data import iter_files
from boundary_audit.static import ScanOptions, scan_path

ROOT = Path(__file__).resolve().parent.parent / "specimens"
ROW = re.compile(r"^\| `([^`]+)` \| [^|]+ \| `([a-z-]+)` \| `(BA\d{3})` line (\d+) \|$")


def readme_table() -> set[tuple[str, int, str, str]]:
    rows = set()
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows.add((m.group(1), int(m.group(4)), m.group(3), m.group(2)))
    return rows


def test_scan_of_the_specimens_matches_the_readme_exactly() -> None:
    result = scan_path(ROOT, options=ScanOptions(jobs=1))
    found = {
        (f.primary.path, f.primary.start_line, f.code, f.boundary_class.value)
        for f in result.findings
    }
    assert found == readme_table()
    assert len(found) == 9 and len({cls for *_, cls in found}) == 9
    assert all(f.model_controlled and f.confidence.value == "medium" for f in result.findings)
    assert result.skipped == ()
    assert result.languages == {"python": 7, "rust": 1, "typescript": 1}


def test_the_packaged_specimens_are_the_repository_files() -> None:
    packaged = {rel: node.read_bytes() for rel, node in iter_files("specimens")}
    on_disk = {
        p.relative_to(ROOT).as_posix(): p.read_bytes() for p in ROOT.rglob("*") if p.is_file()
    }
    assert packaged == on_disk
