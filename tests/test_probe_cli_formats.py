"""The probe renderers on a hand-built report: exact Markdown and terminal text, the JSON
numbers, escaping, multi-model cells, and the format mapping."""

from __future__ import annotations

import json

import pytest

from boundary_audit.record import RunRecord, SkippedTransport
from boundary_audit.report import probe as probe_report
from boundary_audit.report.probe import ProbeFormat
from boundary_audit.report.probe.json import ProbeJsonFormat
from boundary_audit.report.probe.markdown import ProbeMarkdownFormat, cell_text, code
from boundary_audit.report.probe.terminal import ProbeTerminalFormat
from boundary_audit.results.probe import ProbeReport, summarize, summary_line


def rec(task: str, transport: str, passed: bool, reason: str = "ok", **kw: object) -> RunRecord:
    family, tier = task.rsplit("-t", 1)
    fields: dict[str, object] = {
        "task_id": task, "family": family, "tier": int(tier), "core": True, "tags": (),
        "transport": transport, "reply_set": "oracle", "reply_id": "oracle", "model": None,
        "contract": None, "passed": passed, "reason": reason,
        "exit_code": 0 if passed else 1, "timed_out": False, "duration_s": 0.0123,
    }  # fmt: skip
    fields.update(kw)
    return RunRecord(**fields)  # type: ignore[arg-type]


RECORDS = (
    rec("a-t0", "raw", True),
    rec("a-t1", "raw", True),
    rec("a-t2", "raw", True),
    rec("b-t0", "raw", True),
    rec("a-t0", "nested", True),
    rec("a-t1", "nested", False, 'a|b\n"x"'),
    rec("a-t2", "nested", False, "error: tmux died"),
    rec("b-t0", "nested", False, "timed out", timed_out=True, exit_code=None),
)


def report(records: tuple[RunRecord, ...] = RECORDS) -> ProbeReport:
    return ProbeReport(
        tool_version="9.9.9", command="boundary-audit probe --transport nested --format markdown",
        sandbox="bwrap", tasks=("a-t0", "a-t1", "a-t2", "b-t0"), reply_sets=("oracle",),
        transports=("raw", "nested"),
        notes=("transport 'raw' added: damage is measured against it",),
        skipped=(SkippedTransport("docker", "engine not running"),), records=records,
        summary=summarize(records),
    )  # fmt: skip


def test_summary_counts_rates_and_damage() -> None:
    s = report().summary
    assert (s.runs, s.passed, s.errors, s.timed_out) == (8, 5, 1, 1)
    nested = s.cells[1]
    assert (nested.passed, nested.total, nested.errors, nested.timed_out) == (1, 4, 1, 1)
    # family-weighted: a 1/3, b 0/1 -> 1/6, not the plain 1/4
    assert str(nested.rate) == "1/6"
    (d,) = s.damage
    assert (str(d.effect), d.pass_to_fail, d.fail_to_pass) == ("-5/6", ("a-t1", "a-t2", "b-t0"), ())
    assert [(f, str(v)) for f, v in d.families] == [("a", "-2/3"), ("b", "-1")]


def test_markdown_is_exact() -> None:
    assert ProbeMarkdownFormat().render(report()) == MARKDOWN


MARKDOWN = """\
# boundary-audit probe report

- Regenerate: `boundary-audit probe --transport nested --format markdown`
- Tool: boundary-audit 9.9.9; sandbox: bwrap
- Tasks: 4; reply sets: oracle; transports: raw, nested
- Runs: 8; passed: 5; errors: 1; timed out: 1
- Note: transport 'raw' added: damage is measured against it

## Pass rate per reply set and transport

Pass rates weight every family equally; damage is pass(transport) − pass(raw) in percentage points.

| Reply set | Transport | Passed | Pass rate (%) | Damage vs raw (pp) | Errors | Timed out |
|---|---|---:|---:|---:|---:|---:|
| oracle | raw | 4/4 | 100.0 | — | 0 | 0 |
| oracle | nested | 1/4 | 16.7 | -83.3 | 1 | 1 |

## Pass rate per family: reply set `oracle`

| Family | raw | nested |
|---|---:|---:|
| a | 3/3 (100.0) | 1/3 (33.3) |
| b | 1/1 (100.0) | 0/1 (0.0) |

## Damage against raw per family (pp)

| Family | oracle · nested |
|---|---:|
| a | -66.7 |
| b | -100.0 |

## What breaks: passed on raw, failed through the boundary (3)

| Task | Reply set | Transport | Reason |
|---|---|---|---|
| a-t1 | oracle | nested | a\\|b "x" |
| a-t2 | oracle | nested | error: tmux died |
| b-t0 | oracle | nested | timed out |

## Transports not run in this sandbox

| Transport | Why |
|---|---|
| docker | engine not running |
"""


def test_terminal_is_exact_and_plain_without_color() -> None:
    text = ProbeTerminalFormat(width=100).render(report())
    assert text.splitlines()[:2] == [
        "boundary-audit 9.9.9: probe in sandbox bwrap",
        "4 tasks, 8 runs: 5 passed, 1 errors, 1 timed out",
    ]
    assert (
        "│ oracle    │ nested    │    1/4 │        16.7 │              -83.3 │      1 │         1 │"
        in text
    )
    assert text.endswith(
        "note: transport 'raw' added: damage is measured against it\n"
        "skipped transport docker: engine not running\n"
    )
    assert "\x1b[" not in text
    assert "\x1b[" in ProbeTerminalFormat(color=True).render(report())


def test_json_numbers_and_timings() -> None:
    doc = json.loads(ProbeJsonFormat().render(report()))
    assert doc["runs"][0]["duration_s"] == 0.012
    assert doc["summary"]["cells"][1]["pass_rate"] == 16.7
    assert doc["summary"]["damage"][0]["points"] == -83.3
    assert doc["summary"]["damage"][0]["families"] == [
        {"family": "a", "points": -66.7},
        {"family": "b", "points": -100.0},
    ]
    assert doc["skipped"] == [{"transport": "docker", "reason": "engine not running"}]
    assert "duration_s" not in ProbeJsonFormat(timings=False).render(report())


def test_multi_model_files_get_one_cell_per_model() -> None:
    records = tuple(
        rec("a-t0", t, p, reply_set="r.jsonl", reply_id=f"{m}-{t}", model=m)
        for t in ("raw", "nested")
        for m, p in (("m1", True), ("m2", t == "raw"))
    )
    s = summarize(records)
    assert [(c.reply_set, c.transport, c.passed) for c in s.cells] == [
        ("r.jsonl:m1", "raw", 1), ("r.jsonl:m2", "raw", 1),
        ("r.jsonl:m1", "nested", 1), ("r.jsonl:m2", "nested", 0),
    ]  # fmt: skip
    assert [(d.reply_set, str(d.effect)) for d in s.damage] == [
        ("r.jsonl:m1", "0"),
        ("r.jsonl:m2", "-1"),
    ]
    md = ProbeMarkdownFormat().render(report(records))
    assert "| a-t0 | r.jsonl | nested | ok |" in md  # the broken run, under its file's name


def test_summary_line() -> None:
    assert summary_line(report()) == (
        "probed 4 tasks: 5/8 runs passed, 1 errors, 1 timed out, nested -83.3 pp (oracle) "
        "[sandbox bwrap]"
    )


def test_empty_run_renders() -> None:
    empty = report(())
    assert "Runs: 0; passed: 0" in ProbeMarkdownFormat().render(empty)
    assert json.loads(ProbeJsonFormat().render(empty))["summary"]["cells"] == []
    assert ProbeTerminalFormat().render(empty).startswith("boundary-audit 9.9.9")


@pytest.mark.parametrize("fmt", list(ProbeFormat))
def test_every_format_has_a_renderer(fmt: ProbeFormat) -> None:
    text = probe_report.renderer_for(fmt).render(report())
    assert text.endswith("\n") and text == probe_report.renderer_for(fmt).render(report())


def test_markdown_helpers_escape() -> None:
    assert cell_text("a|b\\c\nd") == "a\\|b\\\\c d"
    assert code("x") == "`x`" and code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"
