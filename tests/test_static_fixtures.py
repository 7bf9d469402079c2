"""Every fixture folder under tests/fixtures/checks/ yields exactly its expected findings.

Markers in the fixture files say which finding starts on which line (see `expectations`);
the test compares the exact set of (code, path, line, boundary class, model_controlled,
evidence, suppressed) with a scan of the folder. Markers sit in comments: `# expect:
BA101:traced` (or `//`), several separated by commas, a class in parentheses when it is not
the owner's (`BA901(shell-string):-`), `expect-above:`/`expect-below:` for the neighbouring
line, and `-suppressed` for findings an inline suppression marks. After the colon, the
evidence: `traced`, `tool-entry` or `name` for a model-controlled finding, `~name` for one
whose value is only named like a command (not model-controlled), `-` for no model origin.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boundary_audit.finding import Finding
from boundary_audit.static import engine
from boundary_audit.static.checks import BY_CODE
from boundary_audit.static.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
FOLDERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())

_MARK = re.compile(r"(?:#|//)\s*expect(-above|-below)?(-suppressed)?:\s*([A-Za-z0-9(),:~ -]+)")
_ITEM = re.compile(r"(BA\d{3})(?:\(([a-z-]+)\))?(?::(traced|tool-entry|~?name|-))?")
_EVIDENCE = {
    "traced": (True, "traced"),
    "tool-entry": (True, "tool-entry"),
    "name": (True, "name"),
    "~name": (False, "name"),
    "-": (False, None),
}

Expected = tuple[str, str, int, str, bool, str | None, bool]


class MarkerError(ValueError):
    """A marker without its evidence part (every expectation states it)."""


def expectations(root: Path) -> set[Expected]:
    """(code, path, line, class, model_controlled, evidence, suppressed) for every marker."""
    out: set[Expected] = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in _MARK.finditer(line):
                target = lineno + {"-above": -1, "-below": 1}.get(m.group(1) or "", 0)
                for code, cls, ev in _ITEM.findall(m.group(3)):
                    if not ev:
                        raise MarkerError(f"{rel}:{lineno}: {code} has no evidence (`:traced`...)")
                    owner = BY_CODE[code].classes
                    mc, level = _EVIDENCE[ev]
                    cls = cls or owner[0].value
                    out.add((code, rel, target, cls, mc, level, bool(m.group(2))))
    return out


def observed(findings: tuple[Finding, ...]) -> set[Expected]:
    """The same tuples for actual findings."""
    return {
        (
            f.code,
            f.primary.path,
            f.primary.start_line,
            f.boundary_class.value,
            f.model_controlled,
            f.model_evidence,
            f.suppressed is not None,
        )
        for f in findings
    }


def codes_in(path: Path) -> set[str]:
    """Codes a fixture file expects anywhere."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return {c for m in _MARK.finditer(text) for c, _, _ in _ITEM.findall(m.group(3))}


@pytest.mark.parametrize("folder", FOLDERS)
def test_fixture_folder_yields_exactly_the_marked_findings(folder: str) -> None:
    root = FIXTURES / folder
    result = scan_path(root, options=ScanOptions(jobs=1))
    assert result.skipped == ()
    assert observed(result.findings) == expectations(root)


def test_markers_are_read_from_both_comment_styles(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "x = 1  # expect: BA101:traced\n# expect-below-suppressed: BA203:~name\ny\n"
    )
    (tmp_path / "b.go").write_text("// expect-above: BA901(tty-keystrokes):-, BA301:tool-entry\n")
    assert expectations(tmp_path) == {
        ("BA101", "a.py", 1, "shell-string", True, "traced", False),
        ("BA203", "a.py", 3, "tty-keystrokes", False, "name", True),
        ("BA901", "b.go", 0, "tty-keystrokes", False, None, False),
        ("BA301", "b.go", 0, "argv-direct", True, "tool-entry", False),
    }
    (tmp_path / "c.py").write_text("x = 1  # expect: BA101\n")
    with pytest.raises(MarkerError, match=r"c.py:1: BA101 has no evidence"):
        expectations(tmp_path)


def test_two_workers_give_the_same_result_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", 0)  # the fixtures are 0.24 MB
    one = scan_path(FIXTURES, options=ScanOptions(jobs=1))
    two = scan_path(FIXTURES, options=ScanOptions(jobs=2))
    assert one == two
    assert len(one.findings) == sum(len(expectations(FIXTURES / f)) for f in FOLDERS)
