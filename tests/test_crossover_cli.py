"""`boundary-audit crossover` end to end: a hand-computed reply set run for real in bwrap, the
study's Table 4, Table 15 and rank-flip claim recomputed by the command, read-back, bad input.

The small reply set: four tasks of four families whose oracle O passes `raw` and fails
`nested`, and whose oracle escaped for the double-quote wrapper E (a backslash before each
`\\ " $ ``) fails `raw` and passes `nested` (the test checks every run). `false` fails both; a
line with `meta.failure` is never run. Model A has two draws, model B none:

    draw   contract   write-file-t3  json-write-t2  git-commit-t1  ssh-nested-t2
    A d0   raw        O              O              O              O
    A d0   disclosed  E              E              E              E
    A d1   raw        O              O              false          (failed: refusal)
    A d1   disclosed  E              O              E              false
    B      raw        O              O              O              O
    B      disclosed  O              O              O              O

Model A, per family (units: the two draws), RR RN NR NN passed of 2:
write-file 2 0 0 2, json-write 2 0 1 1, git-commit 1 0 0 2, ssh-nested 1 0 0 1. So RR 75.0,
RN 0.0, NR 12.5, NN 75.0; family damage −1, −1, −½, −½ (−75.0), compensation 1, ½, 1, ½ (+75.0),
matched gap 0, −½, +½, 0 (0.0), interaction 2, 1, 3/2, 1 (+137.5). Enumerated family-sign p:
damage, compensation, interaction 2/2^4 = .125 (every family one way); gap: two nonzero families
of equal size and opposite sign, p 1. Model B: RR 100, RN 0, NR 100, NN 0; damage and gap −100
(p .125), compensation and interaction 0 (no nonzero family: p 1). Holm over the two: damage
.125, .125 -> .25, .25; compensation .125 (A), 1 (B) -> .25, 1; gap 1 (A), .125 (B) -> 1, .25.
Exact bootstrap of A's damage (family means −1, −1, −½, −½): P(all four drawn from the −1
pair) = 1/16 > 2.5 %, so the interval is [−100.0, −50.0]; LOFO: leaving out a −1 family gives
−2/3, a −½ family −5/6: [−83.3, −66.7]. A's gap (family means 0, −½, +½, 0): P(mean −½) =
1/256 and P(mean −3/8) = 4 · (1/4)^3 · 1/2 = 1/32, together 3.5 % ≥ 2.5 %, so the interval
is [−37.5, +37.5]. Rank flip: B is higher by RR (+25.0 pp = 1 task), A by
NN (+75.0 pp = 3 tasks): one flip of one comparable pair, a single-task margin.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.tasks import load_tasks
from tests.test_metrics_study import TABLE4, TABLE15, TABLE15_FAMILIES, crossover_runs

TASKS = ("write-file-t3", "json-write-t2", "git-commit-t1", "ssh-nested-t2")
SELECT = ",".join(TASKS)


def escaped(command: str) -> str:
    """`command` written for the inside of bash's double quotes."""
    return "".join("\\" + ch if ch in '\\"$`' else ch for ch in command)


def line(task: str, reply: str, model: str, contract: str, draw: int | None, **meta: Any) -> str:
    rid = f"{contract}-d{draw}" if draw is not None else contract
    m = {**({"draw": draw} if draw is not None else {}), **meta}
    obj = {"task_id": task, "reply": reply, "reply_id": rid, "model": model,
           "contract": contract, "meta": m}  # fmt: skip
    return json.dumps(obj) + "\n"


def small_reply_file(path: Path) -> Path:
    oracle = {t.id: t.oracle for t in load_tasks(SELECT)}
    o = [oracle[t] for t in TASKS]
    e = [escaped(oracle[t]) for t in TASKS]
    plan = {
        ("A", "raw", 0): o,
        ("A", "disclosed", 0): e,
        ("A", "raw", 1): [o[0], o[1], "false", None],
        ("A", "disclosed", 1): [e[0], o[1], e[2], "false"],
        ("B", "raw", None): o,
        ("B", "disclosed", None): o,
    }
    text = []
    for (model, contract, draw), replies in plan.items():
        for task, reply in zip(TASKS, replies, strict=True):
            if reply is None:
                text.append(line(task, "", model, contract, draw, failure="refusal"))
            else:
                text.append(line(task, reply, model, contract, draw))
    path.write_text("".join(text))
    return path


def crossover(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["crossover", *args])
    out, err = capsys.readouterr()
    return code, out, err


def effect(config: dict[str, Any], name: str) -> tuple[Any, ...]:
    e = config["effects"][name]
    return (e["points"], e["ci"], e["sign_test"]["p_exact"], e["p_holm_exact"], e["lofo"])


@pytest.mark.bwrap
def test_a_hand_computed_crossover_run_for_real(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = small_reply_file(tmp_path / "replies.jsonl")
    out = tmp_path / "x.json"
    code, stdout, err = crossover(
        ["-r", str(replies), "--select", SELECT, "--sandbox", "bwrap", "--format", "json",
         "--no-timings", "-o", str(out)], capsys,
    )  # fmt: skip
    assert (code, stdout) == (0, ""), err
    assert err.splitlines()[-1] == (
        "crossover: 2 configurations through nested: damage -100.0..-75.0, compensation "
        "0.0..+75.0, matched gap -100.0..0.0 pp, 1 rank flips of 1 comparable pairs "
        "[sandbox bwrap]"
    )
    doc = json.loads(out.read_text())
    assert doc["schema"] == "boundary-audit/crossover/v1"
    # Every run did what the module docstring says it does.
    outcome = {
        (r["model"], r["contract"], r.get("draw"), r["transport"], r["task_id"]): (
            r["passed"], r["reason"].startswith("failed reply: "), r["exit_code"] is None
        )
        for r in doc["runs"]
    }  # fmt: skip
    assert len(doc["runs"]) == 48
    a_d1 = {t: outcome[("A", "raw", 1, "raw", t)][0] for t in TASKS}
    assert a_d1 == dict(zip(TASKS, (True, True, False, False), strict=True))
    failed = outcome[("A", "raw", 1, "nested", "ssh-nested-t2")]
    assert failed == (False, True, True)  # never run: no exit code, reason "failed reply: ..."
    refused = [r for r in doc["runs"] if r["reason"].startswith("failed reply")]
    assert {r["reason"] for r in refused} == {"failed reply: refusal"}
    assert all(not r["reason"].startswith("error: ") for r in doc["runs"])
    for t in TASKS:
        assert outcome[("A", "raw", 0, "raw", t)][0] is True
        assert outcome[("A", "raw", 0, "nested", t)][0] is False
        assert outcome[("A", "disclosed", 0, "raw", t)][0] is False
        assert outcome[("A", "disclosed", 0, "nested", t)][0] is True
        assert outcome[("B", "disclosed", None, "raw", t)][0] is True
        assert outcome[("B", "disclosed", None, "nested", t)][0] is False
    # Configurations in the order their runs first appear: the file's groups run in (contract,
    # draw) order, and B's replies have no draw, so its group `replies.jsonl#raw` runs first.
    b, a = doc["configurations"]
    assert (a["model"], b["model"], a["draws"], b["draws"], a["tasks"]) == ("A", "B", [0, 1],
                                                                          [None], 4)  # fmt: skip
    assert {n: (c["passed"], c["total"], c["pass_rate"]) for n, c in a["cells"].items()} == {
        "RR": (6, 8, 75.0), "RN": (0, 8, 0.0), "NR": (1, 8, 12.5), "NN": (6, 8, 75.0),
    }  # fmt: skip
    assert {n: c["pass_rate"] for n, c in b["cells"].items()} == {
        "RR": 100.0, "RN": 0.0, "NR": 100.0, "NN": 0.0,
    }  # fmt: skip
    assert effect(a, "damage") == (-75.0, [-100.0, -50.0], "1/8", "1/4", [-83.3, -66.7])
    assert effect(a, "compensation") == (75.0, [50.0, 100.0], "1/8", "1/4", [66.7, 83.3])
    assert effect(a, "matched_gap")[0:4] == (0.0, [-37.5, 37.5], "1", "1")
    assert effect(a, "interaction")[0] == 137.5
    assert a["effects"]["interaction"]["sign_test"]["p_exact"] == "1/8"
    assert effect(b, "damage")[0:4] == (-100.0, [-100.0, -100.0], "1/8", "1/4")
    assert effect(b, "compensation")[0:4] == (0.0, [0.0, 0.0], "1", "1")
    assert effect(b, "matched_gap")[0:4] == (-100.0, [-100.0, -100.0], "1/8", "1/4")
    assert b["effects"]["compensation"]["sign_test"] == {
        "negative": 0, "positive": 0, "zero": 4, "p": 1.0, "p_exact": "1",
    }  # fmt: skip
    assert a["per_draw"] == [
        {"draw": 0, "cells": {"RR": 100.0, "RN": 0.0, "NR": 0.0, "NN": 100.0},
         "effects": {"damage": -100.0, "compensation": 100.0, "matched_gap": 0.0,
                     "interaction": 200.0}},
        {"draw": 1, "cells": {"RR": 50.0, "RN": 0.0, "NR": 25.0, "NN": 50.0},
         "effects": {"damage": -50.0, "compensation": 50.0, "matched_gap": 0.0,
                     "interaction": 75.0}},
    ]  # fmt: skip
    assert a["spread"]["NN"] == [50.0, 100.0] and b["spread"] == {}
    assert doc["rank_flips"] == [
        {"transport": "nested", "pairs": 1, "comparable": 1, "flips": [
            {"first": "B", "second": "A", "raw_margin_points": 25.0,
             "boundary_margin_points": -75.0, "raw_margin_tasks": 1.0,
             "boundary_margin_tasks": -3.0, "single_task": True}]},
    ]  # fmt: skip
    # The Markdown from the stored runs (no replay) prints the same numbers, Table-15 style.
    code, md, _ = crossover(["--runs", str(out), "--format", "markdown"], capsys)
    assert code == 0
    assert "| A | −75.0 [−100.0,−50.0] | .125000 | .250000 | +75.0 [+50.0,+100.0] | .125000 " \
           "| .250000 |" in md.splitlines()  # fmt: skip
    assert "| B | −100.0 [−100.0,−100.0] | .125000 | .250000 | 0.0 [0.0,0.0] | 1.000000 " \
           "| 1.000000 |" in md.splitlines()  # fmt: skip
    assert "| A | 4 tasks × 2 draws | 75.0 | 0.0 | 12.5 | 75.0 | −75.0 | +75.0 | +137.5 | 0.0 |" \
        in md.splitlines()  # fmt: skip


def study_runs(path: Path) -> Path:
    """A probe report whose runs are Table 15's per-family breakdown of the eight configurations."""
    runs = []
    for model, families in TABLE15_FAMILIES.items():
        runs += crossover_runs(model, [[f[i] for f in families] for i in range(4)])
    for r in runs:
        r.update(tags=[], reason="ok" if r["passed"] else "x", exit_code=0, timed_out=False)
    path.write_text(json.dumps({"schema": "boundary-audit/probe/v1", "sandbox": "none",
                                "runs": runs}))  # fmt: skip
    return path


def table_rows(markdown: str, heading: str) -> dict[str, list[str]]:
    """Model -> its cells, of the first table after the heading that starts with `heading`."""
    lines = markdown.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(heading))
    rows: dict[str, list[str]] = {}
    for x in lines[start + 1 :]:
        if x.startswith("## "):
            break
        if x.startswith("| ") and not x.startswith("| Model"):
            cells = [c.strip() for c in x.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.parametrize("bootstrap", [[], ["--resamples", "10000", "--seed", "0"]])
def test_the_study_tables_recomputed_by_the_command(
    bootstrap: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = study_runs(tmp_path / "study.json")
    code, md, err = crossover(["--runs", str(runs), "--format", "markdown", *bootstrap], capsys)
    assert code == 0, err
    table15 = table_rows(md, "## Family-sign tests through `nested`")
    expected = {
        m: [f"{d[0]} {d[1]}", d[2], d[3], f"{c[0]} {c[1]}", c[2], c[3]]
        for m, (d, c) in TABLE15.items()
    }
    assert table15 == expected
    table4 = table_rows(md, "## All four crossover cells through `nested`")
    assert {m: [r[1], r[2], r[3], r[4], r[5], r[6], r[8]] for m, r in table4.items()} == {
        m: list(v) for m, v in TABLE4.items()
    }
    # The abstract: "one reversal among 26 comparable pairs is unambiguous and four more sit on
    # single-task margins" (RR order against NN order of the eight configurations).
    assert "5 of 26 comparable pairs (28 pairs;" in md
    lines = [x for x in md.splitlines() if re.match(r"\| \S.* \| (yes|no) \|$", x)]
    assert sorted(x.rsplit("|", 2)[1].strip() for x in lines) == ["no", "yes", "yes", "yes", "yes"]
    assert "| Gemini-3.1-Pro | GPT-5.6-sol | +3.6 | +10.7 | 2 / 6 | no |" in lines


def test_the_json_reads_back_to_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = study_runs(tmp_path / "study.json")
    first = tmp_path / "first.json"
    assert crossover(["--runs", str(runs), "--format", "json", "-o", str(first)], capsys)[0] == 0
    again = [crossover(["--runs", str(p), "--format", "markdown"], capsys)[1]
             for p in (runs, first)]  # fmt: skip
    strip = [re.sub(r"^- Regenerate: .*$", "", x, flags=re.M) for x in again]
    assert strip[0] == strip[1]


@pytest.mark.parametrize(
    ("lines", "extra", "code", "message"),
    [
        (
            [("A", "raw", 0)],
            [],
            ExitCode.INPUT,
            "boundary-audit: error: no model has replies under both the raw and the disclosed "
            "contract (A: raw); a crossover needs both",
        ),
        (
            [("A", "raw", 0), ("A", "raw", 1), ("A", "disclosed", 0)],
            [],
            ExitCode.INPUT,
            "boundary-audit: error: A: the raw replies have draws [0, 1] and the disclosed ones "
            "[0]; the crossover pairs replies by (task, draw)",
        ),
        (
            [("A", "raw", 0), ("A", "disclosed", 0)],
            ["--transport", "raw"],
            ExitCode.USAGE,
            "boundary-audit: error: a crossover needs a boundary transport besides 'raw' "
            "(e.g. --transport nested)",
        ),
        (
            [("A", "raw", 0), ("A", "disclosed", 0)],
            ["--runs", "x.json"],
            ExitCode.USAGE,
            "boundary-audit: error: give reply files (--replies) or run reports (--runs), not "
            "both or none",
        ),
    ],
)
def test_bad_input_is_one_line_before_anything_runs(
    lines: list[tuple[str, str, int]],
    extra: list[str],
    code: int,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(line("write-file-t0", "true", m, c, d) for m, c, d in lines))
    got, out, err = crossover(["-r", str(path), "--select", "write-file-t0", *extra], capsys)
    assert (got, out) == (code, "")
    assert err.splitlines()[0] == message
    assert "replies run in" not in err  # nothing started


def test_runs_that_are_not_a_run_report_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "scan.json"
    bad.write_text('{"schema": "boundary-audit/v1", "findings": []}')
    code, _, err = crossover(["--runs", str(bad)], capsys)
    assert code == ExitCode.INPUT
    assert err.splitlines()[0] == (
        f"boundary-audit: error: {bad}: schema 'boundary-audit/v1' is not one of "
        "boundary-audit/probe/v1, boundary-audit/crossover/v1"
    )


def test_every_format_has_a_renderer_and_renders_the_same_bytes_twice(tmp_path: Path) -> None:
    from boundary_audit.pipelines.crossover import read_runs
    from boundary_audit.report.crossover import CrossoverFormat, renderer_for
    from boundary_audit.report.crossover.json import CrossoverJson
    from boundary_audit.report.crossover.markdown import CrossoverMarkdown
    from boundary_audit.report.crossover.terminal import CrossoverTerminal
    from boundary_audit.report.html import CrossoverHtml
    from boundary_audit.results.crossover import build_crossover

    records, _ = read_runs(study_runs(tmp_path / "study.json"))
    report = build_crossover(records, transports=("nested",))
    expected = {
        CrossoverFormat.TERMINAL: CrossoverTerminal, CrossoverFormat.JSON: CrossoverJson,
        CrossoverFormat.MARKDOWN: CrossoverMarkdown, CrossoverFormat.HTML: CrossoverHtml,
    }  # fmt: skip
    assert set(expected) == set(CrossoverFormat)
    for fmt, kind in expected.items():
        renderer = renderer_for(fmt)
        assert type(renderer) is kind
        text = renderer.render(report)
        assert text.endswith("\n") and text == renderer_for(fmt).render(report)
