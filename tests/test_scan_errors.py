"""A run that could not be carried out is never damage: error runs, exit 6, no damage figure.

A session driver that cannot start (its interpreter is missing, as it was from a clone under
/tmp before the sandbox re-exposed it) makes every run through that path an error: the scan
still writes its report, counts and names those runs, gives that path no damage figure, keeps
the fixed path's measurement, and exits 6. The measure that every report shares leaves an
errored task out of both sides and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.pipelines.matrix import measure
from boundary_audit.record import RunRecord
from boundary_audit.report.table8.cells import damage_phrase
from boundary_audit.transports import _driver
from tests.support.gitrepos import make_repo

SESSION_HARNESS = b"""import pexpect
from openai import OpenAI


class Session:
    def __init__(self) -> None:
        self.shell = pexpect.spawn("/bin/bash", ["--norc"], echo=False, encoding="utf-8")

    def run(self, command: str) -> str:
        self.shell.sendline(command)
        self.shell.expect("[$] ")
        return self.shell.before


def loop(task: str) -> None:
    reply = OpenAI().chat.completions.create(model="m", messages=[{"content": task}])
    Session().run(reply.choices[0].message.content)
"""


@pytest.mark.bwrap
def test_a_driver_that_cannot_start_gives_error_runs_exit_6_and_no_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "harness"
    make_repo(repo, {"agent.py": SESSION_HARNESS})
    missing = str(tmp_path / "no-such-python")
    monkeypatch.setattr(
        _driver, "driver_argv", lambda driver: [missing, str(_driver.DRIVER_DIR / f"{driver}.py")]
    )
    out = tmp_path / "scan.json"
    argv = ["scan", str(repo), "--select", "write-file-t3,argv-pass-t3", "--replies", "oracle"]
    rc = cli.main([*argv, "--format", "json", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == ExitCode.RUN
    assert err.splitlines()[-1] == (
        "boundary-audit: 2 probe runs could not be carried out (left out of the damage): "
        "session(shell=[/bin/bash --norc]): error: pty_session driver failed (exit 127): "
        f"env: ‘{missing}’: No such file or directory"
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["probe"]["error_runs"] == 2
    assert [(e["transport"], e["runs"]) for e in doc["probe"]["errors"]] == [
        ("session(shell=[/bin/bash --norc])", 2)
    ]
    (finding,) = [f for f in doc["findings"] if f["model_controlled"]]
    by_role = {e["role"]: e for e in finding["evidence"]}
    path = by_role["path"]
    assert (path["damage_pp"], path["tasks"], path["errors"]) == (None, 0, 2)
    assert path["error"].startswith(
        "session(shell=[/bin/bash --norc]): error: pty_session driver failed (exit 127)"
    )
    fixed = by_role["fix"]
    assert (fixed["transport"], fixed["damage_pp"], fixed["tasks"], fixed["errors"]) == (
        "script-bash",
        0.0,
        2,
        0,
    )
    # the terminal report: the row says error, with no damage figure; the note names the runs
    rc = cli.main(argv)
    text = capsys.readouterr().out
    assert rc == ExitCode.RUN
    (row,) = [line for line in text.splitlines() if line.startswith("[1]")]
    assert row.split() == [
        "[1]",
        "shell-session",
        "agent.py:10",
        "raw",
        "error",
        "script",
        "file",
        "→",
        "0.0",
        "pp",
    ]
    assert "errors: 2 runs could not be carried out, left out of the pass rates and the" in text
    assert row.split()[4] == "error"  # no damage figure for the path, only the fix's


def _run(
    task: str, transport: str, passed: bool, reason: str = "ok", core: bool = True
) -> RunRecord:
    family = task.rsplit("-", 1)[0]
    return RunRecord(
        task_id=task,
        family=family,
        tier=3,
        core=core,
        transport=transport,
        reply_set="oracle",
        reply_id="oracle",
        passed=passed,
        reason=reason,
    )


def test_an_errored_task_is_out_of_both_sides_and_named() -> None:
    records = [
        _run("write-file-t3", "raw", True),
        _run("write-file-t3", "tmux-keys", False, "error: tmux: server did not start"),
        _run("argv-pass-t3", "raw", True),
        _run("argv-pass-t3", "tmux-keys", False, "argv[1] differs"),
    ]
    m = measure(records, "tmux-keys", "oracle")
    assert (m.tasks, m.passed_raw, m.passed_boundary, m.damage_pp, m.errors) == (1, 1, 0, -100.0, 1)
    assert m.error == "tmux-keys: error: tmux: server did not start"
    assert damage_phrase(m) == "oracle −100.0 pp (1/1 → 0/1, 1 error run left out)"


def test_no_task_left_is_no_damage_figure() -> None:
    records = [
        _run("write-file-t3", "raw", True),
        _run("write-file-t3", "session", False, "error: session driver failed (exit 127): x"),
    ]
    m = measure(records, "session", "oracle")
    assert (m.measured, m.tasks, m.errors) == (False, 0, 1)
    assert damage_phrase(m) == "oracle not measured: 1 error run"
