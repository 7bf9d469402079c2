"""Every validator kind, positive and negative, with the exact failure reason."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import materialize, validate
from boundary_audit.tasks.diff import describe_difference, escape
from boundary_audit.tasks.model import Task
from tests.support.demo_task import demo_task

OK = ExecResult(exit_code=0, stdout=b"", stderr=b"")


make = demo_task


@pytest.fixture
def ws() -> Iterator[Workspace]:
    with TempdirSandbox().workspace() as w:
        yield w


def verdict(task: Task, ws: Workspace, result: ExecResult = OK) -> str:
    v = validate(task, ws, result)
    assert v.passed == (v.reason == "ok")
    return v.reason


FILES = """
[[fixture.files]]
path = "keep.txt"
text = "keep\\n"
mode = "0600"

[[validator.files]]
path = "out/a b.txt"
text = "hello world\\n"
mode = "0755"
"""


def write(ws: Workspace, rel: str, data: bytes, mode: int = 0o644) -> None:
    path = ws.work / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)


def test_files_pass_when_exact(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    write(ws, "out/a b.txt", b"hello world\n", 0o755)
    assert verdict(task, ws) == "ok"


def test_file_bytes_first_difference(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    write(ws, "out/a b.txt", b"hello World\n", 0o755)
    assert verdict(task, ws) == (
        '"out/a b.txt": first difference at byte 6: expected "hello world\\n" got "hello World\\n"'
    )


def test_file_length_difference_and_mode(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    write(ws, "out/a b.txt", b"hello world", 0o644)
    assert verdict(task, ws) == (
        '"out/a b.txt": first difference at byte 11 (got 11 bytes, expected 12): '
        'expected "hello world\\n" '
        'got "hello world"; "out/a b.txt": mode 0644, expected 0755'
    )


def test_missing_file_and_changed_fixture_file(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    write(ws, "keep.txt", b"keep\n", 0o644)
    assert verdict(task, ws) == (
        '"keep.txt": mode 0644, expected 0600; missing directory "out"; missing file "out/a b.txt"'
    )


def test_collateral_file_dir_and_symlink(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    write(ws, "out/a b.txt", b"hello world\n", 0o755)
    write(ws, "out/stray\nname", b"")
    (ws.work / "junk").mkdir()
    write(ws, "junk/x", b"1")
    os.symlink("/etc/passwd", ws.work / "link")
    assert verdict(task, ws) == (
        'unexpected directory "junk" (collateral, 1 entry inside); '
        'unexpected symlink "link" -> "/etc/passwd" (collateral); '
        'unexpected file "out/stray\\nname" (collateral)'
    )


def test_symlink_is_never_followed(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    outside = ws.root / "outside.txt"
    outside.write_bytes(b"hello world\n")
    (ws.work / "out").mkdir()
    os.symlink(outside, ws.work / "out/a b.txt")
    assert verdict(task, ws) == '"out/a b.txt": expected a regular file, found a symlink'


def test_symlink_expectations(ws: Workspace) -> None:
    task = make(
        '[[fixture.symlinks]]\npath = "l"\ntarget = "../x"\n\n[validator]\nabsent = ["gone"]\n'
    )
    materialize(task, ws)
    assert verdict(task, ws) == "ok"
    os.unlink(ws.work / "l")
    os.symlink("../y", ws.work / "l")
    assert verdict(task, ws) == '"l": symlink target "../y", expected "../x"'


def test_absent_paths(ws: Workspace) -> None:
    task = make('[[fixture.files]]\npath = "-rf"\ntext = "x"\n\n[validator]\nabsent = ["-rf"]\n')
    materialize(task, ws)
    assert verdict(task, ws) == '"-rf" must not exist (file found)'
    os.unlink(ws.work / "-rf")
    assert verdict(task, ws) == "ok"


ARGV = """
[[fixture.programs]]
name = "show-args"
helper = "argv-recorder"

[[validator.argv]]
program = "show-args"
calls = [["", "a b", "line1\\nline2"]]
"""


def run(ws: Workspace, script: str) -> ExecResult:
    return TempdirSandbox().run(ws, ["bash", "-c", script])


def test_argv_exact(ws: Workspace) -> None:
    task = make(ARGV)
    materialize(task, ws)
    run(ws, "show-args '' 'a b' $'line1\\nline2'")
    assert verdict(task, ws) == "ok"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("true", "show-args was called 0 time(s), expected 1"),
        ("show-args '' 'a b' x; show-args", "show-args was called 2 time(s), expected 1"),
        (
            "show-args '' 'a  b' $'line1\\nline2'",
            "show-args call #1: argv[2]: first difference at byte 2 (got 4 bytes, expected 3): "
            'expected "a b" got "a  b"',
        ),
        (
            "show-args '' 'a b'",
            'show-args call #1: 2 arguments, expected 3 (missing from argv[3]: "line1\\nline2")',
        ),
        (
            "show-args '' 'a b' $'line1\\nline2' -x ''",
            'show-args call #1: 5 arguments, expected 3 (extra from argv[4]: "-x", "")',
        ),
    ],
)
def test_argv_differences(ws: Workspace, reply: str, reason: str) -> None:
    task = make(ARGV)
    materialize(task, ws)
    run(ws, reply)
    assert verdict(task, ws) == reason


ENV = """
[[fixture.programs]]
name = "show-env"
helper = "env-recorder"

[[validator.env]]
program = "show-env"
vars = { GREETING = "hi there", EMPTY = "" }
unset = ["SECRET"]
"""


def test_env_exact_and_differences(ws: Workspace) -> None:
    task = make(ENV)
    materialize(task, ws)
    run(ws, "GREETING='hi there' EMPTY= show-env")
    assert verdict(task, ws) == "ok"


def test_env_unset_empty_and_extra(ws: Workspace) -> None:
    task = make(ENV)
    materialize(task, ws)
    run(ws, "export SECRET=x; GREETING='hi  there' show-env")
    assert verdict(task, ws) == (
        'show-env: EMPTY is not set, expected ""; '
        "show-env: GREETING: first difference at byte 3 (got 9 bytes, expected 8): "
        'expected "hi there" got "hi  there"; '
        'show-env: SECRET is set to "x", expected unset'
    )


GIT = """
[fixture.git]
path = "."
[[fixture.git.commits]]
message = "Initial commit\\n"
files = [{ path = "README.md", text = "demo\\n" }]

[[fixture.files]]
path = "notes.txt"
text = "n\\n"

[validator.git]
path = "."
messages = ["Add 'notes'\\n", "Initial commit\\n"]
tree = [{ path = "README.md", text = "demo\\n" }, { path = "notes.txt", text = "n\\n" }]
"""


def test_git_history_and_tree(ws: Workspace) -> None:
    task = make(GIT)
    materialize(task, ws)
    assert verdict(task, ws) == (
        'git: HEAD has 1 commit(s), expected 2 ("Initial commit\\n"); '
        'git: HEAD\'s tree lacks "notes.txt"'
    )
    run(ws, "git add notes.txt && git commit -q -m \"Add 'notes'\"")
    assert verdict(task, ws) == "ok"


def test_git_message_and_tree_differences(ws: Workspace) -> None:
    task = make(GIT)
    materialize(task, ws)
    run(ws, "echo extra > more.txt && git add -A && git commit -q -m 'Add notes' && rm more.txt")
    assert verdict(task, ws) == (
        "git: message of HEAD~0: first difference at byte 4 (got 10 bytes, expected 12): "
        'expected "Add \'notes\'\\n" got "Add notes\\n"; '
        'git: unexpected "more.txt" in HEAD\'s tree'
    )


def test_git_commit_ids_are_reproducible(ws: Workspace) -> None:
    task = make(GIT)
    materialize(task, ws)
    head = subprocess.run(
        ["git", "-C", str(ws.work), "rev-parse", "HEAD"], capture_output=True, check=True
    )
    with TempdirSandbox().workspace() as other:
        materialize(task, other)
        again = subprocess.run(
            ["git", "-C", str(other.work), "rev-parse", "HEAD"], capture_output=True, check=True
        )
    assert head.stdout == again.stdout


def test_git_dir_replaced_by_symlink(ws: Workspace) -> None:
    task = make(GIT)
    materialize(task, ws)
    os.rename(ws.work / ".git", ws.root / "moved")
    os.symlink(ws.root / "moved", ws.work / ".git")
    reason = verdict(task, ws)
    assert reason.startswith(
        '".git": expected a directory, found a symlink; git: ".git" is not a directory any more'
    )


def test_stdout_exact_and_contains(ws: Workspace) -> None:
    exact = make('[validator.stdout]\nexact = "3\\n"\n')
    contains = make('[validator.stdout]\ncontains = "alice"\n')
    assert verdict(exact, ws, ExecResult(0, b"3\n", b"")) == "ok"
    assert verdict(exact, ws, ExecResult(0, b"3", b"")) == (
        'stdout: first difference at byte 1 (got 1 bytes, expected 2): expected "3\\n" got "3"'
    )
    assert verdict(contains, ws, ExecResult(0, b"x alice__DONE__", b"")) == "ok"
    assert (
        verdict(contains, ws, ExecResult(0, b"bob\n", b""))
        == 'stdout "bob\\n" does not contain "alice"'
    )


def test_timeout_fails_even_with_the_right_state(ws: Workspace) -> None:
    task = make('[validator.stdout]\ncontains = ""\n')
    assert (
        verdict(task, ws, ExecResult(None, b"", b"", timed_out=True, duration_s=10.02))
        == "timed out"
    )


def test_many_problems_are_cut_to_three(ws: Workspace) -> None:
    task = make(FILES)
    for name in "abcde":
        write(ws, name, b"")
    assert verdict(task, ws).endswith("(+5 more)")


def test_escape_and_difference_are_unambiguous() -> None:
    assert escape(b'a\tb\n"\\\x1b\xff\xc3\xa9') == 'a\\tb\\n\\"\\\\\\x1b\\xffé'
    assert describe_difference(b"same", b"same") == ""
    long_a = b"0123456789" * 5
    long_b = long_a[:25] + b"X" + long_a[26:]
    assert describe_difference(long_a, long_b) == (
        'first difference at byte 25: expected …"345678901234567890123456789012345678"… '
        'got …"345678901234X67890123456789012345678"…'
    )


def test_huge_file_is_not_read_whole(ws: Workspace, tmp_path: Path) -> None:
    task = make(FILES)
    materialize(task, ws)
    (ws.work / "out").mkdir()
    with open(ws.work / "out/a b.txt", "wb") as f:
        f.truncate(1 << 30)  # sparse 1 GiB: a full read would take seconds and a GiB of memory
    os.chmod(ws.work / "out/a b.txt", 0o755)
    assert verdict(task, ws) == (
        '"out/a b.txt": first difference at byte 0 (got 1073741824 bytes, expected 12): '
        'expected "hello world\\n" got '
        '"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"…'
    )


def test_a_parent_that_is_a_symlink_is_not_walked_through(ws: Workspace) -> None:
    task = make(FILES)
    materialize(task, ws)
    elsewhere = ws.root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a b.txt").write_bytes(b"hello world\n")
    os.chmod(elsewhere / "a b.txt", 0o755)
    os.symlink(elsewhere, ws.work / "out")
    assert verdict(task, ws) == (
        '"out": expected a directory, found a symlink; '
        'missing file "out/a b.txt" (a parent is not a directory)'
    )
