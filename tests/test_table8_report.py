"""The Table-8 report end to end on a user-added adapter: measured numbers, byte-identical
renders across runs, the exact Markdown row and JSON shape, and the CLI's files and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit.cli import main
from boundary_audit.errors import ExitCode
from boundary_audit.pipelines.table8 import Table8Options, build_table8
from boundary_audit.report.table8.json import Table8Json
from boundary_audit.report.table8.markdown import Table8Markdown
from boundary_audit.report.table8.terminal import Table8Terminal
from boundary_audit.results.table8 import SCHEMA, Table8Report

TOY = """\
schema = 1
id = "toy"
name = "Toy"
repository = "https://example.invalid/toy.git"
commit = "0123456"

[study]
contract = "raw"
anchor = "toy.py:1--2"
observed = "string pasted into bash -c"

[[paths]]
id = "nested"
title = "R between double quotes, parsed twice"
contract = "raw"
boundary_class = "nested-string"
parse_layers = ["bash -c", "bash -c again"]
observed = "R pasted between double quotes"
fix = "shlex.quote at the interpolation point"
marked = "a mark"
transport = { name = "nested" }

[[paths]]
id = "escaped"
row = false
title = "the same with shlex.quote"
contract = "raw"
boundary_class = "nested-string"
parse_layers = ["bash -c", "bash -c again"]
observed = "R quoted then pasted"
fix = "none needed"
transport = { name = "nested-escaped" }
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("adapters") / "toy.toml"
    path.write_text(TOY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reports(toy: Path) -> tuple[Table8Report, Table8Report]:
    options = Table8Options(
        systems=("toy",),
        adapter_files=(toy,),
        select="write-file",
        static=False,
        command="boundary-audit table8 toy",
    )
    return build_table8(options), build_table8(options)


def test_measured_damage_through_the_nested_path(reports: tuple[Table8Report, ...]) -> None:
    report = reports[0]
    (row,) = report.rows
    (variant,) = report.variants
    assert (row.system, row.path, row.transport) == ("toy", "nested", "nested")
    oracle, naive = row.measures
    assert (
        oracle.reply_set,
        oracle.tasks,
        oracle.passed_raw,
        oracle.passed_boundary,
        oracle.damage_pp,
    ) == ("oracle", 4, 4, 1, -75.0)
    assert oracle.broken == ("write-file-t1", "write-file-t2", "write-file-t3")
    assert oracle.reasons["write-file-t3"] == (
        '"out.txt": first difference at byte 15 (got 80 bytes, expected 57)'
    )
    assert (naive.passed_raw, naive.passed_boundary, naive.damage_pp) == (1, 0, -25.0)
    assert [(m.passed_raw, m.passed_boundary) for m in variant.measures] == [(4, 4), (1, 1)]
    facts = {f.probe: f.outcome for f in row.facts}
    assert (facts["quoting"], facts["operators"], facts["tty"]) == (
        "missing",
        "active",
        "unexpected",
    )


def test_renders_are_byte_identical_across_runs(reports: tuple[Table8Report, ...]) -> None:
    first, second = reports
    for renderer in (Table8Json(), Table8Markdown(), Table8Terminal(width=160)):
        assert renderer.render(first) == renderer.render(second)


def test_markdown_row_and_json_shape(reports: tuple[Table8Report, ...]) -> None:
    md = Table8Markdown().render(reports[0])
    assert md.startswith("# Table 8, measured: command boundaries of the audited agent systems\n")
    assert "    boundary-audit table8 toy\n" in md
    row = next(line for line in md.splitlines() if line.startswith("| Toy"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[0] == "Toy ⚑" and cells[1] == "raw"
    assert cells[2] == "no anchor in this repository"
    assert cells[3].startswith("R pasted between double quotes. Probes vs bash -c: cwd='', ")
    assert cells[3].endswith("no canary from quoting, shell")
    assert cells[4] == "2 shell parses: bash -c → bash -c again"
    assert cells[5] == "oracle −75.0 pp (4/4 → 1/4); naive −25.0 pp (1/4 → 0/4)"
    assert cells[6] == "oracle: write-file −75.0"
    assert "## Variants (measured, not table rows)" in md and md.endswith("- Fix: none needed\n")
    doc = json.loads(Table8Json().render(reports[0]))
    assert list(doc) == [
        "schema",
        "title",
        "tool",
        "command",
        "sandbox",
        "tasks",
        "reply_sets",
        "baseline",
        "probes",
        "baseline_facts",
        "notes",
        "rows",
        "variants",
    ]
    assert doc["schema"] == SCHEMA == "boundary-audit/table8/v1"
    assert doc["tasks"] == {"select": "write-file", "count": 4, "core": 4}
    measure = doc["rows"][0]["measures"][0]
    assert {k: measure[k] for k in ("tasks", "passed_raw", "passed_boundary", "damage_pp")} == {
        "tasks": 4,
        "passed_raw": 4,
        "passed_boundary": 1,
        "damage_pp": -75.0,
    }
    assert doc["rows"][0]["static"] is None and doc["variants"][0]["path"] == "escaped"


def test_cli_writes_markdown_and_json(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    code = main(
        [
            "table8",
            "toy",
            "--adapters",
            str(toy),
            "--select",
            "write-file-t0",
            "--no-static",
            "--no-probes",
            "--output-dir",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.OK
    assert err.splitlines()[-1] == (
        "table8: 1 rows, 1 variants; damage (oracle, pp): toy:nested +0.0; 0 errored runs"
    )
    doc = json.loads((out / "table8.json").read_text(encoding="utf-8"))
    assert doc["command"] == (
        f"boundary-audit table8 toy --adapters {toy} --select "
        f"write-file-t0 --no-static --no-probes --output-dir {out}"
    )
    assert (out / "table8.md").read_text(encoding="utf-8").startswith("# Table 8, measured")


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (
            ["--repo-dir", "toy"],
            ExitCode.USAGE,
            "boundary-audit: error: --repo-dir 'toy': expected SYSTEM=VALUE",
        ),
        (
            ["--commit", "nope=abc"],
            ExitCode.USAGE,
            "boundary-audit: error: --commit nope=...: no such system among toy",
        ),
        (
            ["--select", "no-such-task"],
            ExitCode.USAGE,
            "boundary-audit: error: --select 'no-such-task' matches no task",
        ),
    ],
)
def test_cli_input_errors(
    toy: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    assert main(["table8", "toy", "--adapters", str(toy), "--no-probes", *argv]) == code
    assert capsys.readouterr().err.splitlines()[0] == message


def _harness_report(folder: Path) -> Path:
    """A `harness compare` report for toy: write-file-t0..t3, harness breaks t2 (oracle)."""
    runs = []
    for transport in ("raw", "harness:toy", "toy:nested"):
        for tier in range(4):
            for reply_set in ("oracle", "naive"):
                passed = reply_set == "oracle" and not (transport == "harness:toy" and tier == 2)
                runs.append(
                    {
                        "task_id": f"write-file-t{tier}",
                        "family": "write-file",
                        "tier": tier,
                        "core": True,
                        "transport": transport,
                        "reply_set": reply_set,
                        "reply_id": reply_set,
                        "passed": passed,
                        "reason": "ok" if passed else '"out.txt" is missing',
                        "status": "executed",
                        "detail": "executed",
                        "exit_code": 0,
                        "timed_out": False,
                    }
                )
    doc = {
        "schema": "boundary-audit/harness/v1",
        "command": "boundary-audit harness compare toy --against adapter",
        "system": {"name": "toy", "packages": ["toy==1.0"], "python": "3.11.7"},
        "selection": "write-file (4 tasks)",
        "measurements": [
            {"transport": "raw", "role": "baseline"},
            {"transport": "harness:toy", "role": "harness"},
        ],
        "comparisons": [
            {"against": "toy:nested", "compared": 8, "agreeing": 7, "unexplained": 1},
            {"against": "raw", "compared": 8, "agreeing": 7, "unexplained": 0},
        ],
        "runs": runs,
    }
    folder.mkdir()
    (folder / "toy.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "other.json").write_text('{"schema": "something/else"}', encoding="utf-8")
    return folder


def test_harness_reports_add_the_real_harness_column(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _harness_report(tmp_path / "harness")
    out = tmp_path / "reports"
    code = main(
        [
            "table8",
            "toy",
            "--adapters",
            str(toy),
            "--select",
            "write-file-t0",
            "--no-static",
            "--no-probes",
            "--harness-reports",
            str(folder),
            "--output-dir",
            str(out),
        ]
    )
    capsys.readouterr()
    assert code == ExitCode.OK
    doc = json.loads((out / "table8.json").read_text(encoding="utf-8"))
    assert doc["command"].endswith(f"--harness-reports {folder} --output-dir {out}")
    row, variant = doc["rows"][0], doc["variants"][0]
    assert row["harness_check"] == {
        "report": "toy.json",
        "command": "boundary-audit harness compare toy --against adapter",
        "driver": "toy==1.0 (Python 3.11.7)",
        "transport": "harness:toy",
        "selection": "write-file (4 tasks)",
        "compared": 8,
        "agreeing": 7,
        "unexplained": 1,
    }
    oracle = row["harness"][0]
    assert (
        oracle["tasks"],
        oracle["passed_raw"],
        oracle["passed_boundary"],
        oracle["damage_pp"],
        oracle["broken"],
    ) == (4, 4, 3, -25.0, ["write-file-t2"])
    assert variant["harness"] == [] and variant["harness_check"] is None
    md = (out / "table8.md").read_text(encoding="utf-8")
    header = next(line for line in md.splitlines() if line.startswith("| System"))
    assert header.split(" | ")[6] == "Damage through the real harness (agreement with this path)"
    cells = next(line for line in md.splitlines() if line.startswith("| Toy")).split(" | ")
    assert cells[6] == (
        "oracle −25.0 pp (4/4 → 3/4); naive 0.0 pp (0/4 → 0/4); agrees on 7/8 runs (1 unexplained)"
    )


def test_a_broken_harness_report_is_a_usage_error(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "harness"
    folder.mkdir()
    (folder / "bad.json").write_text(
        '{"schema": "boundary-audit/harness/v1", "runs": [', encoding="utf-8"
    )
    code = main(
        [
            "table8",
            "toy",
            "--adapters",
            str(toy),
            "--select",
            "write-file-t0",
            "--no-static",
            "--no-probes",
            "--harness-reports",
            str(folder),
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err.startswith(
        f"boundary-audit: error: --harness-reports: cannot read {folder}/bad.json: "
    )
    assert len(err.splitlines()) == 1
