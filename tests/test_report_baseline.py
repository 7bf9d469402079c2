"""Baselines: written from a report, read back, matched by fingerprint across line shifts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from boundary_audit.errors import ConfigError, ExitCode, ReportError
from boundary_audit.finding import Finding, Location
from boundary_audit.results.baseline import (
    BASELINE_SCHEMA,
    Baseline,
    apply_baseline,
    load_baseline,
    parse_baseline,
    render_baseline,
    write_baseline,
)
from boundary_audit.results.scan import fingerprint_key
from tests.support import sample_findings as sample


def _active_sample() -> tuple[list[Finding], dict[Location, str]]:
    report = sample.report()
    return [replace(f, suppressed=None) for f in report.findings], dict(report.sink_text)


def test_written_baseline_content() -> None:
    doc = json.loads(render_baseline(sample.report()))
    assert doc["schema"] == BASELINE_SCHEMA and doc["commit"] == sample.SHA
    rows = [(e["path"], e["code"], e["class"], e["sink"], e["count"]) for e in doc["entries"]]
    # inline- and config-suppressed findings are not accepted into a baseline
    assert rows == [
        (
            "agent/remote.py",
            "BA102",
            "nested-string",
            "subprocess.run(['bash', '-c', f'ssh h \"{cmd}\"'])",
            1,
        ),
        ("agent/run.py", "BA101", "shell-string", "subprocess.run(cmd, shell=True)", 2),
        ("scripts/run|it.sh", "BA101", "shell-string", 'eval "$REPLY" `x`', 1),
        (
            "term/tmux.ts",
            "BA202",
            "tty-keystrokes",
            "spawn('tmux', ['send-keys', '-t', pane, keys | x, 'Enter'])",
            1,
        ),
    ]


def test_round_trip_suppresses_exactly_the_recorded_findings(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    write_baseline(sample.report(), path)
    baseline = load_baseline(path)
    assert len(baseline) == 5
    findings, texts = _active_sample()
    out = apply_baseline(findings, texts, baseline)
    kinds = {
        (f.primary.path, f.primary.start_line): f.suppressed.kind if f.suppressed else None
        for f in out
    }
    assert kinds == {
        ("agent/api.py", 9): None,
        ("agent/remote.py", 17): "baseline",
        ("agent/run.py", 120): "baseline",
        ("agent/run.py", 150): "baseline",
        ("scripts/run|it.sh", 3): "baseline",
        ("term/tmux.ts", 88): "baseline",
        ("tools/sessión.py", 33): None,
    }
    assert out[1].suppressed is not None
    assert out[1].suppressed.reason == f"in baseline {path}"


def test_line_shifts_still_match_but_new_sinks_do_not() -> None:
    findings, texts = _active_sample()
    baseline = parse_baseline(render_baseline(sample.report()).encode(), origin="b.json")
    nested = next(f for f in findings if f.code == "BA102")
    moved = replace(nested, primary=replace(nested.primary, start_line=77, end_line=79))
    changed = replace(nested, primary=replace(nested.primary, start_line=90, end_line=90))
    texts[moved.primary] = texts[nested.primary]
    texts[changed.primary] = "subprocess.run(['bash', '-c', f'ssh h2 \"{cmd}\"'])"
    out = apply_baseline([moved, changed], texts, baseline)
    assert [f.suppressed is not None for f in out] == [True, False]


def test_counts_limit_how_many_identical_findings_match() -> None:
    findings, texts = _active_sample()
    run120 = next(f for f in findings if f.primary.start_line == 120)
    key = fingerprint_key(run120, texts[run120.primary])
    extra = replace(run120, primary=replace(run120.primary, start_line=200, end_line=200))
    texts[extra.primary] = texts[run120.primary]
    out = apply_baseline([run120, extra], texts, Baseline("b", {key: 1}))
    assert [f.suppressed is not None for f in out] == [True, False]


def test_already_suppressed_findings_do_not_use_up_the_budget() -> None:
    report = sample.report()
    inline = next(f for f in report.findings if f.suppressed and f.suppressed.kind == "inline")
    key = fingerprint_key(inline, "")
    out = apply_baseline([inline], {}, Baseline("b", {key: 1}))
    assert out[0].suppressed == inline.suppressed


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"nope", "b.json: not a JSON baseline: "),
        (b"[]", "b.json: (top level): expected an object"),
        (b'{"schema": "x"}', "b.json: schema: expected 'boundary-audit-baseline/v1', got 'x'"),
        (b'{"schema": "boundary-audit-baseline/v1"}', "b.json: entries: expected an array"),
        (
            b'{"schema": "boundary-audit-baseline/v1", "entries": [1]}',
            "b.json: entries[0]: expected an object",
        ),
        (
            b'{"schema": "boundary-audit-baseline/v1", "entries": [{"key": "XYZ"}]}',
            "b.json: entries[0].key: expected 24 lowercase hex digits, got 'XYZ'",
        ),
        (
            b'{"schema": "boundary-audit-baseline/v1", "entries": [{"key": "'
            + b"a" * 24
            + b'", "count": 0}]}',
            "b.json: entries[0].count: expected a positive integer, got 0",
        ),
    ],
)
def test_invalid_baselines_are_config_errors(data: bytes, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_baseline(data, origin="b.json")
    assert info.value.message.startswith(message)
    assert info.value.exit_code == ExitCode.INPUT


def test_unreadable_and_unwritable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read baseline"):
        load_baseline(tmp_path / "missing.json")
    with pytest.raises(ReportError, match="cannot write baseline") as info:
        write_baseline(sample.report(), tmp_path / "no" / "such" / "dir.json")
    assert info.value.exit_code == ExitCode.RUN
