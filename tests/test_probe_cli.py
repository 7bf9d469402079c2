"""`boundary-audit probe` end to end: real tasks, real bwrap, the JSON contract, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit import __version__, cli
from boundary_audit.errors import ExitCode, TransportError
from boundary_audit.sandbox.bwrap import BwrapSandbox
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.transports import TRANSPORTS
from boundary_audit.transports.interface import Transport

pytestmark = pytest.mark.bwrap

REPLIES = [
    {"task_id": "write-file-t0", "reply": "printf 'hello world\\n' > hello.txt", "model": "m-good"},
    {"task_id": "write-file-t0", "reply": 'echo "hello world" > hello.txt', "model": "m-dq"},
    {"task_id": "write-file-t0", "reply": "echo hello > hello.txt", "model": "m-bad",
     "reply_id": "bad-1", "contract": "disclosed"},
]  # fmt: skip


@pytest.fixture
def replies_file(tmp_path: Path) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in REPLIES))
    return path


BWRAP_CONFINEMENT = BwrapSandbox().confinement()


def probe(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["probe", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_contract(
    replies_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "report.json"
    args = ["--select", "write-file-t0", "-r", "oracle", "-r", str(replies_file), "-t",
            "nested", "--sandbox", "bwrap", "--format", "json", "--no-timings",
            "-o", str(out_file)]  # fmt: skip
    code, out, err = probe(args, capsys)
    assert (code, out) == (0, "")
    text = out_file.read_text()
    doc = json.loads(text)
    assert text.endswith("}\n")
    assert list(doc) == ["schema", "tool", "command", "sandbox", "tasks", "reply_sets",
                         "transports", "notes", "skipped", "runs", "summary"]  # fmt: skip
    assert doc["schema"] == "boundary-audit/probe/v1"
    assert doc["tool"] == {"name": "boundary-audit", "version": __version__}
    assert doc["command"] == (
        f"boundary-audit probe --replies oracle --replies {replies_file} --transport nested "
        f"--select write-file-t0 --sandbox bwrap --format json --output {out_file} --no-timings"
    )
    assert (doc["sandbox"], doc["tasks"], doc["reply_sets"], doc["transports"]) == (
        "bwrap",
        1,
        ["oracle", "r.jsonl"],
        ["raw", "nested"],
    )
    assert doc["notes"] == ["transport 'raw' added: damage is measured against it"]
    assert doc["skipped"] == []
    first = doc["runs"][0]
    assert first == {
        "task_id": "write-file-t0", "family": "write-file", "tier": 0, "core": True, "tags": [],
        "transport": "raw", "reply_set": "oracle", "reply_id": "oracle", "model": None,
        "contract": None, "passed": True, "reason": "ok", "exit_code": 0, "timed_out": False,
    }  # fmt: skip
    outcomes = [(r["reply_set"], r["transport"], r["model"], r["passed"]) for r in doc["runs"]]
    assert outcomes == [
        ("oracle", "raw", None, True), ("oracle", "nested", None, True),
        ("r.jsonl", "raw", "m-good", True), ("r.jsonl", "raw", "m-dq", True),
        ("r.jsonl", "raw", "m-bad", False), ("r.jsonl", "nested", "m-good", True),
        ("r.jsonl", "nested", "m-dq", False), ("r.jsonl", "nested", "m-bad", False),
    ]  # fmt: skip
    bad = doc["runs"][4]
    assert (bad["reply_id"], bad["contract"]) == ("bad-1", "disclosed")
    assert bad["reason"].startswith('"hello.txt": first difference at byte 5')
    summary = doc["summary"]
    assert (summary["runs"], summary["passed"], summary["errors"], summary["timed_out"]) == (
        8,
        5,
        0,
        0,
    )
    cells = [
        (c["reply_set"], c["transport"], c["passed"], c["total"], c["pass_rate"])
        for c in summary["cells"]
    ]
    assert cells == [
        ("oracle", "raw", 1, 1, 100.0), ("oracle", "nested", 1, 1, 100.0),
        ("r.jsonl:m-good", "raw", 1, 1, 100.0), ("r.jsonl:m-dq", "raw", 1, 1, 100.0),
        ("r.jsonl:m-bad", "raw", 0, 1, 0.0), ("r.jsonl:m-good", "nested", 1, 1, 100.0),
        ("r.jsonl:m-dq", "nested", 0, 1, 0.0), ("r.jsonl:m-bad", "nested", 0, 1, 0.0),
    ]  # fmt: skip
    assert summary["cells"][0]["families"] == [
        {"family": "write-file", "passed": 1, "total": 1, "pass_rate": 100.0}
    ]
    damage = {d["reply_set"]: d for d in summary["damage"]}
    assert damage["r.jsonl:m-dq"] == {
        "reply_set": "r.jsonl:m-dq", "transport": "nested", "baseline": "raw", "points": -100.0,
        "families": [{"family": "write-file", "points": -100.0}],
        "pass_to_fail": ["write-file-t0"], "fail_to_pass": [],
    }  # fmt: skip
    assert [d["points"] for d in summary["damage"]] == [0.0, 0.0, -100.0, 0.0]
    assert err == (
        f"boundary-audit: replies run in: {BWRAP_CONFINEMENT}\n"
        "probed 1 tasks: 5/8 runs passed, nested 0.0 pp (oracle), nested 0.0 pp (r.jsonl:m-good), "
        "nested -100.0 pp (r.jsonl:m-dq), nested 0.0 pp (r.jsonl:m-bad) [sandbox bwrap]\n"
    )


def test_json_is_byte_identical_across_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for _ in range(2):
        args = ["--select", "write-file-t0,write-file-t1,json-write-t1", "-r", "oracle",
                "-r", "naive", "-t", "nested", "--format", "json", "--no-timings"]  # fmt: skip
        code, out, _ = probe(args, capsys)
        assert code == 0
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert '"duration_s"' not in outputs[0]


def test_timings_are_reported_unless_disabled(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = probe(["--select", "write-file-t0", "--format", "json"], capsys)
    runs = json.loads(out)["runs"]
    assert code == 0 and len(runs) == 1
    assert list(runs[0])[-1] == "duration_s" and 0 < runs[0]["duration_s"] < 10


def test_markdown_carries_the_regenerate_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = probe(
        ["--select", "write-file-t0,write-file-t1", "-t", "nested", "--format", "markdown"], capsys
    )
    assert code == 0
    assert out.splitlines()[:3] == [
        "# boundary-audit probe report",
        "",
        "- Regenerate: `boundary-audit probe --replies oracle --transport nested "
        "--select write-file-t0,write-file-t1 --format markdown`",
    ]
    assert "| oracle | nested | 1/2 | 50.0 | -50.0 | 0 | 0 |" in out
    assert "| write-file-t1 | oracle | nested | " in out


def test_terminal_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = probe(["--select", "write-file-t0"], capsys)
    assert code == 0
    assert out.startswith(
        f"boundary-audit {__version__}: probe in sandbox bwrap\n1 tasks, 1 runs: 1 passed"
    )
    assert "Pass rate per reply set and transport" in out and "Pass rate per family: oracle" in out


def test_tempdir_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = probe(["--select", "write-file-t0", "--sandbox", "tempdir"], capsys)
    assert code == 0
    first, second = err.splitlines()[:2]
    assert first == "boundary-audit: replies run in: tempdir (NO isolation)"
    assert second.startswith("boundary-audit: warning: sandbox 'tempdir' gives NO isolation")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        ('{"task_id": "no-such-task", "reply": "true"}', "unknown task id 'no-such-task'"),
        ('{"task_id": "write-file-t0"}', "missing 'reply'"),
        (
            '{"task_id": "write-file-t0", "reply": "printf a\\u0000b > hello.txt"}',
            "'reply' holds a NUL character (U+0000) at character 8",
        ),
        (
            '{"task_id": "write-file-t0", "reply": "echo \\ud800 > hello.txt"}',
            "'reply' holds a lone surrogate U+D800 at character 5 "
            "(not Unicode text: it has no UTF-8 encoding)",
        ),
    ],
)
def test_bad_replies_file_exits_4_before_running(
    line: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "write-file-t0", "reply": "true"}\n' + line + "\n")
    out_file = tmp_path / "never.json"
    code, out, err = probe(["-r", str(bad), "--format", "json", "-o", str(out_file)], capsys)
    assert (code, out) == (ExitCode.INPUT, "")
    assert err.splitlines()[0] == f"boundary-audit: error: {bad}:2: {message}"
    assert not out_file.exists()


@pytest.mark.parametrize("escape", ["\\u0000", "\\udfff"])
def test_table8_refuses_a_reply_file_that_is_not_text_with_exit_4(
    escape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f'{{"task_id": "write-file-t0", "reply": "echo {escape}"}}\n')
    code = cli.main(["table8", "--replies", str(bad), "--output-dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    what = "a NUL character (U+0000)" if escape.endswith("0000") else "a lone surrogate U+DFFF"
    assert (code, out) == (ExitCode.INPUT, "")
    assert err.splitlines()[0].startswith(f"boundary-audit: error: {bad}:1: 'reply' holds {what}")
    assert not (tmp_path / "out").exists()


def test_several_replies_per_task_model_contract_without_draws_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice = tmp_path / "twice.jsonl"
    line = '{"task_id": "write-file-t0", "reply": "true", "reply_id": "%s"}\n'
    twice.write_text(line % "a" + line % "b")
    code, _, err = probe(["-r", str(twice)], capsys)
    assert code == ExitCode.INPUT
    assert err.splitlines()[0] == (
        "boundary-audit: error: twice.jsonl: 2 replies for task 'write-file-t0' under contract "
        "raw; the summary pairs one reply per task, model, contract and draw"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", "carrier-pigeon"], "boundary-audit: error: unknown transport 'carrier-pigeon'"),
        (
            ["--select", "no-such-family"],
            "boundary-audit: error: --select 'no-such-family' matches no task",
        ),
    ],
)
def test_bad_names_are_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = probe(args, capsys)
    assert code == ExitCode.USAGE
    assert err.startswith(message)


def test_unknown_sandbox_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = probe(["--sandbox", "chroot"], capsys)
    assert code == ExitCode.USAGE and "chroot" in err


class Exploding(Transport):
    name = "exploding"
    boundary_class = TRANSPORTS["raw"].boundary_class

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        raise TransportError("exploding: the wire caught fire")


def test_machinery_failures_are_recorded_and_exit_6(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(TRANSPORTS, "exploding", Exploding)
    code, out, err = probe(
        ["--select", "write-file-t0,write-file-t1", "-t", "exploding", "--format", "json"], capsys
    )
    assert code == ExitCode.RUN
    doc = json.loads(out)
    reasons = [(r["transport"], r["reason"]) for r in doc["runs"]]
    assert reasons == [("raw", "ok"), ("raw", "ok"),
                       ("exploding", "error: exploding: the wire caught fire"),
                       ("exploding", "error: exploding: the wire caught fire")]  # fmt: skip
    assert doc["summary"]["errors"] == 2
    assert err.splitlines()[1].startswith(
        "probed 2 tasks: 2/4 runs passed, 2 errors, exploding -100.0 pp (oracle)"
    )
