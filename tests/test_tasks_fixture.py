"""Fixture materialization and the POSIX sh helpers: argv recorder, env recorder, remote."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator

import pytest

from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import materialize
from boundary_audit.tasks.fixture import program_text
from boundary_audit.tasks.model import Task
from tests.support.demo_task import demo_task

FIXTURE = """
[fixture]
dirs = ["srv", "empty/dir"]
env = { SIDE = "local", ODD = "a b\\nc" }

[[fixture.files]]
path = "bin/run me.sh"
text = "#!/bin/sh\\n"
mode = "0750"

[[fixture.files]]
path = "data.bin"
base64 = "AP8K"

[[fixture.symlinks]]
path = "link"
target = "../outside"

[[fixture.programs]]
name = "show-args"
helper = "argv-recorder"

[[fixture.programs]]
name = "show-env"
helper = "env-recorder"

[[fixture.programs]]
name = "remote"
helper = "remote"
home = "srv"
env = { SIDE = "it's remote" }

[[fixture.programs]]
name = "hello"
script = "#!/bin/sh\\necho hello from $0\\n"

[[validator.env]]
program = "show-env"
vars = { SIDE = "local" }
unset = ["NOPE"]

[[validator.argv]]
program = "show-args"
calls = []
"""


@pytest.fixture
def task() -> Task:
    return demo_task(FIXTURE)


@pytest.fixture
def ws(task: Task) -> Iterator[Workspace]:
    with TempdirSandbox().workspace() as w:
        materialize(task, w)
        yield w


def sh(ws: Workspace, script: str, stdin: bytes | None = None) -> ExecResult:
    return TempdirSandbox().run(ws, ["bash", "-c", script], stdin=stdin)


def test_files_dirs_modes_symlinks_env(ws: Workspace) -> None:
    assert (ws.work / "data.bin").read_bytes() == b"\x00\xff\n"
    assert stat.S_IMODE(os.lstat(ws.work / "data.bin").st_mode) == 0o644
    assert stat.S_IMODE(os.lstat(ws.work / "bin/run me.sh").st_mode) == 0o750
    assert (ws.work / "empty/dir").is_dir() and (ws.work / "srv").is_dir()
    assert os.readlink(ws.work / "link") == "../outside"
    assert ws.env == {"ODD": "a b\nc", "SIDE": "local"}
    for name in ("show-args", "show-env", "remote", "hello"):
        assert stat.S_IMODE(os.stat(ws.bin / name).st_mode) == 0o755
    assert sorted(os.listdir(ws.work)) == ["bin", "data.bin", "empty", "link", "srv"]


def test_helpers_are_posix_sh(task: Task, ws: Workspace) -> None:
    for program in task.fixture.programs:
        text = program_text(task, ws, program)
        assert text.startswith(b"#!/bin/sh\n")
        subprocess.run(["dash", "-n"], input=text, check=True)


def test_argv_recorder_keeps_exact_bytes(ws: Workspace) -> None:
    sh(ws, "show-args '' $'a\\nb' $'\\xff' '-n' 'x  y'; show-args")
    calls = ws.obs / "calls"
    assert sorted(os.listdir(calls)) == ["show-args.0.argv", "show-args.1.argv"]
    assert (calls / "show-args.0.argv").read_bytes() == b"\0a\nb\0\xff\0-n\0x  y\0"
    assert (calls / "show-args.1.argv").read_bytes() == b""


def test_argv_recorder_concurrent_calls_get_distinct_slots(ws: Workspace) -> None:
    sh(ws, "for i in $(seq 1 16); do show-args $i & done; wait")
    calls = ws.obs / "calls"
    assert len(os.listdir(calls)) == 16
    recorded = sorted(int((calls / n).read_bytes().rstrip(b"\0")) for n in os.listdir(calls))
    assert recorded == list(range(1, 17))


def test_recorders_still_record_in_an_empty_environment(ws: Workspace) -> None:
    # LangChain's shell tool runs bash with env={}: no BA_OBS, no PATH of ours.
    script = f"env -i {ws.bin}/show-args a; env -i {ws.bin}/show-env; env -i {ws.bin}/remote :"
    assert sh(ws, script).exit_code == 0
    calls = ws.obs / "calls"
    assert sorted(os.listdir(calls)) == ["remote.0.cmd", "show-args.0.argv", "show-env.0.env"]
    assert (calls / "show-args.0.argv").read_bytes() == b"a\0"
    assert (calls / "show-env.0.env").read_bytes() == b""


def test_env_recorder_tells_unset_from_empty(ws: Workspace) -> None:
    sh(ws, "SIDE= show-env; unset SIDE; show-env; NOPE=$'x\\ny' show-env")
    calls = ws.obs / "calls"
    assert (calls / "show-env.0.env").read_bytes() == b"SIDE=\0"
    assert (calls / "show-env.1.env").read_bytes() == b""
    assert (calls / "show-env.2.env").read_bytes() == b"NOPE=x\ny\0"


def test_remote_joins_arguments_and_runs_in_its_home(ws: Workspace) -> None:
    res = sh(ws, """remote 'printf "%s|%s|%s\\n" "$SIDE" "$PWD" "$HOME"' '' "$SIDE" """)
    home = f"{ws.inner_work}/srv"
    # joined with single spaces, the empty argument kept (two spaces before the locally expanded
    # `local`); printf then reuses its format for the fourth argument
    assert res.stdout.decode() == f"it's remote|{home}|{home}\nlocal||\n"
    assert (
        ws.obs / "calls/remote.0.cmd"
    ).read_bytes() == b"""printf "%s|%s|%s\\n" "$SIDE" "$PWD" "$HOME"  local"""


def test_remote_expands_remotely_and_forwards_stdin(ws: Workspace) -> None:
    sh(ws, "remote 'cat > got.txt; echo $SIDE >> got.txt'", stdin=b"payload\n")
    assert (ws.work / "srv/got.txt").read_bytes() == b"payload\nit's remote\n"
    sh(ws, "remote", stdin=b"echo from-stdin > s.txt\n")
    assert (ws.work / "srv/s.txt").read_bytes() == b"from-stdin\n"


def test_custom_script_program(ws: Workspace) -> None:
    assert sh(ws, "hello").stdout == f"hello from {ws.inner_bin}/hello\n".encode()


def test_git_fixture_sets_identity_and_dates() -> None:
    body = """
[fixture.git]
path = "repo"
branch = "trunk"
[[fixture.git.commits]]
message = "one\\n\\nbody kept   \\n"
files = [{ path = "a.txt", text = "a\\n" }]
[[fixture.git.commits]]
message = "two\\n"
files = [{ path = "sub/b.sh", text = "b\\n", mode = "0755" }]

[validator.git]
path = "repo"
messages = ["two\\n", "one\\n\\nbody kept   \\n"]
"""
    task = demo_task(body)
    with TempdirSandbox().workspace() as ws:
        materialize(task, ws)
        log = subprocess.run(
            [
                "git",
                "-C",
                str(ws.work / "repo"),
                "log",
                "--format=%an <%ae> %ad %s",
                "--date=iso-strict",
                "trunk",
            ],
            capture_output=True,
            check=True,
            text=True,
        )
        assert log.stdout == (
            "Fixture Author <fixture@example.invalid> 2024-01-01T00:00:00+00:00 two\n"
            "Fixture Author <fixture@example.invalid> 2024-01-01T00:00:00+00:00 one\n"
        )
        assert ws.env["GIT_AUTHOR_DATE"] == "2024-01-02T00:00:00Z"
        assert stat.S_IMODE(os.stat(ws.work / "repo/sub/b.sh").st_mode) == 0o755
        from boundary_audit.tasks import validate

        assert validate(task, ws, ExecResult(0, b"", b"")).reason == "ok"
