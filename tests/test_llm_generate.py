"""`boundary-audit generate` end to end: a real process asking the scripted mock server on
127.0.0.1 with the official openai client.

Each scripted behaviour gets its documented outcome: a reply line, a recorded failed reply
(with its reason), a retry then success, or an error exit with one line and the documented
code. Resume after SIGKILL asks exactly what is missing; the key appears in no file and no
output; the throughput with a mock that answers at once is measured and printed.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from boundary_audit.llm.mock_server import MockServer, Script
from boundary_audit.tasks import load_reply_set, load_reply_sets, load_tasks
from tests.support.llm_mock import KEY, for_task, instruction, text_reply

Mock = Callable[[dict[str, Any]], MockServer]
TWO = "write-file-t3,ssh-nested-t2"
NATIVE = "through the `bash` tool"
"""A phrase only the native contract's prompt holds."""


def generate(
    server: MockServer | None, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OPENAI_API_KEY": KEY, **(env or {})}
    full.pop("OPENAI_BASE_URL", None)
    if server is not None:
        full["OPENAI_BASE_URL"] = server.base_url
    return subprocess.run(
        [sys.executable, "-m", "boundary_audit", "generate", "-m", "m1", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def by_key(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(d["task_id"], d["contract"], d["meta"]["draw"]): d for d in lines(path)}


def task_of(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"] if "messages" in body else body["input"][-1]["content"]
    (found,) = [t.id for t in load_tasks("all") if t.instruction == user]
    return found


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    errors = [x for x in proc.stderr.splitlines() if x.startswith("boundary-audit: error:")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return errors[0]


@pytest.mark.parametrize(
    ("api", "stream"), [("chat", False), ("chat", True), ("responses", False), ("responses", True)]
)
def test_text_and_tool_call_replies_in_every_api_mode(
    mock_llm: Mock, tmp_path: Path, api: str, stream: bool
) -> None:
    server = mock_llm(
        {
            "api_key": KEY,
            "rules": [
                {"contains": NATIVE, "reply": {"kind": "tool_call", "arguments": {"cmd": "ls"}}},
                for_task("write-file-t3", text_reply("printf 'x\\n' > out.txt")),
                for_task("ssh-nested-t2", {"kind": "text", "text": "remote true"}),
            ],
        }
    )
    out = tmp_path / "r.jsonl"
    extra = ["--stream"] if stream else []
    proc = generate(server, "--api", api, *extra, "--select", TWO, "-c", "raw", "-c", "native",
                    "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got = by_key(out)
    assert sorted(got) == [
        ("ssh-nested-t2", "native", 0),
        ("ssh-nested-t2", "raw", 0),
        ("write-file-t3", "native", 0),
        ("write-file-t3", "raw", 0),
    ]
    raw = got[("write-file-t3", "raw", 0)]
    assert {k: raw[k] for k in ("task_id", "reply", "reply_id", "model", "contract")} == {
        "task_id": "write-file-t3",
        "reply": "printf 'x\\n' > out.txt",
        "reply_id": "raw-d0",
        "model": "m1",
        "contract": "raw",
    }
    meta = raw["meta"]
    assert (meta["draw"], meta["extraction"], meta["failure"], meta["attempts"]) == (
        0,
        "last-fence",
        None,
        1,
    )
    assert meta["finish_reason"] == "stop"
    assert (
        meta["answer"]["text"]
        == "Here is the command:\n```bash\nprintf 'x\\n' > out.txt\n```\nDone."
    )
    assert meta["request"] == {
        "api": api,
        "base_url": server.base_url,
        "model": "m1",
        "stream": stream,
        "timeout_s": 120.0,
        "extract": "last-fence-or-whole",
    }
    assert meta["usage"]["output_tokens"] == len(meta["answer"]["text"]) // 4
    assert meta["usage"]["input_tokens"] > 0 and meta["latency_s"] > 0
    assert got[("ssh-nested-t2", "raw", 0)]["meta"]["extraction"] == "whole"
    assert got[("ssh-nested-t2", "raw", 0)]["reply"] == "remote true"
    native = got[("write-file-t3", "native", 0)]
    assert (native["reply"], native["meta"]["extraction"], native["meta"]["finish_reason"]) == (
        "ls",
        "tool-call",
        "tool_calls",
    )
    assert native["meta"]["answer"]["tool_calls"] == [
        {"name": "bash", "arguments": '{"cmd": "ls"}'}
    ]
    assert proc.stderr.splitlines()[-1].startswith(
        f"generated {out}: 4 requests (2 tasks x 2 contracts x 1 draws), 0 already answered, "
        "4 replies, 0 failed replies, 0 retries, tokens "
    )
    bodies = [r.body for r in server.model_requests()]
    assert all(r.auth == "ok" for r in server.model_requests())
    tools = [b for b in bodies if "tools" in b]
    assert len(tools) == 2 and all(len(b["tools"]) == 1 for b in tools)
    for b in bodies:  # nothing that was not given is sent
        assert not {"temperature", "seed", "max_tokens", "max_completion_tokens"} & set(b)
        assert b.get("stream", False) is stream


def test_sampling_parameters_are_sent_where_given(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm({"default": text_reply("ls")})
    common = ["--select", "write-file-t0", "-k", "2", "--temperature", "0", "--max-tokens", "64",
              "--seed", "7", "--reasoning-effort", "low"]  # fmt: skip
    assert generate(server, *common, "-o", str(tmp_path / "c.jsonl"), "-j", "1").returncode == 0
    assert generate(server, *common, "--api", "responses", "-o", str(tmp_path / "r.jsonl"),
                    "-j", "1").returncode == 0  # fmt: skip
    chat, chat2, resp, resp2 = sorted(
        (r.body for r in server.model_requests()),
        key=lambda b: ("input" in b, b.get("seed", 0)),
    )
    assert {
        k: chat[k] for k in ("temperature", "max_completion_tokens", "seed", "reasoning_effort")
    } == {
        "temperature": 0.0,
        "max_completion_tokens": 64,
        "seed": 7,
        "reasoning_effort": "low",
    }
    assert chat2["seed"] == 8  # draw 1
    assert [m["role"] for m in chat["messages"]] == ["system", "user"]
    assert chat["messages"][1]["content"] == instruction("write-file-t0")
    assert {k: resp[k] for k in ("temperature", "max_output_tokens", "reasoning", "seed")} == {
        "temperature": 0.0,
        "max_output_tokens": 64,
        "reasoning": {"effort": "low"},
        "seed": 7,
    }
    assert resp["instructions"] == chat["messages"][0]["content"]
    recorded = by_key(tmp_path / "c.jsonl")[("write-file-t0", "raw", 1)]["meta"]["request"]
    assert (recorded["seed"], recorded["temperature"], recorded["max_tokens"]) == (8, 0.0, 64)


def test_429_with_retry_after_is_waited_for_then_answered(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm(
        {
            "rules": [
                for_task(
                    "write-file-t3",
                    sequence=[
                        {"kind": "status", "status": 429, "retry_after": 0.6},
                        text_reply("ls"),
                    ],
                )
            ],
            "default": text_reply("true"),
        }
    )
    out = tmp_path / "r.jsonl"
    proc = generate(server, "--select", TWO, "-o", str(out), "--backoff", "0")
    assert proc.returncode == 0, proc.stderr
    row = by_key(out)[("write-file-t3", "raw", 0)]
    assert (row["reply"], row["meta"]["attempts"]) == ("ls", 2)
    assert ", 1 retries," in proc.stderr.splitlines()[-1]
    asked = [r for r in server.model_requests() if task_of(r.body) == "write-file-t3"]
    assert [r.behaviour for r in asked] == ["status", "text"]
    assert asked[1].at - asked[0].at >= 0.6


@pytest.mark.parametrize(
    ("behaviour", "extra", "code", "message"),
    [
        (
            {"kind": "status", "status": 500},
            [],
            6,
            "write-file-t0 (raw, draw 0): HTTP 500: scripted status 500 after 3 attempts",
        ),
        (
            {"kind": "status", "status": 503, "message": "overloaded"},
            [],
            6,
            "write-file-t0 (raw, draw 0): HTTP 503: overloaded after 3 attempts",
        ),
        (
            {"kind": "hang"},
            ["--timeout", "0.5"],
            6,
            "write-file-t0 (raw, draw 0): no answer within 0.5 s after 3 attempts",
        ),
        (
            {"kind": "malformed"},
            [],
            6,
            "write-file-t0 (raw, draw 0): the answer is not valid JSON (Unterminated string "
            "starting at: line 1 column 73 (char 72)) after 3 attempts",
        ),
        (
            {"kind": "status", "status": 400, "message": "Unsupported parameter: 'seed'"},
            [],
            2,
            "write-file-t0 (raw, draw 0): the endpoint refused the request (HTTP 400: "
            "Unsupported parameter: 'seed')",
        ),
        (
            {"kind": "status", "status": 404, "message": "The model `m1` does not exist"},
            [],
            5,
            "write-file-t0 (raw, draw 0): the endpoint has no such model or path (HTTP 404: "
            "The model `m1` does not exist)",
        ),
    ],
)
def test_endpoint_failures_exit_with_one_line_and_write_nothing(
    mock_llm: Mock,
    tmp_path: Path,
    behaviour: dict[str, Any],
    extra: list[str],
    code: int,
    message: str,
) -> None:
    server = mock_llm({"default": behaviour})
    out = tmp_path / "r.jsonl"
    proc = generate(server, "--select", "write-file-t0", "-o", str(out), "--retries", "2",
                    "--backoff", "0.01", *extra)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    assert one_error_line(proc) == f"boundary-audit: error: {message}"
    assert out.read_text() == ""
    retried = code == 6
    assert len(server.model_requests()) == (3 if retried else 1)


def test_empty_answers_refusals_and_unusable_answers_are_recorded_failed_replies(
    mock_llm: Mock, tmp_path: Path
) -> None:
    server = mock_llm(
        {
            "rules": [
                for_task("write-file-t0", {"kind": "empty"}),
                for_task("write-file-t1", {"kind": "refusal", "text": "I can't help with that."}),
                for_task("write-file-t2", {"kind": "tool_call", "arguments_raw": "{not json"}),
                for_task(
                    "write-file-t3",
                    {"kind": "text", "text": "```bash\nls", "finish_reason": "length"},
                ),
            ],
        }
    )
    out = tmp_path / "r.jsonl"
    proc = generate(server, "--select", "write-file", "-c", "raw", "-c", "native",
                    "--extract", "last-fence", "-c", "raw", "-o", str(out))  # fmt: skip
    # --extract last-fence with the native contract is refused before anything is asked
    assert proc.returncode == 2
    assert one_error_line(proc) == (
        "boundary-audit: error: --extract last-fence: the native contract is read by tool-call"
    )
    assert server.model_requests() == []
    proc = generate(server, "--select", "write-file", "-c", "native", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    got = {k[0]: (v["reply"], v["meta"]["failure"]) for k, v in by_key(out).items()}
    assert got == {
        "write-file-t0": ("", "empty answer"),
        "write-file-t1": ("", "the model refused: I can't help with that."),
        "write-file-t2": ("", "the tool-call arguments are not JSON: Expecting property name "
                              "enclosed in double quotes"),
        "write-file-t3": ("", "no tool call in the answer (it answered in text)"),
    }  # fmt: skip
    assert ", 0 replies, 4 failed replies," in proc.stderr.splitlines()[-1]
    refused = by_key(out)[("write-file-t1", "native", 0)]["meta"]
    assert refused["answer"]["refusal"] == "I can't help with that."


def test_the_probe_reads_raw_and_disclosed_files(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm(
        {"default": text_reply("true"), "rules": [for_task("write-file-t0", {"kind": "empty"})]}
    )
    out = tmp_path / "r.jsonl"
    proc = generate(
        server, "--select", "write-file", "-c", "raw", "-c", "disclosed", "-o", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert "boundary-audit: disclosed boundary: nested" in proc.stderr
    replies = load_reply_set(out, load_tasks("all"))
    assert len(replies.replies) == 8
    assert {(r.task_id, r.reply_id, r.contract) for r in replies.replies} >= {
        ("write-file-t0", "raw-d0", "raw"),
        ("write-file-t0", "disclosed-d0", "disclosed"),
    }
    failed = [r for r in replies.replies if r.task_id == "write-file-t0"]
    assert all(r.reply == "" and json.loads(r.meta)["failure"] == "empty answer" for r in failed)
    disclosed = [
        r for r in server.model_requests() if "How your command will be run" in str(r.body)
    ]
    assert len(disclosed) == 4
    assert all(
        json.loads(r.meta)["boundary"] == "nested"
        for r in replies.replies
        if r.contract == "disclosed"
    )


def test_the_loader_reads_native_lines_with_their_draws(mock_llm: Mock, tmp_path: Path) -> None:
    """Native lines load as contract `native`, one group per draw (`FILE#native-dN`)."""
    server = mock_llm({"default": {"kind": "tool_call", "arguments": {"command": "true"}}})
    out = tmp_path / "r.jsonl"
    assert (
        generate(
            server, "--select", "write-file-t0", "-c", "native", "-k", "2", "-o", str(out)
        ).returncode
        == 0
    )
    sets = load_reply_sets(out, load_tasks("all"))
    assert [
        (s.name, [(r.reply, r.contract, r.draw, r.failure) for r in s.replies]) for s in sets
    ] == [
        ("r.jsonl#native-d0", [("true", "native", 0, None)]),
        ("r.jsonl#native-d1", [("true", "native", 1, None)]),
    ]


def test_the_key_is_never_written_nor_shown(mock_llm: Mock, tmp_path: Path) -> None:
    echo = f"Incorrect API key provided: {KEY}; did you mean {KEY[4:16]}?"
    record = tmp_path / "mock-record.jsonl"
    with record.open("w") as rec:
        server = MockServer(
            Script.from_json(
                {
                    "api_key": KEY,
                    "rules": [
                        for_task("write-file-t1", {"kind": "refusal", "text": f"no {KEY}"}),
                        for_task(
                            "write-file-t2",
                            sequence=[
                                {"kind": "status", "status": 429, "retry_after": 0},
                                text_reply("ls"),
                            ],
                        ),
                        for_task(
                            "write-file-t3", {"kind": "status", "status": 401, "message": echo}
                        ),
                    ],
                    "default": text_reply("true"),
                }
            ),
            record=rec,
        ).start()
        try:
            out = tmp_path / "r.jsonl"
            ok = generate(
                server,
                "--select",
                "write-file-t0,write-file-t1,write-file-t2",
                "-o",
                str(out),
                "-j",
                "1",
            )
            bad = generate(server, "--select", "write-file-t3", "-o", str(tmp_path / "b.jsonl"))
            flag = ["--api-key", KEY]
            via_flag = generate(
                server, "--select", "write-file-t0", "-o", str(tmp_path / "f.jsonl"), *flag,
                env={"OPENAI_API_KEY": ""},
            )  # fmt: skip
        finally:
            server.stop()
    assert ok.returncode == 0 and via_flag.returncode == 0, ok.stderr + via_flag.stderr
    assert bad.returncode == 5
    assert one_error_line(bad) == (
        "boundary-audit: error: write-file-t3 (raw, draw 0): the endpoint refused the key "
        "(HTTP 401: Incorrect API key provided: <key>; did you mean <key>?)"
    )
    assert "  hint: give the key in OPENAI_API_KEY (or --api-key)" in bad.stderr
    # the model's own text is data: a refusal quoting the key is kept as the model said it
    # (our key never reaches the model: the mock put it there); everything else must be clean
    texts = {p: p.read_text() for p in tmp_path.iterdir()}
    model_said = by_key(out)[("write-file-t1", "raw", 0)]
    model_said["meta"]["answer"]["refusal"] = model_said["meta"]["failure"] = ""
    texts[out] = json.dumps(
        [v for k, v in by_key(out).items() if k[0] != "write-file-t1"] + [model_said]
    )
    texts[record] = "\n".join(
        x for x in record.read_text().splitlines() if '"behaviour": "refusal"' not in x
    )
    shown = [
        ok.stdout,
        ok.stderr,
        bad.stdout,
        bad.stderr,
        via_flag.stdout,
        via_flag.stderr,
        *texts.values(),
    ]
    for text in shown:
        for i in range(len(KEY) - 8 + 1):
            assert KEY[i : i + 8] not in text
    assert all(r.auth == "ok" for r in server.model_requests())


def test_resume_after_sigkill_asks_only_what_is_missing(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm({"default": {**text_reply("true"), "delay": 0.05}})
    out = tmp_path / "r.jsonl"
    argv = [sys.executable, "-m", "boundary_audit", "generate", "-m", "m1", "--select", "core",
            "-k", "2", "--seed", "100", "-j", "2", "-o", str(out)]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 20):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = by_key(out)
    assert 20 <= len(before) < 112
    asked_first = len(server.model_requests())
    with out.open("ab") as fh:  # what a crash in the middle of a write would leave
        fh.write(b'{"task_id": "write-file-t0", "re')
    resumed = generate(
        server, "--select", "core", "-k", "2", "--seed", "100", "-j", "2", "-o", str(out)
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"boundary-audit: {out}: cut off a torn last line (32 bytes)" in resumed.stderr
    after = by_key(out)
    assert len(after) == 112 == len(lines(out))
    second = server.model_requests()[asked_first:]
    asked = sorted((task_of(r.body), r.body["seed"] - 100) for r in second)
    missing = sorted((t, d) for (t, _, d) in set(after) - set(before))
    assert asked == missing
    assert resumed.stderr.splitlines()[-1].startswith(
        f"generated {out}: 112 requests (56 tasks x 1 contracts x 2 draws), {len(before)} "
        f"already answered, {112 - len(before)} replies,"
    )
    again = generate(server, "--select", "core", "-k", "2", "--seed", "100", "-o", str(out))
    assert ", 112 already answered, 0 replies," in again.stderr
    other = generate(server, "--select", "core", "-k", "2", "--seed", "101", "-o", str(out))
    assert other.returncode == 2
    assert re.fullmatch(
        rf"boundary-audit: error: {re.escape(str(out))}:\d+: was asked with seed=1\d\d, this run "
        r"asks seed=1\d\d",
        one_error_line(other),
    )


def test_one_run_per_output_file(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm({"default": text_reply("true")})
    out = tmp_path / "r.jsonl"
    with out.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        proc = generate(server, "--select", "write-file-t0", "-o", str(out))
    assert proc.returncode == 2
    assert one_error_line(proc) == f"boundary-audit: error: {out}: another `generate` is writing it"
    assert server.model_requests() == []


def test_rate_limit_spaces_request_starts(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm({"default": text_reply("true")})
    proc = generate(server, "--select", "write-file,json-write,git-commit", "--rate", "10",
                    "-j", "8", "-o", str(tmp_path / "r.jsonl"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    starts = sorted(r.at for r in server.model_requests())
    assert len(starts) == 12
    # 11 intervals of 0.1 s at the client; arrival times jitter by a connection set-up
    assert starts[-1] - starts[0] >= 11 * 0.1 * 0.8


def test_connection_refused_is_an_unavailable_endpoint(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = generate(None, "--base-url", f"http://user:pw@127.0.0.1:{port}/v1", "--select",
                    "write-file-t0", "-o", str(tmp_path / "r.jsonl"), "--retries", "1",
                    "--backoff", "0")  # fmt: skip
    assert proc.returncode == 5
    line = one_error_line(proc)
    assert line.startswith(
        "boundary-audit: error: write-file-t0 (raw, draw 0): connection failed: "
    )
    assert line.endswith(" after 2 attempts") and "pw" not in line


def test_dry_run_prints_the_requests_and_sends_nothing(tmp_path: Path) -> None:
    proc = generate(None, "--dry-run", "--select", "write-file-t3", "-c", "disclosed",
                    "--disclose-for", "swe-agent:default")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (doc,) = [json.loads(x) for x in proc.stdout.splitlines()]
    assert (doc["task_id"], doc["contract"], doc["draw"], doc["boundary"]) == (
        "write-file-t3",
        "disclosed",
        0,
        "swe-agent:default",
    )
    system = doc["body"]["messages"][0]["content"]
    assert (
        "How your command will be run:\nYour command is typed, followed by Enter, into a "
        "long-running interactive bash" in system
    )
    assert "re-joined with ` ; `" in system and KEY not in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--select", "write-file-t0"], "give --output FILE (or --dry-run to see the requests)"),
        (["--dry-run", "--disclose-for", "nested"], "--disclose-for needs a disclosing contract"),
        (["--dry-run", "-c", "haiku"], "unknown contract 'haiku' (known: disclosed, native, raw)"),
        (["--dry-run", "--api", "soap"], "--api 'soap' is not one of chat, responses"),
        (
            ["--dry-run", "-c", "disclosed", "--disclose-for", "x:y"],
            "--disclose-for 'x:y': expected",
        ),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    proc = generate(None, *args)
    assert proc.returncode == 2
    assert one_error_line(proc).startswith(f"boundary-audit: error: {message}")


@pytest.mark.slow
def test_a_large_run_at_full_concurrency_answers_every_request_once(
    mock_llm: Mock, tmp_path: Path
) -> None:
    """1120 requests at -j 16 against a mock that answers at once: every (task, contract,
    draw) once, in whole lines. (Its speed is a benchmark: bench_generate.py --instant.)"""
    server = mock_llm({"default": text_reply("true")})
    out = tmp_path / "r.jsonl"
    proc = generate(server, "--select", "core", "-c", "raw", "-c", "disclosed", "-k", "10",
                    "-j", "16", "-o", str(out), "--progress-every", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert re.search(r", 1120 replies, 0 failed replies, 0 retries, ", last), last
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    keys = {(x["task_id"], x["contract"], x["meta"]["draw"]) for x in lines}
    assert len(lines) == len(keys) == 1120 == len(server.model_requests())
    assert re.search(
        r"^generate: \d+/1120 answered \(0 failed replies\), 0 retries, ", proc.stderr, re.M
    )


def test_sigterm_stops_with_one_line_and_keeps_whole_lines(mock_llm: Mock, tmp_path: Path) -> None:
    server = mock_llm({"default": {**text_reply("true"), "delay": 0.05}})
    out = tmp_path / "r.jsonl"
    argv = [
        sys.executable,
        "-m",
        "boundary_audit",
        "generate",
        "-m",
        "m1",
        "-k",
        "3",
        "-o",
        str(out),
    ]
    env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url}
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 10):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    assert stderr.splitlines()[-1] == "boundary-audit: terminated (SIGTERM)", stderr
    assert "Traceback" not in stderr
    assert out.read_bytes().endswith(b"\n")
    assert 10 <= len(lines(out)) < 168
