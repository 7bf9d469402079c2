"""The harness report without running anything: driver-output parsing, parameters, explanations,
pairing, and the JSON / Markdown / text renderings of hand-built runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from boundary_audit.errors import ConfigError, UsageError
from boundary_audit.harness import SYSTEMS, driver_class, make_harness_transport
from boundary_audit.harness.explain import Explanation, packaged, parse
from boundary_audit.harness.suite import final_state
from boundary_audit.harness.transport import parse_driver_output
from boundary_audit.record import RunRecord
from boundary_audit.report.harness.text import render_json, render_markdown, render_text
from boundary_audit.results.harness import SCHEMA, build_report, pair
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import TRANSPORTS


def proc(stdout: bytes = b"", stderr: bytes = b"", timed_out: bool = False) -> ExecResult:
    return ExecResult(exit_code=None if timed_out else 0, stdout=stdout, stderr=stderr,
                      timed_out=timed_out, duration_s=1.5)  # fmt: skip


def test_a_driver_document_is_parsed() -> None:
    doc = {
        "protocol": "boundary-audit-harness/1",
        "status": "blocked",
        "observation": "no",
        "exit_code": None,
        "notes": ["blocklist: not executed"],
        "timings": {"import_s": 0.5},
    }
    out = parse_driver_output("swe-agent", proc(json.dumps(doc).encode() + b"\n"))
    assert (out.status, out.observation, out.exit_code, out.notes) == (
        "blocked",
        "no",
        None,
        ("blocklist: not executed",),
    )
    assert out.timings == {"import_s": 0.5}
    result = out.to_exec_result()
    assert (result.stdout, result.exit_code, result.timed_out, result.duration_s) == (
        b"no",
        None,
        False,
        1.5,
    )


def test_a_killed_or_silent_driver_is_a_driver_outcome_not_an_exception() -> None:
    killed = parse_driver_output("langchain", proc(timed_out=True))
    assert killed.status == "driver-timeout" and killed.to_exec_result().timed_out
    broken = parse_driver_output("langchain", proc(b"not json", b"Traceback\nImportError: x\n"))
    assert (broken.status, broken.notes) == ("driver-error", ("ImportError: x",))
    other = parse_driver_output("autogen", proc(b'{"protocol": "other/9"}'))
    assert other.status == "driver-error" and other.notes == ("no result, exit 0",)


def test_parameters_arrive_as_text_and_are_checked() -> None:
    t = make_harness_transport("swe-agent", timeout="5", preprocess="false")
    assert t.params == {"timeout": 5.0, "preprocess": False}
    assert t.label == "harness:swe-agent(preprocess=false,timeout=5.0)"
    assert make_harness_transport("harness:langchain").label == "harness:langchain"
    with pytest.raises(UsageError) as err:
        make_harness_transport("swe-agent", preprocess="maybe")
    assert err.value.message == (
        "transport harness:swe-agent: parameter preprocess='maybe': expected true or false"
    )
    with pytest.raises(UsageError, match=r"parameter timeout='-1': must be positive"):
        make_harness_transport("langchain", timeout="-1")
    with pytest.raises(UsageError, match=r"parameter env='all' is not one of empty, sandbox"):
        make_harness_transport("langchain", env="all")
    with pytest.raises(UsageError, match=r"unknown parameter\(s\) shell"):
        make_harness_transport("langchain", shell="zsh")


def test_an_unknown_system_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as unknown:
        driver_class("aider")
    known = ", ".join([*SYSTEMS, "all"])
    assert unknown.value.message == f"unknown harness system 'aider' (known: {known})"
    assert list(SYSTEMS)[:3] == ["swe-agent", "langchain", "autogen"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1", "f.toml: unknown top-level key 'x' (expected [[explanation]])"),
        (
            "[[explanation]]\nid = 'a'\nkind = 'explanation'\ntext = 't'",
            "f.toml: explanation[0]: tasks: at least one task-id glob is required",
        ),
        (
            "[[explanation]]\nid = 'a'\nkind = 'guess'\ntext = 't'\ntasks = ['x']",
            "f.toml: explanation[0]: kind: 'guess' is not one of explanation, adapter-fix",
        ),
        (
            "[[explanation]]\nid = 'a'\nkind = 'explanation'\ntext = ''\ntasks = ['x']",
            "f.toml: explanation[0]: text: a non-empty string is required",
        ),
        (
            "[[explanation]]\nid = 'a'\nkind = 'explanation'\ntext = 't'\ntasks = 'x'",
            "f.toml: explanation[0]: tasks: a list of non-empty strings is required",
        ),
        (
            "[[explanation]]\nid = 'a'\nkind = 'explanation'\ntext = 't'\ntasks = ['x']\nwhy = 1",
            "f.toml: explanation[0]: unknown key 'why'",
        ),
        (
            "[[explanation]]\nid='a'\nkind='explanation'\ntext='t'\ntasks=['x']\n" * 2,
            "f.toml: duplicate explanation id 'a'",
        ),
    ],
)
def test_bad_explanations_are_one_line_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text, "f.toml")
    assert err.value.message == message


def test_the_shipped_explanations_parse_and_name_the_adapter_or_a_transport() -> None:
    for name in ("swe-agent", "langchain", "autogen"):
        entries = packaged(name)
        assert entries, name
        for e in entries:
            assert e.kind in ("explanation", "adapter-fix") and len(e.text) > 200, e.id
            assert e.against and all(":" in a or a in TRANSPORTS for a in e.against), e.id


def cell(
    task: str,
    family: str,
    transport: str,
    rs: str,
    passed: bool,
    status: str = "ran",
    reason: str = "ok",
) -> RunRecord:
    return RunRecord(task_id=task, family=family, tier=int(task[-1]), core=True,
                   transport=transport, reply_set=rs, reply_id=rs, passed=passed,
                   reason=reason if not passed else "ok", status=status, detail="", exit_code=0,
                   timed_out=False, duration_s=0.25, final_state=('"a.txt" 2B "x\\n"',),
                   contract="raw")  # fmt: skip


H = "harness:swe-agent"
HARNESS = [
    cell("heredoc-write-t0", "heredoc-write", H, "oracle", True, "executed"),
    cell("heredoc-write-t2", "heredoc-write", H, "oracle", False, "executed",
         '"Makefile": first difference at byte 23'),
    cell("write-file-t0", "write-file", H, "oracle", True, "executed"),
    cell("write-file-t1", "write-file", H, "oracle", False, "blocked", 'missing file "a"'),
]  # fmt: skip
AGAINST = [replace(r, transport="swe-agent:default", passed=True, status="ran", reason="ok")
           for r in HARNESS]  # fmt: skip
RAW = [replace(r, transport="raw", passed=True, status="ran", reason="ok") for r in HARNESS]
EXPLAINED = Explanation(
    id="readline-tab",
    kind="adapter-fix",
    text="Readline completes on a tab.",
    tasks=("heredoc-write-*",),
    against=("swe-agent:default",),
)


def report():  # type: ignore[no-untyped-def]
    comparison = pair(HARNESS, AGAINST, [EXPLAINED])
    return build_report(
        spec=SYSTEMS["swe-agent"].spec, command="boundary-audit harness compare swe-agent",
        python_version="3.11.7", sandbox="bubblewrap 0.8.0", selection="--select x (4 tasks)",
        harness_runs=HARNESS, baseline_runs=RAW, comparisons=[comparison],
    )  # fmt: skip


def test_pairing_finds_each_difference_and_its_explanation() -> None:
    comp = pair(HARNESS, AGAINST, [EXPLAINED])
    assert [d.key for d in comp.differences] == [
        ("oracle", "heredoc-write-t2"),
        ("oracle", "write-file-t1"),
    ]
    assert [d.explanation for d in comp.differences] == [EXPLAINED, None]
    assert comp.agreement_rate == 0.5 and len(comp.unexplained) == 1


def test_json_report_is_deterministic_and_complete() -> None:
    first, second = render_json(report()), render_json(report())
    assert first == second and first.endswith("}\n")
    doc = json.loads(first)
    assert doc["schema"] == SCHEMA and doc["command"] == "boundary-audit harness compare swe-agent"
    harness, against, raw = doc["measurements"]
    assert [m["role"] for m in doc["measurements"]] == ["harness", "against", "baseline"]
    assert harness["pass_rates"]["oracle"] == {
        "passed": 2, "tasks": 4, "family_weighted_percent": "50.0",
        "by_family": {"heredoc-write": {"passed": 1, "tasks": 2},
                      "write-file": {"passed": 1, "tasks": 2}},
    }  # fmt: skip
    assert harness["damage_vs_raw"]["oracle"] == {
        "points": "-50.0",
        "pass_to_fail": ["heredoc-write-t2", "write-file-t1"],
        "fail_to_pass": [],
    }
    assert against["transport"] == "swe-agent:default" and raw["damage_vs_raw"] == {}
    (comp,) = doc["comparisons"]
    counts = {k: v for k, v in comp.items() if k not in ("differences", "explanations")}
    assert counts == {"against": "swe-agent:default", "compared": 4, "agreeing": 2,
                      "percent": "50.0", "unexplained": 1}  # fmt: skip
    assert [d["explanation"] for d in comp["differences"]] == ["readline-tab", None]
    assert comp["differences"][0]["harness"]["final_state"] == ['"a.txt" 2B "x\\n"']
    assert comp["explanations"] == [{"id": "readline-tab", "kind": "adapter-fix",
                                     "text": "Readline completes on a tab.",
                                     "covers": ["oracle/heredoc-write-t2"]}]  # fmt: skip
    assert doc["harness_statuses"] == {"oracle": {"blocked": 1, "executed": 3}}
    assert "duration_s" not in doc["runs"][0] and len(doc["runs"]) == 12


def test_markdown_report_sections() -> None:
    text = render_markdown(report())
    assert text.startswith("# Real harness: SWE-agent\n\nRegenerate with: "
                           "`boundary-audit harness compare swe-agent`\n")  # fmt: skip
    assert (
        "| family | harness:swe-agent oracle | swe-agent:default oracle | raw oracle |\n"
        "|---|---|---|---|\n"
        "| heredoc-write | 1/2 | 2/2 | 2/2 |\n"
        "| write-file | 1/2 | 2/2 | 2/2 |\n"
        "| all (family-weighted %) | 50.0 (2/4) | 100.0 (4/4) | 100.0 (4/4) |\n"
    ) in text
    assert "| harness:swe-agent | -50.0 |\n| swe-agent:default | 0.0 |\n" in text
    assert (
        "2 of 4 replies have the same outcome (50.0%); 2 differ, 1 without a written explanation."
        in text
    )
    assert "### readline-tab (adapter-fix)\n\nReadline completes on a tab.\n" in text
    assert (
        '| heredoc-write-t2 | oracle | FAIL [executed]: "Makefile": first difference at byte 23 '
        "| PASS [ran] |"
    ) in text
    assert text.index("### readline-tab") < text.index("### UNEXPLAINED")
    assert render_markdown(report()) == text


def test_text_report_uses_plain_headings_and_aligned_columns() -> None:
    text = render_text(report())
    assert text.startswith("Real harness: SWE-agent\n=======================\n")
    assert "\nPass rates\n----------\n" in text and "|---|" not in text


def test_final_state_pictures_the_work_dir_without_following_links(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git" / "objects").mkdir(parents=True)
    (tmp_path / "repo" / "a b.txt").write_bytes(b"hi\n\t")
    (tmp_path / "l").symlink_to("/etc/passwd")
    os.mkfifo(tmp_path / "f")
    assert final_state(tmp_path) == (
        '"f" (special)',
        '"l" -> "/etc/passwd"',
        '"repo"/',
        '"repo/a b.txt" 4B "hi\\n\\t"',
    )
    for i in range(14):
        (tmp_path / f"n{i:02}").write_bytes(b"")
    pictured = final_state(tmp_path)
    assert len(pictured) == 13 and pictured[-1] == "... 6 more"
