"""The QuoteBench study's invariants, task by task over the 56 core tasks, under bubblewrap.

- `nested-escaped` = `raw` (escaping at the interpolation point reproduces the raw outcome);
- `script-bash` = `raw` (the temporary-script bypass), `json-correct` = `raw` (a serializer);
- `ssh` = `nested` (Table 9: real `ssh localhost "R"` matched the synthetic nested damage).

The oracle replies must satisfy all four exactly. The naive replies must satisfy the first
three exactly too; for `ssh` vs `nested` they may differ by one mechanism only, which the
study's one mismatched configuration in Table 9 also shows: when the local shell splits
`"R"` into several words (R holds an unescaped `"` followed by a space), `bash -c` runs the
first word and binds the others to `$0`, `$1`..., while ssh joins them all with spaces and
runs the whole. Every naive-reply difference is checked to be such a split.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.services import sshd
from boundary_audit.tasks import load_tasks
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.run import run_task
from boundary_audit.transports import make_transport

pytestmark = pytest.mark.bwrap
Outcomes = dict[str, tuple[bool, str]]
"""task id -> (passed, reason)."""


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=10))
    yield box
    box.close()


@pytest.fixture(scope="module")
def core() -> tuple[Task, ...]:
    tasks = load_tasks("core")
    assert len(tasks) == 56
    return tasks


def outcomes(sandbox: Sandbox, tasks: tuple[Task, ...], name: str, replies: str) -> Outcomes:
    """Run every task's `replies` reply (oracle or naive) through transport `name`."""
    return outcome_sets(sandbox, tasks, [(name, replies)])[(name, replies)]


def outcome_sets(
    sandbox: Sandbox, tasks: tuple[Task, ...], cells: list[tuple[str, str]]
) -> dict[tuple[str, str], Outcomes]:
    """Outcomes of several (transport, reply set) cells, all run in one thread pool."""
    transports = {name: make_transport(name) for name, _ in cells}

    def one(job: tuple[str, str, Task]) -> tuple[tuple[str, str], str, tuple[bool, str]]:
        name, replies, task = job
        verdict, _ = run_task(task, getattr(task, replies), transports[name], sandbox)
        return (name, replies), task.id, (verdict.passed, verdict.reason)

    found: dict[tuple[str, str], Outcomes] = {cell: {} for cell in cells}
    jobs = [(name, replies, task) for name, replies in cells for task in tasks]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            for cell, task_id, outcome in pool.map(one, jobs):
                found[cell][task_id] = outcome
    finally:
        for transport in transports.values():
            transport.close()
    return found


def differences(a: Outcomes, b: Outcomes) -> list[tuple[str, bool, bool, str]]:
    """(task, passed in a, passed in b, the failing side's reason) for each task that differs."""
    return [
        (tid, a[tid][0], b[tid][0], a[tid][1] if not a[tid][0] else b[tid][1])
        for tid in a
        if a[tid][0] != b[tid][0]
    ]


@pytest.fixture(scope="module")
def raw_oracle(sandbox: Sandbox, core: tuple[Task, ...]) -> Outcomes:
    found = outcomes(sandbox, core, "raw", "oracle")
    assert [t for t, (ok, _) in found.items() if not ok] == []  # the suite's own promise
    return found


@pytest.fixture(scope="module")
def raw_naive(sandbox: Sandbox, core: tuple[Task, ...]) -> Outcomes:
    return outcomes(sandbox, core, "raw", "naive")


@pytest.mark.parametrize("name", ["nested-escaped", "script-bash", "json-correct"])
def test_lossless_boundaries_equal_raw_task_by_task_for_oracle_replies(
    sandbox: Sandbox, core: tuple[Task, ...], raw_oracle: Outcomes, name: str
) -> None:
    assert differences(raw_oracle, outcomes(sandbox, core, name, "oracle")) == []


@pytest.mark.parametrize("name", ["nested-escaped", "script-bash", "json-correct"])
def test_lossless_boundaries_equal_raw_task_by_task_for_naive_replies(
    sandbox: Sandbox, core: tuple[Task, ...], raw_naive: Outcomes, name: str
) -> None:
    assert differences(raw_naive, outcomes(sandbox, core, name, "naive")) == []


def local_words(sandbox: Sandbox, reply: str) -> int:
    """How many words the local shell makes of `"R"` (the nested and ssh command lines)."""
    with sandbox.workspace() as ws:
        res = sandbox.run(ws, ["bash", "-c", f'set -- "{reply}"; echo $#'])
    return int(res.stdout.decode().strip().splitlines()[-1])


@pytest.mark.sshd
def test_real_ssh_equals_nested_task_by_task(
    sandbox: Sandbox, core: tuple[Task, ...], ssh_service: sshd.SshService
) -> None:
    cells = [("nested", "oracle"), ("ssh", "oracle"), ("nested", "naive"), ("ssh", "naive")]
    found = outcome_sets(sandbox, core, cells)
    nested, ssh = found[("nested", "oracle")], found[("ssh", "oracle")]
    assert differences(nested, ssh) == []
    damaged = [t for t, (ok, _) in nested.items() if not ok]
    assert len(damaged) >= 14  # not vacuous: the added parser does damage these replies

    by_id: dict[str, Task] = {t.id: t for t in core}
    for tid, _, _, _ in differences(found[("nested", "naive")], found[("ssh", "naive")]):
        words = local_words(sandbox, by_id[tid].naive)
        assert words > 1, f"{tid}: ssh and nested differ without a word split ({words} word)"
