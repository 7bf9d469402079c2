"""Canaries and reply sources (observe/canary.py, observe/replies.py).

The probes of probes/*.toml are carried as they are: only the canary line's printf becomes the
marker, a probe whose line is piped on is left out with its reason, and the marker's record
is read back as that printf would have printed it (so a tokenizer's leftovers mean what they
mean through a transport). Arrival outcomes tell one lossless parse from a tokenizer's split
and from damage. The three plain reply sources hand over exactly the JSON array.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.errors import UsageError
from boundary_audit.observe import canary as cn
from boundary_audit.observe.replies import EnvReplies, FileReplies, StdinReplies
from boundary_audit.probes.load import load_probes
from boundary_audit.probes.model import Probe
from boundary_audit.sandbox import layout
from boundary_audit.sandbox.interface import Workspace


@pytest.fixture
def ws() -> Iterator[Workspace]:
    w = layout.new_workspace(fixed_inner=False, own_identity=False)
    try:
        yield w
    finally:
        layout.remove_workspace(w)


def probe(pid: str) -> Probe:
    return next(p for p in load_probes() if p.id == pid)


def test_tokens_are_letters_and_digits_unique_per_reply() -> None:
    a, b = cn.arrival_canaries(2)
    assert re.fullmatch(r"bacanary[0-9a-f]{12}", a.token) and a.token != b.token
    assert a.reply == f"{a.token} r0 'a b' \"c d\" $((6*7))"
    assert (a.label, b.label, a.parsed_once) == ("r0", "r1", ("r0", "a b", "c d", "42"))


def test_every_probe_is_carried_but_the_one_whose_line_is_piped_on() -> None:
    left_out = {p.id: cn.unsupported(p) for p in load_probes() if cn.unsupported(p)}
    assert left_out == {
        "operators": "its canary line is processed further (piped on), which a marker cannot carry"
    }
    control = probe("control")
    (c,) = cn.probe_canaries(control)
    assert c.reply == f"{c.token} control inert; : \x15{c.token} control acted"
    setup, check = cn.probe_canaries(probe("exit"))
    assert (setup.reply, setup.marks) == ("exit", False)
    assert (check.reply, check.marks) == (f"{check.token} after-exit alive", True)
    with pytest.raises(ValueError, match=r"^probe operators: its canary line is processed"):
        cn.probe_canaries(probe("operators"))


def record(ws: Workspace, token: str, n: int, *words: bytes) -> None:
    calls = ws.obs / "calls"
    calls.mkdir(exist_ok=True)
    (calls / f"{token}.{n}.argv").write_bytes(b"".join(w + b"\0" for w in words))


def test_records_are_read_in_call_order_and_rebuilt_as_printf_prints(ws: Workspace) -> None:
    (c,) = cn.probe_canaries(probe("control"))
    # a tokenizer handed the whole reply to one marker call: printf would reuse its format
    record(ws, c.token, 1, b"late", b"x")
    record(ws, c.token, 0, b"control", b"inert;", b":", b"\x15" + c.token.encode())
    assert cn.records(ws, c.token) == (
        (b"control", b"inert;", b":", b"\x15" + c.token.encode()),
        (b"late", b"x"),
    )
    fact = cn.probe_fact(probe("control"), [c], ws)
    assert (fact.outcome, fact.value) == ("unexpected", "inert;")
    (tab,) = cn.probe_canaries(probe("tab"))
    record(ws, tab.token, 0, b"tab", b"kept")
    assert cn.probe_fact(probe("tab"), [tab], ws).outcome == "kept"
    (tty,) = cn.probe_canaries(probe("tty"))
    assert cn.probe_fact(probe("tty"), [tty], ws).outcome == "missing"


def test_arrival_outcomes(ws: Workspace) -> None:
    (c,) = cn.arrival_canaries(1)
    assert cn.arrival_outcome(c, []) == cn.MISSING
    assert cn.arrival_outcome(c, [(b"r0", b"a b", b"c d", b"42")]) == cn.INTACT
    assert cn.arrival_outcome(c, [(b"r0", b"a b", b"c d", b"$((6*7))")]) == cn.UNPARSED
    split = (b"r0", b"'a", b"b'", b'"c', b'd"', b"$((6*7))")
    assert cn.arrival_outcome(c, [split]) == cn.UNPARSED
    assert cn.arrival_outcome(c, [(b"r0", b"a b", b"c")]) == cn.ALTERED


def test_install_puts_one_recorder_per_marker_in_bin(ws: Workspace) -> None:
    canaries = cn.arrival_canaries(2)
    cn.install(ws, canaries)
    for c in canaries:
        program = ws.bin / c.token
        assert os.access(program, os.X_OK)
        assert program.read_text().startswith(f"#!/bin/sh\n# {c.token}: boundary-audit argv")


REPLIES = ["echo 'a'\tb", "exit", "\x15\x00!"]


def test_the_env_source_holds_the_json_array_and_refuses_what_cannot_fit(ws: Workspace) -> None:
    with EnvReplies().deliver(REPLIES, ws) as d:
        assert d.stdin is None and json.loads(d.env["BA_REPLIES"]) == REPLIES
        assert "\0" not in d.env["BA_REPLIES"]
    with pytest.raises(UsageError) as caught, EnvReplies().deliver(["x" * (128 << 10)], ws):
        pass
    assert caught.value.message == (
        "the replies (131076 bytes as JSON) do not fit an environment variable; "
        "use the file or stdin source"
    )


def test_the_file_source_lives_for_the_block_only(ws: Workspace) -> None:
    with FileReplies().deliver(REPLIES, ws) as d:
        inner = d.env["BA_REPLIES_FILE"]
        host = ws.tmp / Path(inner).name
        assert inner == f"{ws.inner_tmp.rstrip('/')}/{host.name}"
        assert json.loads(host.read_text(encoding="utf-8")) == REPLIES
    assert not host.exists()


def test_the_stdin_source_is_the_array_then_eof(ws: Workspace) -> None:
    with StdinReplies().deliver(REPLIES, ws) as d:
        assert d.env == {} and d.stdin is not None
        assert json.loads(d.stdin.decode("utf-8")) == REPLIES
