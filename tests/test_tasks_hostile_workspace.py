"""Host-side validators against a reply that attacks them through its workspace.

Each test runs a real task with a hostile reply (through the plain-directory sandbox, and
through bwrap where the attack needs the sandbox's layout) and asserts what the validator did
on the host: it ran nothing the reply configured (no marker file appears), read nothing outside
the workspace (no outside name or byte in any reason), did not block, and failed the run with
the exact reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import load_tasks, run_task
from boundary_audit.tasks.model import Task
from boundary_audit.transports import make_transport

LIMITS = Limits(timeout_s=10.0, grace_s=2.0)


def task(task_id: str) -> Task:
    (found,) = load_tasks(task_id)
    return found


@pytest.fixture(params=["tempdir", pytest.param("bwrap", marks=pytest.mark.bwrap)])
def box(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "tempdir":
        return TempdirSandbox(LIMITS)
    return make_sandbox("bwrap", LIMITS)


def verdict(task_id: str, reply: str, box: Sandbox) -> str:
    v, result = run_task(task(task_id), reply, make_transport("raw"), box)
    assert not v.passed
    return v.reason


def promisor_attack(marker: Path) -> str:
    return (
        "git config core.repositoryformatversion 1; git config extensions.partialClone origin;"
        " git config remote.origin.url /nonexistent; git config remote.origin.promisor true;"
        f" git config remote.origin.uploadpack 'sh -c \"id >> {marker}\"; git-upload-pack';"
        " echo 1234567890123456789012345678901234567890 > .git/refs/heads/main"
    )


def test_the_validator_runs_nothing_the_repository_configures(box: Sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hooks = (
        f"printf '#!/bin/sh\\nid >> {marker}\\n' > .git/hooks/reference-transaction;"
        f" cp .git/hooks/reference-transaction .git/hooks/post-checkout;"
        " chmod +x .git/hooks/*;"
        f" git config core.fsmonitor 'id >> {marker}'; git config core.pager 'id >> {marker}';"
        f" printf '[core]\\n\\tfsmonitor = id >> {marker}\\n' > .git/inc;"
        " git config include.path inc;"
    )
    reason = verdict("git-commit-t3", hooks + promisor_attack(marker), box)
    assert not marker.exists()
    assert reason == (
        "git: no history at HEAD (object 1234567890123456789012345678901234567890 is missing)"
    )


def test_sha256_repository_is_a_clear_reason(box: Sandbox) -> None:
    t = task("git-commit-t3")
    reply = "rm -rf .git && git init -q --object-format=sha256 -b main && " + t.oracle
    assert verdict(t.id, reply, box) == "git: unsupported object format sha256"


def test_git_objects_linked_to_etc_are_not_read(box: Sandbox) -> None:
    reason = verdict("git-commit-t3", "rm -rf .git/objects && ln -s /etc .git/objects", box)
    assert reason == (
        "git: cannot read the repository: a symlink or a non-directory on the way (not followed)"
    )
