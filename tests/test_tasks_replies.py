"""Reply sets: the built-in oracle/naive sets and JSONL files, with file:line errors (exit 4)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from boundary_audit.errors import ExitCode, ProbeError
from boundary_audit.tasks import Reply, load_reply_set, load_tasks


def test_builtin_sets_hold_every_task_once() -> None:
    tasks = load_tasks()
    oracle = load_reply_set("oracle", tasks)
    naive = load_reply_set("naive", tasks)
    assert oracle.name == "oracle" and naive.name == "naive"
    assert [r.task_id for r in oracle.replies] == [t.id for t in tasks]
    first = tasks[0]
    assert oracle.for_task(first.id) == (Reply(first.id, first.oracle, "oracle"),)
    assert naive.for_task(first.id)[0].reply == first.naive
    assert [r.task_id for r in oracle.restricted(load_tasks("env-pass")).replies] == [
        "env-pass-t0",
        "env-pass-t1",
        "env-pass-t2",
        "env-pass-t3",
    ]


def test_jsonl_file_with_defaults_and_options(tmp_path: Path) -> None:
    path = tmp_path / "model.jsonl"
    lines = [
        {"task_id": "write-file-t0", "reply": "printf 'hello world\\n' > hello.txt"},
        {},
        {
            "task_id": "write-file-t0",
            "reply": "",
            "reply_id": "r2",
            "model": "m-1",
            "contract": "disclosed",
            "meta": {"tokens": 12, "a": [1]},
        },
    ]
    path.write_text(
        "\n".join(json.dumps(x) if x else "   " for x in lines) + "\n", encoding="utf-8"
    )
    rs = load_reply_set(path, load_tasks())
    assert rs.name == "model.jsonl"
    assert rs.replies == (
        Reply("write-file-t0", "printf 'hello world\\n' > hello.txt", "line1"),
        Reply("write-file-t0", "", "r2", "m-1", "disclosed", '{"a": [1], "tokens": 12}'),
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"task_id": "write-file-t0", "reply": "x"}\n{"task_id": \n',
            "{f}:2: invalid JSON: Expecting value (column 13)",
        ),
        (b'["write-file-t0", "x"]\n', "{f}:1: expected a JSON object, got list"),
        (b'{"reply": "x"}\n', "{f}:1: missing 'task_id'"),
        (b'{"task_id": "write-file-t0"}\n', "{f}:1: missing 'reply'"),
        (b'{"task_id": "write-file-t0", "reply": 3}\n', "{f}:1: 'reply' must be a string, got int"),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "replyid": "a"}\n',
            "{f}:1: unknown key 'replyid' "
            "(allowed: task_id, reply, reply_id, model, contract, meta)",
        ),
        (b'{"task_id": "write-file-t9", "reply": "x"}\n', "{f}:1: unknown task id 'write-file-t9'"),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "contract": "natvie"}\n',
            "{f}:1: contract 'natvie' is not one of raw, disclosed, native",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "reply_id": ""}\n',
            "{f}:1: reply_id must not be empty",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "meta": 1}\n',
            "{f}:1: meta must be a JSON object",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "a", "reply_id": "r"}\n\n'
            b'{"task_id": "write-file-t0", "reply": "b", "reply_id": "r"}\n',
            "{f}:3: reply_id 'r' for task 'write-file-t0' repeats line 1",
        ),
        (b'{"task_id": "write-file-t0", "reply": "\xff"}\n', "{f}:1: not UTF-8 (byte 39)"),
        (b"\n\n", "{f}: no replies (expected one JSON object per line)"),
        (
            b'{"task_id": "write-file-t0", "reply": "a"}\n{"task_id": "write-file-t0", '
            b'"reply": "echo a\\u0000b", "reply_id": "r"}\n',
            "{f}:2: 'reply' holds a NUL character (U+0000) at character 6",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x\\ud83d"}\n',
            "{f}:1: 'reply' holds a lone surrogate U+D83D at character 1 "
            "(not Unicode text: it has no UTF-8 encoding)",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "model": "\\udc80"}\n',
            "{f}:1: 'model' holds a lone surrogate U+DC80 at character 0 "
            "(not Unicode text: it has no UTF-8 encoding)",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "reply_id": "a\\u0000"}\n',
            "{f}:1: 'reply_id' holds a NUL character (U+0000) at character 1",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "meta": {"a": [{"\\ud800": 1}]}}\n',
            "{f}:1: a key of 'meta' holds a lone surrogate U+D800 at character 0 "
            "(not Unicode text: it has no UTF-8 encoding)",
        ),
        (
            b'{"task_id": "write-file-t0", "reply": "x", "meta": {"a": ["ok", "\\udfff"]}}\n',
            "{f}:1: a string in 'meta' holds a lone surrogate U+DFFF at character 0 "
            "(not Unicode text: it has no UTF-8 encoding)",
        ),
    ],
)
def test_bad_reply_files_name_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    with pytest.raises(ProbeError) as exc:
        load_reply_set(path, load_tasks())
    assert exc.value.exit_code == ExitCode.INPUT
    assert exc.value.message == message.format(f=path)


def test_a_paired_surrogate_escape_and_nul_in_meta_are_text(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'{"task_id": "write-file-t0", "reply": "echo \\ud83d\\ude00", "meta": {"n": "\\u0000"}}\n'
    )
    (reply,) = load_reply_set(path, load_tasks()).replies
    assert reply.reply == "echo \U0001f600" and reply.meta == '{"n": "\\u0000"}'


def test_a_builtin_reply_that_is_not_text_is_a_data_error() -> None:
    task = dataclasses.replace(load_tasks("write-file-t0")[0], oracle="printf 'a\0b'")
    with pytest.raises(ProbeError) as exc:
        load_reply_set("oracle", [task])
    assert exc.value.exit_code == ExitCode.INPUT
    assert exc.value.message == (
        f"{task.source_file}: task write-file-t0: its oracle reply "
        "holds a NUL character (U+0000) at character 9"
    )


def test_missing_reply_file(tmp_path: Path) -> None:
    with pytest.raises(
        ProbeError, match=r"r\.jsonl: cannot read reply file: No such file or directory$"
    ):
        load_reply_set(tmp_path / "r.jsonl", load_tasks())


def _lines(path: Path, objs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


def test_draws_and_contracts_split_a_file_into_groups(tmp_path: Path) -> None:
    """One set per (contract, draw) when a task has several replies from one model; a file
    with one reply per task per model stays one set named after the file (as before draws)."""
    from boundary_audit.tasks import load_reply_sets

    objs: list[dict[str, object]] = [
        {"task_id": "write-file-t0", "reply": f"r{c}{d}", "reply_id": f"{c}-d{d}",
         "model": "m", "contract": c, "meta": {"draw": d}}
        for c in ("disclosed", "raw") for d in (1, 0)
    ]  # fmt: skip
    objs.append({"task_id": "write-file-t0", "reply": "", "reply_id": "native-d0", "model": "m",
                 "contract": "native", "meta": {"draw": 0, "failure": "no tool call"}})  # fmt: skip
    sets = load_reply_sets(_lines(tmp_path / "r.jsonl", objs), load_tasks())
    assert [
        (s.name, s.origin, [(r.reply, r.draw, r.failure) for r in s.replies]) for s in sets
    ] == [
        ("r.jsonl#raw-d0", "r.jsonl", [("rraw0", 0, None)]),
        ("r.jsonl#raw-d1", "r.jsonl", [("rraw1", 1, None)]),
        ("r.jsonl#disclosed-d0", "r.jsonl", [("rdisclosed0", 0, None)]),
        ("r.jsonl#disclosed-d1", "r.jsonl", [("rdisclosed1", 1, None)]),
        ("r.jsonl#native-d0", "r.jsonl", [("", 0, "no tool call")]),
    ]
    one = [{"task_id": "write-file-t0", "reply": "x", "model": m, "meta": {"draw": 0}}
           for m in ("a", "b")]  # fmt: skip
    (whole,) = load_reply_sets(_lines(tmp_path / "one.jsonl", one), load_tasks())
    assert (whole.name, [r.model for r in whole.replies]) == ("one.jsonl", ["a", "b"])


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"draw": -1}, "{f}:1: meta.draw must be an integer >= 0, got -1"),
        ({"draw": True}, "{f}:1: meta.draw must be an integer >= 0, got True"),
        ({"draw": "0"}, "{f}:1: meta.draw must be an integer >= 0, got '0'"),
        ({"failure": 3}, "{f}:1: meta.failure must be a string or null"),
    ],
)
def test_bad_draws_and_failures_name_the_line(
    tmp_path: Path, meta: dict[str, object], message: str
) -> None:
    path = _lines(tmp_path / "r.jsonl", [{"task_id": "write-file-t0", "reply": "x", "meta": meta}])
    with pytest.raises(ProbeError) as exc:
        load_reply_set(path, load_tasks())
    assert exc.value.message == message.format(f=path)
    assert exc.value.exit_code == ExitCode.INPUT
