"""`boundary-audit tasks list|show|check|hazards`: exact output and exit codes."""

from __future__ import annotations

import json

import pytest

from boundary_audit import cli
from boundary_audit.commands import tasks as tasks_command
from boundary_audit.errors import ExitCode
from boundary_audit.tasks.parse import parse_task


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_exact(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "tasks", "list", "--format", "json", "--select", "tty-keys-t1,write-file-t0"
    )
    assert (code, err) == (0, "")
    assert out.endswith("}\n")
    assert json.loads(out) == {
        "schema": "boundary-audit/tasks/v1",
        "tasks": [
            {
                "id": "write-file-t0",
                "family": "write-file",
                "tier": 0,
                "core": True,
                "group": "literal-quote",
                "tags": [],
                "hazards": [],
                "naive_breaks": "nested",
                "oracle_passes": ["raw", "nested"],
                "oracle_fails": [],
                "source": "tasks/write-file/write-file-t0.toml",
            },
            {
                "id": "tty-keys-t1",
                "family": "tty-keys",
                "tier": 1,
                "core": False,
                "group": None,
                "tags": ["boundary=tty"],
                "hazards": ["tab"],
                "naive_breaks": "tmux-keys",
                "oracle_passes": ["raw", "nested", "tmux-keys"],
                "oracle_fails": [],
                "source": "tasks/tty-keys/tty-keys-t1.toml",
            },
        ],
    }
    assert list(json.loads(out)["tasks"][0]) == [
        "id",
        "family",
        "tier",
        "core",
        "group",
        "tags",
        "hazards",
        "naive_breaks",
        "oracle_passes",
        "oracle_fails",
        "source",
    ]


def test_list_table_exact(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "list", "-s", "grep-count,stdin-reader-t1")
    assert code == 0
    assert out == (
        "ID               KIND   TIER  NAIVE BREAKS  HAZARDS\n"
        "grep-count-t0    core   0     nested        -\n"
        "grep-count-t1    core   1     raw           regex-meta\n"
        "grep-count-t2    core   2     raw           dollar, regex-meta\n"
        "grep-count-t3    core   3     raw           "
        "leading-dash, backslash, double-quote, regex-meta\n"
        "stdin-reader-t1  stdin  1     stdin         stdin-reader\n"
        "5 tasks (4 core, 1 boundary)\n"
    )


def test_show_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "show", "hostile-filenames-t2")
    assert code == 0
    assert out == (
        "hostile-filenames-t2  (core, group word-splitting; family hostile-filenames, tier 2)\n"
        "source: tasks/hostile-filenames/hostile-filenames-t2.toml\n"
        "\n"
        "instruction:\n"
        "    Delete the file named ⟨⟨-rf⟩⟩ in the working directory, keeping every other file.\n"
        "\n"
        "hazards:\n"
        "    leading-dash: a file name or argument that starts with -\n"
        "\n"
        "fixture:\n"
        '    file "-rf" = "not an option\\n" mode 0644\n'
        '    file "data.txt" = "keep me\\n" mode 0644\n'
        "\n"
        "oracle (passes on raw, nested):\n"
        "    rm -- -rf\n"
        "\n"
        "naive (breaks on raw):\n"
        "    rm -rf\n"
        "\n"
        "validator:\n"
        '    absent "-rf"\n'
        "    fixture files not listed keep their bytes and modes; any other path is collateral\n"
        "\n"
        "notes:\n"
        "    rm reads the name as options and, with no operand left, deletes nothing.\n"
    )


def test_show_json_round_trips_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "show", "env-pass-t3", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "boundary-audit/tasks/v1"
    env = doc["task"]["validator"]["env"][0]
    assert env["vars"] == [
        ["EMPTY", {"text": ""}],
        ["GREETING", {"text": "line one\nline\ttwo `cmd` \\ end"}],
    ]


def test_unknown_task_and_selection_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "tasks", "show", "nope") == (
        ExitCode.USAGE,
        "",
        "boundary-audit: error: no task 'nope'\n"
        "  hint: `boundary-audit tasks list` shows the ids\n",
    )
    code, _, err = run(capsys, "tasks", "list", "--select", "nope")
    assert code == ExitCode.USAGE
    assert err.startswith("boundary-audit: error: --select 'nope' matches no task\n")


def test_check_passes_and_summarises(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tasks", "check", "--select", "write-file", "--sandbox", "tempdir")
    assert code == 0
    assert out == "tasks check: 4 tasks, 4 ok, 0 failed; 20 claims verified, 0 unverified\n"
    assert "sandbox 'tempdir' gives NO isolation" in err


def test_check_exits_10_and_lists_failures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = parse_task(
        "demo/demo-t1.toml",
        b"""\
id = "demo-t1"
family = "demo"
tier = 1
core = false
tags = ["boundary=stdin"]
instruction = "Create out.txt containing x."
hazards = ["dollar"]
oracle = "printf x > out.txt"
naive = "printf x > out.txt"
naive_breaks = "raw"
oracle_passes = ["raw", "stdin-nope"]

[[validator.files]]
path = "out.txt"
text = "x"
""",
    )
    monkeypatch.setattr(tasks_command, "load_tasks", lambda select=None: (broken,))
    code, out, _ = run(capsys, "tasks", "check", "--sandbox", "tempdir", "--verbose")
    assert code == ExitCode.GATE
    assert out == (
        "FAIL demo-t1: naive breaks on raw: it passes on raw\n"
        "unverified demo-t1: oracle passes on stdin-nope (transport not registered)\n"
        "tasks check: 1 tasks, 0 ok, 1 failed; 4 claims verified, 1 unverified\n"
    )


def test_hazards_lists_the_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "hazards")
    assert code == 0
    assert (
        out.splitlines()[0]
        == "single-quote          an apostrophe / single quote (') in the payload"
    )
    assert len(out.splitlines()) == 35
