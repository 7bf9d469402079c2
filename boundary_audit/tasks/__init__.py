"""The task suite: task model and loader, fixtures, exact validators, reply sets, single runs.

Data lives in the top-level tasks/ folder (one TOML file per task, see docs/tasks.md); this
package reads it through `boundary_audit._data`. Public API:

- `load_tasks(select=None) -> tuple[Task, ...]`
- `run_task(task, reply, transport, sandbox) -> (Verdict, ExecResult)`
- `carry(task, reply, transport, ws, sandbox) -> ExecResult` (reply + follow-up, no validation)
- `materialize(task, ws)`, `validate(task, ws, result) -> Verdict`
- `load_reply_set(spec, tasks) -> ReplySet` for `oracle`, `naive` or a JSONL file, and
  `load_reply_sets(spec, tasks)`: the same split into one set per (contract, draw) group
"""

from __future__ import annotations

from boundary_audit.tasks.fixture import materialize
from boundary_audit.tasks.model import Task, TaskId
from boundary_audit.tasks.replies import Reply, ReplySet, load_reply_set, load_reply_sets
from boundary_audit.tasks.run import carry, run_task
from boundary_audit.tasks.suite import load_suite, load_tasks, select_tasks
from boundary_audit.tasks.validate import Verdict, validate

__all__ = [
    "Reply",
    "ReplySet",
    "Task",
    "TaskId",
    "Verdict",
    "carry",
    "load_reply_set",
    "load_reply_sets",
    "load_suite",
    "load_tasks",
    "materialize",
    "run_task",
    "select_tasks",
    "validate",
]
