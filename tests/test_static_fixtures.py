"""Every fixture folder under tests/fixtures/checks/ yields exactly its expected findings.

Markers in the fixture files say which finding starts on which line (see `expectations`);
the test compares the exact set of (code, path, line, boundary class, suppressed) with a scan
of the folder. Markers sit in comments: `# expect: BA101` (or `//`), several codes separated
by commas, a class in parentheses when it is not the owner's (`BA901(shell-string)`),
`expect-above:`/`expect-below:` for the neighbouring line, and `-suppressed` for findings an
inline suppression marks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boundary_audit.finding import Finding
from boundary_audit.static.checks import BY_CODE
from boundary_audit.static.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
FOLDERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())

_MARK = re.compile(r"(?:#|//)\s*expect(-above|-below)?(-suppressed)?:\s*([A-Za-z0-9(), -]+)")
_ITEM = re.compile(r"(BA\d{3})(?:\(([a-z-]+)\))?")

Expected = tuple[str, str, int, str, bool]


def expectations(root: Path) -> set[Expected]:
    """(code, path, line, class, suppressed) for every marker in the files under `root`."""
    out: set[Expected] = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in _MARK.finditer(line):
                target = lineno + {"-above": -1, "-below": 1}.get(m.group(1) or "", 0)
                for code, cls in _ITEM.findall(m.group(3)):
                    owner = BY_CODE[code].classes
                    out.add((code, rel, target, cls or owner[0].value, bool(m.group(2))))
    return out


def observed(findings: tuple[Finding, ...]) -> set[Expected]:
    """The same tuples for actual findings."""
    return {
        (
            f.code,
            f.primary.path,
            f.primary.start_line,
            f.boundary_class.value,
            f.suppressed is not None,
        )
        for f in findings
    }


def codes_in(path: Path) -> set[str]:
    """Codes a fixture file expects anywhere."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return {c for m in _MARK.finditer(text) for c, _ in _ITEM.findall(m.group(3))}


@pytest.mark.parametrize("folder", FOLDERS)
def test_fixture_folder_yields_exactly_the_marked_findings(folder: str) -> None:
    root = FIXTURES / folder
    result = scan_path(root, options=ScanOptions(jobs=1))
    assert result.skipped == ()
    assert observed(result.findings) == expectations(root)


def test_markers_are_read_from_both_comment_styles(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1  # expect: BA101\n# expect-below-suppressed: BA203\ny\n")
    (tmp_path / "b.go").write_text("// expect-above: BA901(tty-keystrokes)\n")
    assert expectations(tmp_path) == {
        ("BA101", "a.py", 1, "shell-string", False),
        ("BA203", "a.py", 3, "tty-keystrokes", True),
        ("BA901", "b.go", 0, "tty-keystrokes", False),
    }


def test_two_workers_give_the_same_result_as_one() -> None:
    one = scan_path(FIXTURES, options=ScanOptions(jobs=1))
    two = scan_path(FIXTURES, options=ScanOptions(jobs=2))
    assert one == two
    assert len(one.findings) == sum(len(expectations(FIXTURES / f)) for f in FOLDERS)
