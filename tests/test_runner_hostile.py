"""The runner keeps going through hostile replies: every cell gets a record, none is an error,
the matrix ends within its timeouts, and the honest reply after them still passes."""

from __future__ import annotations

import time

import pytest

from boundary_audit.pipelines.runner import plan_cells, preflight, run_cells
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.tasks import Reply, ReplySet, load_tasks
from boundary_audit.transports import make_transport

HOSTILE = [
    "sleep infinity",
    "yes",
    "yes >&2",
    "b() { b | b & }; b",
    "setsid sleep 1000 & nohup sleep 1000 & ( (sleep 1000 &) & ); echo daemons",
    "kill -9 -1",
    "rm -rf --no-preserve-root /tmp/* ~/* . 2>/dev/null; echo pwned > /etc/ba-pwned",
    "exec 1>&-; exec 2>&-; sleep 1000",
    "kill -STOP $$",
]


@pytest.mark.bwrap
def test_runner_survives_a_hostile_reply_set() -> None:
    (task,) = load_tasks("write-file-t0")
    replies = [Reply(task.id, text, f"h{i:02d}") for i, text in enumerate(HOSTILE)]
    replies.append(Reply(task.id, task.oracle, "zz-oracle"))
    limits = Limits(timeout_s=1.0, grace_s=2.0, max_procs=128)
    with make_sandbox("bwrap", limits) as box:
        preflight(box)
        cells, _ = plan_cells([task], [ReplySet("hostile.jsonl", tuple(replies))],
                              [make_transport("raw")], box)  # fmt: skip
        start = time.monotonic()
        records = run_cells(cells, box, jobs=2)
        took = time.monotonic() - start
    assert [r.reply_id for r in records] == [r.reply_id for r in replies]
    assert [r.errored for r in records] == [False] * len(replies)
    assert [r.passed for r in records] == [False] * len(HOSTILE) + [True]
    timed_out = {r.reply_id for r in records if r.timed_out}
    # The fork bomb's first shell returns at once, unless a loaded machine keeps it waiting.
    assert timed_out - {"h03"} == {"h00", "h01", "h02", "h07", "h08"}
    # Five timeouts of 1 s on two threads, plus teardown: far below the serial worst case.
    assert took < len(HOSTILE) * (limits.timeout_s + limits.grace_s)
