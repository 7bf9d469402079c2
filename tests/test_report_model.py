"""The report model: order, counts, the summary line, fingerprints; and Markdown escaping."""

from __future__ import annotations

from dataclasses import replace

import pytest

from boundary_audit.finding import Skipped, Suppression
from boundary_audit.report.scan.markdown import MarkdownFormat, code, text
from boundary_audit.results.scan import fingerprint_key, summary_line
from boundary_audit.taxonomy import BoundaryClass
from tests.support import sample_findings as sample


def test_findings_are_sorted_and_mappings_frozen() -> None:
    report = sample.report()
    assert [f.sort_key for f in report.findings] == sorted(f.sort_key for f in report.findings)
    assert list(report.languages) == ["python", "shell", "typescript"]
    assert [c.code for c in report.checks] == sorted(c.code for c in report.checks)
    with pytest.raises(TypeError):
        report.languages["go"] = 1  # type: ignore[index]


def test_summary_counts_every_suppression_kind() -> None:
    s = sample.report().summary
    assert (s.findings, s.active, s.suppressed, s.filtered) == (7, 4, 3, 2)
    assert dict(s.suppressed_by) == {"inline": 1, "config": 1, "baseline": 1}


def test_summary_line_wording() -> None:
    assert summary_line(sample.report()) == (
        f"scanned example/agent-harness@{sample.SHA}: 7 findings (3 suppressed, 2 below "
        "threshold), 2 files skipped"
    )
    one = sample.report(
        findings=sample.report().findings[1:2], filtered=0, skipped=(Skipped("a.bin", "binary"),)
    )
    assert summary_line(one) == (
        f"scanned example/agent-harness@{sample.SHA}: 1 finding (0 suppressed), 1 file skipped"
    )
    local = sample.report(
        target="./repo", target_name="./repo", commit=None, findings=(), skipped=(), filtered=0
    )
    assert summary_line(local) == "scanned ./repo: 0 findings (0 suppressed), 0 files skipped"


def test_fingerprint_key_ignores_lines_and_whitespace_but_not_what_matters() -> None:
    f = sample.findings()[1]
    assert f.code == "BA101"
    key = fingerprint_key(f, "subprocess.run(cmd, shell=True)")
    moved = replace(
        f, primary=replace(f.primary, start_line=500, end_line=501), message="another message"
    )
    assert fingerprint_key(moved, "subprocess.run(cmd,\n\tshell=True)  ") == key
    assert fingerprint_key(f, "subprocess.run(cmd2, shell=True)") != key
    assert (
        fingerprint_key(
            replace(f, boundary_class=BoundaryClass.NESTED_STRING),
            "subprocess.run(cmd, shell=True)",
        )
        != key
    )
    assert (
        fingerprint_key(
            replace(f, primary=replace(f.primary, path="agent/other.py")),
            "subprocess.run(cmd, shell=True)",
        )
        != key
    )
    assert fingerprint_key(f, "") == fingerprint_key(f, "subprocess.run") != key
    assert len(key) == 24 and int(key, 16) >= 0


def test_markdown_cells_cannot_break_the_table() -> None:
    assert text("a | b\n`c` <script>") == r"a \| b \`c\` \<script\>"
    assert text("AT&T **x**") == r"AT&amp;T \*\*x\*\*"
    assert code("") == ""
    assert code("a|b") == r"`a\|b`"
    assert code("x `y` z") == "``x `y` z``"
    assert code("`edge`") == "`` `edge` ``"
    rows = [
        ln for ln in MarkdownFormat().render(sample.report()).splitlines() if ln.startswith("| ")
    ]
    header_cells = rows[0].count(" | ") + 1
    for row in rows[:6]:
        unescaped = row.replace("\\|", "").count("|")
        assert unescaped == header_cells + 1, row


def test_markdown_lists_suppressed_and_skipped() -> None:
    md = MarkdownFormat().render(sample.report())
    assert "## Active findings (4)\n" in md
    assert "| medium | nested (oracle): 21/56 vs raw 56/56, -62.5 pp \\[path\\] | Reply" in md
    assert md.count("| not measured |") == 2
    assert md.count("| not probed |") == 3  # no probe step: no damage claimed
    assert "| eval | none | no | low |" not in md  # a value of unknown origin is not a boundary
    assert md.count("| not a model boundary: a value the model does not control |") == 1
    assert "| BA201 | `tools/sessión.py:33@3ea751c` | inline | session is test-only |\n" in md
    assert "## Skipped inputs (2)\n\n- `assets/logo.png`: binary\n" in md
    clean = MarkdownFormat().render(
        sample.report(
            findings=(replace(sample.findings()[1], suppressed=Suppression("inline", "ok")),),
            skipped=(),
        )
    )
    assert "No active findings." in clean and "## Skipped" not in clean


def test_markdown_one_row_per_boundary_after_a_probe() -> None:
    md = MarkdownFormat().render(sample.probed_report())
    (nested,) = [
        line for line in md.splitlines() if "agent/remote.py:19" in line and "| high |" in line
    ]
    cells = [c.strip() for c in nested.split(" | ")]
    assert cells[5:8] == [
        "native",
        "−66.1 pp",
        "shell-quote R at the interpolation point (shlex.quote); let bash parse R (the model "
        "writes bash), not sh: −66.1 pp → 0.0 pp",
    ]
    assert (
        "- Errors: 112 runs could not be carried out (left out of the pass rates and the "
        "damage): `session[swe-rex.syntax-check; swe-rex.bashlex-split]`: error: pty\\_session"
    ) in md
    assert "  - transport.prefix: scan (none) ≠ adapter `timeout 60`: scan reads" in md
