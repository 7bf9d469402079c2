"""`tasks check`: the packaged suite proves itself; broken tasks are caught with exact claims."""

from __future__ import annotations

import pytest

from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import load_tasks
from boundary_audit.tasks.check import CheckItem, TaskCheck, check_tasks
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.parse import parse_task


def _assert_suite_proves_itself(results: tuple[TaskCheck, ...], tasks: tuple[Task, ...]) -> None:
    failures = [(r.task_id, i.claim, i.detail) for r in results for i in r.failed]
    assert failures == []
    assert [r.task_id for r in results] == [t.id for t in tasks]
    by_id = {r.task_id: r for r in results}
    for task in tasks:
        claims = {i.claim.split(" (")[0]: i.ok for i in by_id[task.id].items}
        if task.core:  # raw and nested always exist: every core claim is verified
            assert by_id[task.id].unverified == (), task.id
            assert claims["validator rejects one flipped byte"] is True, task.id
            assert claims["validator rejects a stray file"] is True, task.id
            assert claims[f"naive breaks on {task.naive_breaks}"] is True, task.id


def test_whole_suite_on_raw_and_nested_in_tempdir() -> None:
    tasks = load_tasks()
    results = check_tasks(tasks, TempdirSandbox(), jobs=2, transports=["raw", "nested"])
    _assert_suite_proves_itself(results, tasks)
    unverified = {i.detail for r in results for i in r.unverified}
    assert unverified <= {
        "not selected",
        "raw: not selected",
        "no transport ran the oracle to a pass",
        "tmux-keys: not selected",
        "stdin: not selected",
        "session: not selected",
        "session-pipe: not selected",
        "argv-shlex: not selected",
        "script-sh: not selected",
    }


@pytest.mark.bwrap
def test_whole_suite_under_bwrap_on_every_registered_transport() -> None:
    tasks = load_tasks()
    with make_sandbox("bwrap", Limits(timeout_s=4.0)) as box:  # session-state-t2's naive hangs
        results = check_tasks(tasks, box, jobs=2)
    _assert_suite_proves_itself(results, tasks)


HEAD = """\
id = "demo-t1"
family = "demo"
tier = 1
core = false
tags = ["boundary=stdin"]
instruction = "Create out.txt containing x and a newline."
hazards = ["dollar"]
"""
FILE = '\n[[validator.files]]\npath = "out.txt"\ntext = "x\\n"\n'


def demo(replies: str, validator: str = FILE) -> Task:
    return parse_task("demo/demo-t1.toml", (HEAD + replies + validator).encode())


def claims(task: Task) -> list[tuple[str, bool | None, str]]:
    (result,) = check_tasks([task], TempdirSandbox(), jobs=1)
    return [(i.claim, i.ok, i.detail) for i in result.items]


def test_a_sound_task_verifies_every_claim() -> None:
    task = demo("""oracle = "printf 'x\\\\n' > out.txt"
oracle_passes = ["raw", "nested"]
naive = 'echo "x" "" > out.txt'
naive_breaks = "raw"
""")
    assert claims(task) == [
        ("oracle passes on raw", True, ""),
        (
            "validator rejects one flipped byte (byte 1 of out.txt)",
            True,
            '"out.txt": first difference at byte 1: expected "x\\n" got "x\\x0b"',
        ),
        (
            "validator rejects a stray file (stray-file.tmp)",
            True,
            'unexpected file "stray-file.tmp" (collateral)',
        ),
        ("oracle passes on nested", True, ""),
        (
            "naive breaks on raw",
            True,
            '"out.txt": first difference at byte 1 (got 3 bytes, expected 2): '
            'expected "x\\n" got "x \\n" [exit 0]',
        ),
    ]


def test_broken_claims_are_reported() -> None:
    task = demo("""oracle = "printf 'y\\\\n' > out.txt"
oracle_fails = ["nested"]
naive = "printf 'x\\\\n' > out.txt"
naive_breaks = "nested"
""")
    assert claims(task) == [
        (
            "oracle passes on raw",
            False,
            '"out.txt": first difference at byte 0: expected "x\\n" got "y\\n" [exit 0]',
        ),
        ("validator rejects mutated states", None, "no transport ran the oracle to a pass"),
        (
            "oracle fails on nested",
            True,
            '"out.txt": first difference at byte 0: expected "x\\n" got "y\\n" [exit 0]',
        ),
        ("naive breaks on nested", False, "it passes on raw and nested"),
    ]


def test_naive_breaking_earlier_than_declared() -> None:
    task = demo("""oracle = "printf 'x\\\\n' > out.txt"
naive = "echo y > out.txt"
naive_breaks = "nested"
""")
    assert claims(task)[-1] == (
        "naive breaks on nested",
        False,
        'it breaks on raw already: "out.txt": first difference at byte 0: '
        'expected "x\\n" got "y\\n" [exit 0]',
    )


def test_failing_runs_say_how_they_ended() -> None:
    task = demo("""oracle = "printf 'x\\\\n' > out.txt"
naive = "echo 'x > out.txt"
naive_breaks = "raw"
""")
    assert claims(task)[-1] == (
        "naive breaks on raw",
        True,
        'missing file "out.txt" '
        "[exit 2, stderr \"bash: -c: line 1: unexpected EOF while looking for matching `''\"]",
    )


def test_oracle_that_should_fail_but_passes() -> None:
    task = demo("""oracle = "printf 'x\\\\n' > out.txt"
oracle_fails = ["nested"]
naive = "true"
naive_breaks = "raw"
""")
    assert ("oracle fails on nested", False, "but it passed") in claims(task)


def test_a_validator_with_nothing_to_mutate_fails_its_claim() -> None:
    task = demo(
        'oracle = "true"\nnaive = "echo hi"\nnaive_breaks = "raw"\n',
        '\n[validator.stdout]\nexact = ""\n',
    )
    assert claims(task)[:2] == [
        ("oracle passes on raw", True, ""),
        ("validator rejects one flipped byte", False, "the state has nothing to mutate"),
    ]


def test_unregistered_transports_are_unverified_not_passed() -> None:
    task = demo("""oracle = "printf 'x\\\\n' > out.txt"
oracle_passes = ["raw", "no-such-transport"]
naive = "printf 'x\\\\n' > out.txt"
naive_breaks = "no-such-transport"
""")
    result = claims(task)
    assert ("oracle passes on no-such-transport", None, "transport not registered") in result
    assert result[-1] == (
        "naive breaks on no-such-transport",
        None,
        "no-such-transport: transport not registered",
    )


def test_task_check_properties() -> None:
    result = TaskCheck(
        "t", (CheckItem("a", True), CheckItem("b", False, "x"), CheckItem("c", None, "y"))
    )
    assert [i.claim for i in result.failed] == ["b"]
    assert [i.claim for i in result.unverified] == ["c"]
