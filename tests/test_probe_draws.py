"""`probe` on a reply file with draws: one cell per draw, each draw's rate and their spread.

A file without draws prints what it printed before draws existed (no `draw` key in its runs,
no `draws` in its summary); test_probe_cli.py pins that document's exact keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.tasks import load_tasks

pytestmark = pytest.mark.bwrap
TASK = "write-file-t3"


def test_draws_are_cells_with_their_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle = load_tasks(TASK)[0].oracle
    path = tmp_path / "r.jsonl"
    path.write_text("".join(
        json.dumps({"task_id": TASK, "reply": reply, "reply_id": f"raw-d{d}", "model": "m",
                    "contract": "raw", "meta": {"draw": d}}) + "\n"
        for d, reply in ((0, oracle), (1, "false"))
    ))  # fmt: skip
    out = tmp_path / "p.json"
    code = cli.main(["probe", "-r", str(path), "--select", TASK, "--sandbox", "bwrap",
                     "--format", "json", "--no-timings", "-o", str(out)])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["reply_sets"] == ["r.jsonl#raw-d0", "r.jsonl#raw-d1"]
    first = doc["runs"][0]
    assert list(first)[6:10] == ["reply_set", "reply_id", "draw", "model"]
    assert [(r["reply_set"], r["draw"], r["passed"]) for r in doc["runs"]] == [
        ("r.jsonl#raw-d0", 0, True), ("r.jsonl#raw-d1", 1, False),
    ]  # fmt: skip
    assert doc["summary"]["draws"] == [
        {"reply_set": "r.jsonl#raw", "transport": "raw",
         "draws": [
             {"draw": 0, "reply_set": "r.jsonl#raw-d0", "passed": 1, "total": 1,
              "pass_rate": 100.0},
             {"draw": 1, "reply_set": "r.jsonl#raw-d1", "passed": 0, "total": 1,
              "pass_rate": 0.0}],
         "mean": 50.0, "low": 0.0, "high": 100.0, "spread_points": 100.0},
    ]  # fmt: skip
    code = cli.main(["probe", "-r", str(path), "--select", TASK, "--sandbox", "bwrap",
                     "--format", "markdown"])  # fmt: skip
    md, _ = capsys.readouterr()
    assert "| r.jsonl#raw | raw | d0 100.0, d1 0.0 | 50.0 | 0.0–100.0 | 100.0 |" in md.splitlines()


def test_a_file_without_draws_has_no_draw_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"task_id": TASK, "reply": "false"}) + "\n")
    out = tmp_path / "p.json"
    code = cli.main(["probe", "-r", str(path), "--select", TASK, "--sandbox", "bwrap",
                     "--format", "json", "--no-timings", "-o", str(out)])  # fmt: skip
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert code == 0 and "draw" not in doc["runs"][0]
    assert list(doc["summary"]) == ["runs", "passed", "errors", "timed_out", "cells", "damage"]
