"""Anchor verification against a small "system" repository the test builds.

The fake system has its sink at known lines; a later commit moves it (drift), another
deletes the file. `verify_adapter` must say verified / moved / class differs / no such file,
with the lines and the finding, and "not verified" with the reason when there is no checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.adapters import Adapter, load_adapters
from boundary_audit.adapters.anchors import verify_adapter
from tests.support.gitrepos import add_commit, make_repo

TOOL = b"""import json
import subprocess


def run_tool(tool_call):
    args = json.loads(tool_call.function.arguments)
    return subprocess.run(["bash", "-c", args["command"]])
"""

ADAPTER = """\
schema = 1
id = "fake"
name = "Fake"
repository = "{repo}"
commit = "{commit}"

[study]
contract = "native"
anchor = "tool.py:6--7"
observed = "bash -c R"

[[paths]]
id = "main"
title = "bash -c R"
contract = "native"
boundary_class = "shell-string"
parse_layers = ["bash -c"]
observed = "one parse"
fix = "none"
transport = {{ name = "raw" }}

[[paths.anchors]]
path = "agent/tool.py"
lines = [6, 7]
kind = "sink"
boundary_class = "shell-string"
sink = "subprocess"

[[paths.anchors]]
path = "agent/tool.py"
lines = [5, 5]
kind = "text"
text = "def run_tool("

[[paths.anchors]]
path = "agent/tool.py"
lines = [6, 7]
kind = "sink"
boundary_class = "nested-string"
"""


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Adapter, list[str]]:
    root = tmp_path_factory.mktemp("fake")
    repo = root / "fake-system"
    pin = make_repo(repo, {"agent/tool.py": TOOL})
    moved = add_commit(repo, {"agent/tool.py": b"# one\n# two\n# three\n" + TOOL})
    gone = add_commit(repo, {}, delete=["agent/tool.py"])
    spec = root / "fake.toml"
    spec.write_text(ADAPTER.format(repo=repo, commit=pin), encoding="utf-8")
    (adapter,) = load_adapters(["fake"], [spec])
    return repo, adapter, [pin, moved, gone]


def statuses(check: object) -> list[tuple[str, str, str]]:
    return [(a.anchor, a.status, a.detail) for a in check.anchors]  # type: ignore[attr-defined]


def test_anchors_hold_at_the_pin(system: tuple[Path, Adapter, list[str]]) -> None:
    repo, adapter, (pin, _, _) = system
    check = verify_adapter(adapter, repo_dir=repo)["main"]
    assert (check.commit, check.pinned) == (pin, True)
    assert check.note == f"anchors checked at the pin {pin[:12]}"
    assert statuses(check) == [
        ("agent/tool.py:6-7", "verified", "BA101 shell-string `subprocess.run` at line 7"),
        ("agent/tool.py:5", "verified", "text at line 5"),
        (
            "agent/tool.py:6-7",
            "class differs",
            "found BA101 shell-string `subprocess.run` at line 7",
        ),
    ]


def test_drift_on_a_later_commit_reports_where_the_anchors_went(
    system: tuple[Path, Adapter, list[str]],
) -> None:
    repo, adapter, (pin, moved, gone) = system
    check = verify_adapter(adapter, repo_dir=repo, rev=moved)["main"]
    assert (check.commit, check.pinned) == (moved, False)
    assert check.note == f"drift check at {moved} = {moved[:12]} (pin {pin})"
    assert statuses(check) == [
        ("agent/tool.py:6-7", "moved", "now BA101 shell-string `subprocess.run` at line 10"),
        ("agent/tool.py:5", "moved", "text now at line 8"),
        ("agent/tool.py:6-7", "not found", "no finding of this class in the file"),
    ]
    deleted = verify_adapter(adapter, repo_dir=repo, rev=gone)["main"]
    assert [a.status for a in deleted.anchors] == ["no such file"] * 3


def test_no_checkout_is_not_a_failure(
    system: tuple[Path, Adapter, list[str]], tmp_path: Path
) -> None:
    repo, adapter, _ = system
    unknown = verify_adapter(adapter, repo_dir=repo, rev="no-such-branch")["main"]
    assert unknown.commit is None
    assert unknown.note.startswith("not verified: checkout failed (")
    assert [a.status for a in unknown.anchors] == ["not verified"] * 3
    offline = verify_adapter(adapter, offline=True)["main"]  # `repository` is a path: local
    assert offline.pinned and [a.status for a in offline.anchors][:2] == ["verified"] * 2
    plain = tmp_path / "unpacked"
    (plain / "agent").mkdir(parents=True)
    (plain / "agent" / "tool.py").write_bytes(TOOL)
    directory = verify_adapter(adapter, repo_dir=plain)["main"]
    assert directory.note == (
        f"checked in directory {plain} (not git: the pin {adapter.commit} is unconfirmed)"
    )
    assert [a.status for a in directory.anchors] == ["verified", "verified", "class differs"]


def test_packaged_adapters_without_a_clone_say_so() -> None:
    (codex,) = load_adapters(["codex"])
    check = verify_adapter(codex, offline=True, repo_dir=None)["shell-command"]
    assert check.note.startswith("not verified: no checkout (")
    assert [a.status for a in check.anchors] == ["not verified"]
