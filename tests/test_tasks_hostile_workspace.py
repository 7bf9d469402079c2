"""Host-side validators against a reply that attacks them through its workspace.

Each test runs a real task with a hostile reply (through the plain-directory sandbox, and
through bwrap where the attack needs the sandbox's layout) and asserts what the validator did
on the host: it ran nothing the reply configured (no marker file appears), read nothing outside
the workspace (no outside name or byte in any reason), did not block, and failed the run with
the exact reason.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import load_tasks, materialize, run_task, validate
from boundary_audit.tasks.model import Task
from boundary_audit.tasks.mutate import flip_one_byte, stray_file
from boundary_audit.tasks.validate import RECORD_LIMIT
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


# -- the workspace swapped, linked, stuffed --------------------------------------------------


def _nothing_from(place: str, reason: str) -> None:
    for name in os.listdir(place):
        assert f'"{name}' not in reason, f"{place}/{name} leaked into {reason!r}"


@pytest.mark.parametrize("target", ["/root", "/etc"])
def test_a_work_dir_swapped_for_a_link_is_judged_on_the_original(target: str, box: Sandbox) -> None:
    swap = f"cd .. && mv work w0 && ln -s {target} work"
    reason = verdict("write-file-t0", swap, box)
    _nothing_from(target, reason)
    assert reason == 'missing file "hello.txt"'
    t = task("write-file-t0")
    v, _ = run_task(t, f"{t.oracle}; {swap}", make_transport("raw"), box)
    assert v.reason == "ok"  # the original directory, wherever it went, holds the answer


@pytest.mark.bwrap
def test_the_literal_tmp_swap_under_bwrap() -> None:
    box = make_sandbox("bwrap", LIMITS)
    for target in ("/root", "/etc"):
        reason = verdict("write-file-t0", f"cd /tmp && mv work w0 && ln -s {target} work", box)
        _nothing_from(target, reason)
        assert reason == 'missing file "hello.txt"'


def test_an_obs_dir_swapped_for_a_link_keeps_the_records(box: Sandbox) -> None:
    t = task("argv-pass-t0")
    v, _ = run_task(
        t, f"{t.oracle}; cd .. && mv obs o0 && ln -s /etc obs", make_transport("raw"), box
    )
    assert v.reason == "ok"
    reason = verdict(t.id, "cd .. && mv obs o0 && mkdir -p o1/calls && ln -s /etc o1/calls/x"
                     " && ln -s o1 obs", box)  # fmt: skip
    assert reason == "show-args was called 0 time(s), expected 1"


def test_linked_git_dirs_and_objects_are_not_followed(box: Sandbox) -> None:
    t = task("git-commit-t3")
    moved = verdict(t.id, f"{t.oracle} && mv .git ../g && ln -s ../g .git", box)
    assert moved == (
        '".git": expected a directory, found a symlink; git: ".git" is not a directory any more'
    )
    to_etc = verdict(t.id, "rm -rf .git && ln -s /etc .git", box)
    assert to_etc.startswith('".git": expected a directory, found a symlink; ')
    _nothing_from("/etc", to_etc)
    shadow = verdict(t.id, f"{t.oracle} && f=$(git rev-parse HEAD) && o=.git/objects/${{f:0:2}}/"
                     "${f:2} && rm -f $o && ln -s /etc/shadow $o", box)  # fmt: skip
    assert re.fullmatch(
        r"git: no history at HEAD \(objects/[0-9a-f]{2}/[0-9a-f]{38} is a symlink, not a "
        r"regular file\)",
        shadow,
    )


def _returns(fn: Callable[[], str]) -> str:
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "the validator blocked"
    return out[0]


def test_fifos_where_files_should_be_never_block(box: Sandbox) -> None:
    assert _returns(lambda: verdict("write-file-t0", "mkfifo hello.txt", box)) == (
        '"hello.txt": expected a regular file, found a special file'
    )
    fifo_record = 'mkdir -p "$BA_OBS/calls" && mkfifo "$BA_OBS/calls/show-args.0.argv"'
    assert _returns(lambda: verdict("argv-pass-t0", fifo_record, box)) == (
        "show-args call #1: record is a special file, not a regular file"
    )
    fifo_env = 'mkdir -p "$BA_OBS/calls" && mkfifo "$BA_OBS/calls/show-env.0.env"'
    assert _returns(lambda: verdict("env-pass-t0", fifo_env, box)) == (
        "show-env: record is a special file, not a regular file"
    )
    link_record = 'mkdir -p "$BA_OBS/calls" && ln -s /etc/shadow "$BA_OBS/calls/show-args.0.argv"'
    assert verdict("argv-pass-t0", link_record, box) == (
        "show-args call #1: record is a symlink, not a regular file"
    )


def test_huge_files_are_read_only_as_far_as_needed(box: Sandbox) -> None:
    huge = 'mkdir -p "$BA_OBS/calls" && truncate -s 400M "$BA_OBS/calls/show-args.0.argv"'
    start = time.monotonic()
    assert verdict("argv-pass-t0", huge, box) == (
        f"show-args call #1: record is larger than {RECORD_LIMIT} bytes (419430400)"
    )
    assert verdict("write-file-t0", "truncate -s 400M hello.txt junk", box) == (
        '"hello.txt": first difference at byte 0 (got 419430400 bytes, expected 12): expected '
        '"hello world\\n" got "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
        '\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"…; '
        'unexpected file "junk" (collateral)'
    )
    assert time.monotonic() - start < 20  # reading 800 MiB whole would not fit (nor its memory)


def test_tasks_check_mutations_never_write_through_a_swapped_work_dir(tmp_path: Path) -> None:
    t = task("write-file-t0")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hello.txt").write_bytes(b"hello world\n")
    with TempdirSandbox(LIMITS).workspace() as ws:
        materialize(t, ws)
        (ws.work / "hello.txt").write_bytes(b"hello world\n")
        os.rename(ws.work, ws.root / "w0")
        os.symlink(outside, ws.work)
        result = ExecResult(0, b"", b"")
        with flip_one_byte(t, ws, result) as (what, _):
            assert what == "byte 6 of hello.txt"
            assert (ws.root / "w0" / "hello.txt").read_bytes() == b"hello vorld\n"
            assert validate(t, ws, result).reason.startswith('"hello.txt": first difference')
        with stray_file(ws) as name:
            assert (ws.root / "w0" / name).is_file()
        assert validate(t, ws, result).reason == "ok"
    assert sorted(os.listdir(outside)) == ["hello.txt"]
    assert (outside / "hello.txt").read_bytes() == b"hello world\n"


def test_a_workspace_without_descriptors_opens_its_paths_without_following(
    tmp_path: Path,
) -> None:
    t = task("argv-pass-t0")
    with TempdirSandbox(LIMITS).workspace() as real:
        materialize(t, real)
        TempdirSandbox(LIMITS).run(real, ["bash", "-c", t.oracle])
        hand = dataclasses.replace(real, work_fd=-1, obs_fd=-1)
        assert validate(t, hand, ExecResult(0, b"", b"")).reason == "ok"
        os.rename(real.obs, real.root / "o0")
        os.symlink(real.root / "o0", real.obs)
        os.rename(real.work, real.root / "w0")
        os.symlink("/etc", real.work)
        assert validate(t, hand, ExecResult(0, b"", b"")).reason == (
            "the work dir cannot be opened (Not a directory); "
            "the obs dir cannot be opened (Not a directory)"
        )
        assert validate(t, real, ExecResult(0, b"", b"")).reason == "ok"
