"""Codex: the mock Responses API on its own, then the real `codex exec` binary in bubblewrap.

The mock and the output parser are stdlib-only scripts, loaded straight from the scripts
folder and checked request by request. The driver cases run the npm-installed Codex CLI
0.171.0 against that mock inside the sandbox and assert Codex's verdict, what it reported to
the model, and the exact bytes left in the work dir.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from boundary_audit.harness import DriverOutcome, make_harness_transport
from boundary_audit.harness.install import Installation
from boundary_audit.harness.transport import inside_dir
from boundary_audit.sandbox import Sandbox


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(inside_dir()))  # drive_codex imports mock_responses by name
    try:
        spec = importlib.util.spec_from_file_location(name, inside_dir() / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(inside_dir()))


mock_responses = _load("mock_responses")
drive_codex = _load("drive_codex")

TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {}},
    {"type": "function", "name": "write_stdin", "parameters": {}},
    {"type": "web_search"},
]


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(f"{url}/responses", data=body, method="POST")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def events(stream: bytes) -> list[dict[str, Any]]:
    out = []
    for block in stream.decode().split("\n\n"):
        if block:
            kind, data = block.split("\n")
            assert kind.startswith("event: ")
            event = json.loads(data.removeprefix("data: "))
            assert event["type"] == kind.removeprefix("event: ")
            out.append(event)
    return out


@pytest.fixture
def mock() -> Iterator[Any]:
    with mock_responses.MockResponses("printf '%s\\n' \"a  b\" > o.txt") as server:
        yield server


# --- the mock Responses API -----------------------------------------------------------------


def test_the_first_turn_replays_the_reply_as_the_offered_exec_command(mock: Any) -> None:
    status, body = post(mock.url, json.dumps({"tools": TOOLS, "input": []}).encode())
    assert status == 200
    sent = events(body)
    assert [e["type"] for e in sent] == [
        "response.created",
        "response.output_item.done",
        "response.completed",
    ]
    item = sent[1]["item"]
    assert (item["type"], item["name"], item["call_id"]) == (
        "function_call",
        "exec_command",
        "call_boundary_audit",
    )
    assert json.loads(item["arguments"]) == {"cmd": "printf '%s\\n' \"a  b\" > o.txt"}
    assert mock.offered == ["exec_command", "write_stdin"]


def test_shell_command_is_used_when_exec_command_is_not_offered() -> None:
    with mock_responses.MockResponses("ls", extra={"timeout_ms": 500}) as server:
        _, body = post(server.url, json.dumps({"tools": [], "input": []}).encode())
    item = events(body)[1]["item"]
    assert item["name"] == "shell_command"
    assert item["arguments"] == '{"command": "ls", "timeout_ms": 500}'


def test_the_function_call_output_is_recorded_and_the_turn_ends(mock: Any) -> None:
    post(mock.url, json.dumps({"tools": TOOLS, "input": []}).encode())
    back = {"type": "function_call_output", "call_id": "call_boundary_audit", "output": "x\n"}
    _, body = post(mock.url, json.dumps({"tools": TOOLS, "input": [back]}).encode())
    final = events(body)[1]["item"]
    assert (final["type"], final["content"][0]["text"]) == ("message", "done")
    assert (mock.output, len(mock.requests), mock.problems) == ("x\n", 2, [])


def test_unreadable_requests_are_refused_and_noted(mock: Any) -> None:
    assert post(mock.url, b"{not json")[0] == 400
    assert post(mock.url, b"\x28\xb5", {"Content-Encoding": "zstd"})[0] == 400
    assert mock.problems == [
        "a request body was not JSON",
        "request body encoded as zstd: not readable",
    ]
    assert mock.call is None


def test_a_second_request_without_the_output_ends_the_turn_and_is_noted(mock: Any) -> None:
    post(mock.url, json.dumps({"tools": TOOLS, "input": []}).encode())
    _, body = post(mock.url, json.dumps({"tools": TOOLS, "input": []}).encode())
    assert events(body)[1]["item"]["type"] == "message"
    assert mock.problems == ["request 2 carried no output for the call"]


def test_an_unknown_tool_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="tool must be offered"):
        mock_responses.MockResponses("ls", tool="shell")


# --- reading Codex's function-call output ---------------------------------------------------


def test_exec_command_output_is_split_into_header_and_body() -> None:
    text = (
        "Chunk ID: a053fc\nWall time: 0.0000 seconds\nProcess exited with code 3\n"
        "Original token count: 2\nOutput:\nOutput:\nx\n"
    )
    assert drive_codex._verdict(text) == {
        "status": "executed",
        "observation": "Output:\nx\n",
        "exit_code": 3,
        "notes": ["Process exited with code 3", "Original token count: 2"],
    }


def test_a_live_session_is_a_timeout_and_a_refused_call_is_named() -> None:
    running = "Chunk ID: d3\nWall time: 1.0008 seconds\nProcess running with session ID 14154\n"
    assert drive_codex._verdict(running + "Output:\n")["status"] == "timeout"
    refused = drive_codex._verdict("unsupported call: shell_command")
    assert (refused["status"], refused["exit_code"]) == ("unsupported-call", None)
    assert drive_codex._verdict("Exit code: 2\nOutput:\nno\n")["exit_code"] == 2


def test_codex_refusing_to_start_the_process_is_a_rejection_or_a_failed_exec() -> None:
    policy = (
        "exec_command failed: CreateProcess { message: \"Rejected(\\\"`/bin/bash -lc 'rm -rf'` "
        'rejected: rm -f style commands are not permitted. Use a safer approach\\")" }'
    )
    spawn = (
        'exec_command failed: CreateProcess { message: "Rejected(\\"Failed to create unified '
        'exec process: Argument list too long (os error 7)\\")" }'
    )
    assert drive_codex._verdict(policy) == {
        "status": "rejected",
        "observation": policy,
        "exit_code": None,
        "notes": [],
    }
    assert drive_codex._verdict(spawn)["status"] == "exec-failed"


# --- the real codex exec --------------------------------------------------------------------


Run = Callable[..., tuple[DriverOutcome, dict[str, bytes]]]


@pytest.fixture
def codex(harness_env: Callable[[str], Installation], harness_box: Sandbox) -> Run:
    harness_env("codex")

    def go(reply: str, **params: Any) -> tuple[DriverOutcome, dict[str, bytes]]:
        transport = make_harness_transport("codex", **params)
        with harness_box.workspace() as ws:
            outcome = transport.drive(reply, ws, harness_box)
            left = {
                p.relative_to(ws.work).as_posix(): p.read_bytes()
                for p in sorted(ws.work.rglob("*"))
                if p.is_file()
            }
        return outcome, left

    return go


@pytest.mark.harness
@pytest.mark.bwrap
def test_codex_runs_the_decoded_command_once_and_reports_its_exit_code(codex: Run) -> None:
    reply = "printf '%s\\n' \"a  b\" 'it'\"'\"'s' > o.txt; cat o.txt; exit 3"
    outcome, left = codex(reply)
    assert (outcome.status, outcome.exit_code) == ("executed", 3)
    assert outcome.observation == "a  b\nit's\n"
    assert outcome.notes[:2] == ("tool exec_command", "Process exited with code 3")
    assert left == {"o.txt": b"a  b\nit's\n"}


@pytest.mark.harness
@pytest.mark.bwrap
def test_the_snapshot_wrapper_execs_bash_c_and_without_it_bash_lc_runs(codex: Run) -> None:
    reply = "tr '\\0' ' ' < /proc/$$/cmdline > argv.txt"
    _, wrapped = codex(reply)
    _, plain = codex(reply, snapshot=False)
    assert wrapped == {"argv.txt": f"/bin/bash -c {reply} ".encode()}
    assert plain == {"argv.txt": f"/bin/bash -lc {reply} ".encode()}


@pytest.mark.harness
@pytest.mark.bwrap
def test_stdin_is_dev_null_and_a_slow_command_is_killed_after_the_yield(codex: Run) -> None:
    reply = 'read x; echo "rc=$? x=$x" > r.txt; sleep 5; echo late > late.txt'
    outcome, left = codex(reply, timeout=1)
    assert (outcome.status, outcome.exit_code, outcome.observation) == ("timeout", None, "")
    assert outcome.notes[1].startswith("Process running with session ID ")
    assert left == {"r.txt": b"rc=1 x=\n"}


@pytest.mark.harness
@pytest.mark.bwrap
def test_a_tool_codex_does_not_offer_is_refused_and_nothing_runs(codex: Run) -> None:
    outcome, left = codex("echo ran > ran.txt", tool="shell_command")
    assert (outcome.status, outcome.observation) == (
        "unsupported-call",
        "unsupported call: shell_command",
    )
    assert left == {}


@pytest.mark.harness
@pytest.mark.bwrap
def test_codex_refuses_rm_f_even_with_full_access_and_runs_none_of_the_command(
    codex: Run,
) -> None:
    outcome, left = codex("echo kept > kept.txt; rm -f other.txt")
    assert (outcome.status, outcome.exit_code, left) == ("rejected", None, {})
    assert "rejected: rm -f style commands are not permitted" in outcome.observation


# --- the npm lock ------------------------------------------------------------------------------


def test_the_npm_lock_is_part_of_the_digest_and_pure_python_digests_are_unchanged() -> None:
    from boundary_audit.harness import SYSTEMS

    codex_spec = SYSTEMS["codex"].spec
    assert sorted(codex_spec.npm_files()) == ["package-lock.json", "package.json"]
    assert '"@openai/codex": "0.171.0"' in codex_spec.npm_files()["package.json"]
    plain = hashlib.sha256(codex_spec.lock_text().encode()).hexdigest()
    assert codex_spec.lock_digest() != plain
    swe = SYSTEMS["swe-agent"].spec
    assert swe.npm_files() == {}
    assert swe.lock_digest() == hashlib.sha256(swe.lock_text().encode()).hexdigest()


def test_without_npm_the_install_stops_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boundary_audit.harness.install as installer
    from boundary_audit.errors import HarnessError
    from boundary_audit.harness import SYSTEMS

    monkeypatch.setattr(installer.shutil, "which", lambda name: None)
    with pytest.raises(HarnessError) as caught:
        installer._npm_install(SYSTEMS["codex"].spec, tmp_path, lambda _: None)
    assert caught.value.message == "the codex harness needs npm, which is not installed"
    assert not (tmp_path / "npm").exists()
