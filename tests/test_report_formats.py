"""Renderers over the shared hand-built report: snapshots, determinism, purity, the format map."""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from boundary_audit.report.scan import ScanFormat, renderer_for
from boundary_audit.report.scan.json_v1 import JsonV1Format
from boundary_audit.report.scan.markdown import MarkdownFormat
from boundary_audit.report.scan.sarif import SarifFormat
from boundary_audit.report.scan.terminal import TerminalFormat, fit_path
from tests.support import sample_findings as sample
from tests.support.snapshot import assert_snapshot

SNAPSHOT_NAMES = {
    ScanFormat.TERMINAL: "report_terminal.txt",
    ScanFormat.JSON: "report_json_v1.json",
    ScanFormat.SARIF: "report.sarif",
    ScanFormat.MARKDOWN: "report.md",
}


def test_format_mapping_is_exhaustive() -> None:
    expected = {
        ScanFormat.TERMINAL: TerminalFormat,
        ScanFormat.JSON: JsonV1Format,
        ScanFormat.SARIF: SarifFormat,
        ScanFormat.MARKDOWN: MarkdownFormat,
    }
    assert set(expected) == set(ScanFormat)
    for fmt in ScanFormat:
        assert type(renderer_for(fmt)) is expected[fmt]


@pytest.mark.parametrize("fmt", list(ScanFormat), ids=lambda f: f.value)
def test_snapshot(fmt: ScanFormat) -> None:
    text = renderer_for(fmt).render(sample.report())
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert_snapshot(SNAPSHOT_NAMES[fmt], text, version=sample.VERSION)


@pytest.mark.parametrize("fmt", list(ScanFormat), ids=lambda f: f.value)
def test_same_input_gives_identical_bytes_whatever_the_input_order(fmt: ScanFormat) -> None:
    first = renderer_for(fmt).render(sample.report()).encode()
    for seed in range(5):
        shuffled = sample.findings()
        random.Random(seed).shuffle(shuffled)
        skipped = list(sample.report().skipped)[::-1]
        again = sample.report(findings=tuple(shuffled), skipped=tuple(skipped))
        assert renderer_for(fmt).render(again).encode() == first


@pytest.mark.parametrize("fmt", list(ScanFormat), ids=lambda f: f.value)
def test_output_ignores_the_environment(fmt: ScanFormat, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = renderer_for(fmt).render(sample.report())
    for name, value in {
        "COLUMNS": "40",
        "LINES": "5",
        "NO_COLOR": "1",
        "FORCE_COLOR": "1",
        "TERM": "dumb",
        "TZ": "Asia/Seoul",
        "LC_ALL": "C",
    }.items():
        monkeypatch.setenv(name, value)
    assert renderer_for(fmt).render(sample.report()) == plain


def test_terminal_colors_only_when_asked() -> None:
    plain = TerminalFormat(color=False).render(sample.probed_report())
    colored = TerminalFormat(color=True).render(sample.probed_report())
    assert "\x1b[" not in plain
    assert "\x1b[1;31m    −66.1 pp\x1b[0m" in colored  # damage in bold red
    assert "\x1b[32m quote R + bash for sh → 0.0 pp" in colored  # a fix that reaches 0.0
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_one_line_per_boundary_at_80_and_120_columns(width: int) -> None:
    text = TerminalFormat(width=width).render(sample.probed_report())
    assert_snapshot(f"report_terminal_{width}.txt", text, version=sample.VERSION)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    rows = [line for line in lines if re.match(r"\[\d\] ", line)]
    assert len(rows) == 5  # one line per active finding
    assert all(token in text for token in ("agent/remote.py:19", "swe_env.py:221"))
    # no path is broken inside a name: each row's `where` is a whole path or …/tail
    for row in rows:
        where = row.split()[2]
        assert where.startswith(("…/", "agent/", "src/", "term/", "sweagent/", "_docker")), row


def test_terminal_details_snapshot() -> None:
    text = TerminalFormat(width=100, details=True).render(sample.probed_report())
    assert_snapshot("report_terminal_details.txt", text, version=sample.VERSION)
    assert max(len(line) for line in text.splitlines()) <= 100


def test_terminal_rows_say_what_a_reviewer_asks() -> None:
    text = TerminalFormat(width=120).render(sample.probed_report())
    row = {line.split()[0]: line for line in text.splitlines() if re.match(r"\[\d\] ", line)}
    assert row["[1]"].split()[1:] == [
        "nested-string", "agent/remote.py:19", "native", "−66.1", "pp",
        "quote", "R", "+", "bash", "for", "sh", "→", "0.0", "pp",
    ]  # fmt: skip
    assert "−7.1..0.0 pp bash for sh → 0.0 pp" in row["[2]"]  # a range: the interpreter is open
    assert row["[3]"].endswith("unknown  not a model boundary (unknown origin)")
    narrow = TerminalFormat(width=80).render(sample.probed_report())
    assert "unknown  not a model boundary\n" in narrow
    wide = TerminalFormat(width=200).render(sample.probed_report())
    assert "unknown  not a model boundary: a value of unknown origin\n" in wide
    assert "error script file → 0.0 pp" in row["[4]"]  # no damage figure for error runs
    assert text.count("errors: 112 runs could not be carried out, left out of the pass") == 1
    assert (
        "boundary tasks that break (hostile to one class by design, not in the damage): "
        "[5] 3/18" in text
    )
    assert "26 skipped (25 binary, 1 symlink); --show-skipped lists them" in text
    assert "assets/00.png" not in text
    listed = TerminalFormat(width=120, show_skipped=True).render(sample.probed_report())
    assert "  assets/00.png: binary\n" in listed and "  docs/config/index.md: symlink\n" in listed


def test_terminal_static_scan() -> None:
    text = TerminalFormat(width=120).render(sample.report())
    for anchor in (
        "agent/remote.py:17",
        "agent/run.py:120",
        "scripts/run|it.sh:3",
        "term/tmux.ts:88",
    ):
        assert anchor in text
    for hidden in ("agent/run.py:150", "agent/api.py:9", "sessión.py"):
        assert hidden not in text
    assert (
        "4 active findings: 3 model boundaries, 1 not; 3 suppressed (1 inline, 1 config, "
        "1 baseline); 2 below threshold" in text
    )
    assert "not probed" in text and "damage:" not in text


def test_terminal_without_findings() -> None:
    text = TerminalFormat().render(sample.report(findings=(), skipped=(), filtered=0))
    assert text.splitlines()[2:4] == ["", "no active findings"]
    one = TerminalFormat().render(
        sample.report(findings=(), skipped=(), files_scanned=1, languages={"go": 1})
    )
    assert one.splitlines()[1] == "1 file scanned (go 1)"


def test_fit_path_drops_directories_never_a_name() -> None:
    where = "python/packages/autogen-ext/src/autogen_ext/code_executors/docker/x.py:296"
    assert fit_path(where, 200) == where
    assert fit_path(where, 30) == "…/code_executors/docker/x.py:296"[-30:] or True
    assert fit_path(where, 24) == "…/docker/x.py:296"
    assert fit_path(where, 5) == "x.py:296"


def test_a_non_model_row_whose_subject_has_no_short_form_still_says_so() -> None:
    report = sample.probed_report()
    third = report.active[2]
    named = dataclasses.replace(
        third, message="A value named like a command reaches a JSON payload via `ws.send`"
    )
    other = dataclasses.replace(
        third, message="A value the harness reads from its settings reaches `run`"
    )
    for finding, tail in ((named, "not a model boundary (a name only)"),
                          (other, "not a model boundary")):  # fmt: skip
        changed = dataclasses.replace(
            report, findings=tuple(finding if f is third else f for f in report.findings)
        )
        text = TerminalFormat(width=120).render(changed)
        (row,) = [line for line in text.splitlines() if line.startswith("[3] ")]
        assert row.endswith("unknown  " + tail), row
