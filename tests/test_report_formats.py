"""Renderers over the shared hand-built report: snapshots, determinism, purity, the format map."""

from __future__ import annotations

import random
import re

import pytest

from boundary_audit.report.scan import ScanFormat, renderer_for
from boundary_audit.report.scan.json_v1 import JsonV1Format
from boundary_audit.report.scan.markdown import MarkdownFormat
from boundary_audit.report.scan.sarif import SarifFormat
from boundary_audit.report.scan.terminal import TerminalFormat
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
    plain = TerminalFormat(color=False).render(sample.report())
    colored = TerminalFormat(color=True).render(sample.report())
    assert "\x1b[" not in plain
    assert "\x1b[1;31mhigh" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_terminal_lists_only_active_findings_and_counts_the_rest() -> None:
    text = TerminalFormat(width=160).render(sample.report())
    for anchor in (
        "agent/remote.py:17-19@3ea751c",
        "agent/run.py:120@3ea751c",
        "scripts/run|it.sh:3@3ea751c",
        "term/tmux.ts:88-90@3ea751c",
    ):
        assert anchor in text
    assert "measured: nested (oracle): 21/56 vs raw 56/56, -62.5 pp" in text
    for hidden in ("agent/run.py:150", "agent/api.py:9", "sessión.py"):
        assert hidden not in text
    assert (
        "4 active (2 high, 1 medium, 1 info); 3 suppressed (1 inline, 1 config, 1 baseline); "
        "3 model-controlled; 14 files scanned (python 9, shell 2, typescript 3)\n"
    ) in text
    assert text.endswith(
        "skipped (2):\n  assets/logo.png: binary\n  data/huge.json: too large (3.1 MB > 2 MB)\n"
    )


def test_terminal_without_findings() -> None:
    text = TerminalFormat().render(sample.report(findings=(), skipped=(), filtered=0))
    assert text.splitlines()[2:] == [
        "no active findings",
        "0 active; 0 suppressed; 0 model-controlled; 14 files scanned (python 9, shell 2, "
        "typescript 3)",
    ]
    one = TerminalFormat().render(
        sample.report(findings=(), skipped=(), files_scanned=1, languages={"go": 1})
    )
    assert one.splitlines()[-1] == (
        "0 active; 0 suppressed; 0 model-controlled; 1 file scanned (go 1)"
    )


def test_terminal_caps_the_skipped_list() -> None:
    from boundary_audit.finding import Skipped

    many = tuple(Skipped(f"bin/{i:02d}.so", "binary") for i in range(23))
    text = TerminalFormat().render(sample.report(skipped=many))
    assert "  bin/19.so: binary\n" in text and "bin/20.so" not in text
    assert "  … and 3 more (see --format json)\n" in text
