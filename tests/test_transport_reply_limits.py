"""What no boundary can carry is the reply's failure, refused before anything runs.

Every registered transport refuses a reply over `MAX_REPLY_CHARS` and a reply that is not
Unicode text (a lone surrogate) with a `rejected` reason, without touching the sandbox; those
that hand R to a process as an argument also refuse a NUL, which used to escape as an internal
error (`ValueError: embedded null byte`, exit 6). The byte-stream boundaries (stdin, the
sessions, a script file) carry a NUL as the harness would. Host-side parsers of a reply
(tokenizers, JSON decoding, the adapters' pre-processors) stay bounded on multi-megabyte input.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from boundary_audit.adapters import StepSpec, TransportSpec, load_adapters
from boundary_audit.adapters.preprocess._bashlex_split import split_commands
from boundary_audit.adapters.preprocess.interface import Context
from boundary_audit.adapters.preprocess.swe_agent import (
    BASHLEX_IN_PROCESS_CHARS,
    BashlexSplit,
    split_in_child,
)
from boundary_audit.adapters.transport import AdapterTransport
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.transports import TRANSPORTS, make_transport
from boundary_audit.transports._docker_slots import SlotPool
from boundary_audit.transports.interface import MAX_REPLY_CHARS, note, rejection, within

ARGV_CARRIED = {"raw", "nested", "nested-escaped", "tmux-keys", "tmux-literal", "ssh", "docker"}
"""Transports that pass R verbatim inside a process argument."""
BYTES_CARRIED = {"stdin", "session", "session-pipe", "script-bash", "script-sh"}
"""Transports that write R's bytes to a stream or a file."""
NOT_TEXT = (
    "holds a lone surrogate U+D800 at character 5 (not Unicode text: it has no UTF-8 encoding)"
)


class UntouchedSandbox(Sandbox):
    """A sandbox that fails the test if anything is run in it."""

    name = "untouched"
    isolated = True

    def __init__(self, tmp: Path) -> None:
        super().__init__(Limits(timeout_s=2))
        self.tmp = tmp

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        paths = {n: self.tmp / n for n in ("work", "home", "obs", "bin")}
        for p in paths.values():
            p.mkdir(exist_ok=True)
        yield Workspace(
            "r", self.tmp, paths["work"], paths["home"], paths["obs"], paths["bin"], self.tmp,
            str(paths["work"]), str(paths["home"]), str(paths["obs"]), str(paths["bin"]),
            str(self.tmp),
        )  # fmt: skip

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        raise AssertionError(f"ran {list(argv)[:3]}")


def refused(name: str, reply: str, tmp: Path) -> str:
    box = UntouchedSandbox(tmp)
    transport = make_transport(name)
    with box.workspace() as ws:
        (result,) = transport.execute_sequence([reply], ws, box)
    assert (result.exit_code, result.timed_out) == (None, False)
    return rejection(result)


@pytest.mark.parametrize("name", list(TRANSPORTS))
def test_a_multi_megabyte_reply_is_refused_by_every_transport_at_once(
    name: str, tmp_path: Path
) -> None:
    reply = "echo " + "a" * (4 << 20)
    started = time.monotonic()
    why = refused(name, reply, tmp_path)
    assert time.monotonic() - started < 1.0
    assert why == (
        f"{name}: the reply has {len(reply):,} characters, "
        f"more than a run accepts ({MAX_REPLY_CHARS:,})"
    )


@pytest.mark.parametrize("name", list(TRANSPORTS))
def test_a_reply_that_is_not_text_is_refused_by_every_transport(name: str, tmp_path: Path) -> None:
    assert refused(name, "echo \ud800 > out.txt", tmp_path) == f"{name}: the reply {NOT_TEXT}"


@pytest.mark.parametrize("name", sorted(ARGV_CARRIED))
def test_a_nul_is_refused_where_the_reply_is_a_process_argument(name: str, tmp_path: Path) -> None:
    assert refused(name, "printf 'a\0b' > out.txt", tmp_path) == (
        f"{name}: the reply holds a NUL character (U+0000) at character 9, "
        "which no process argument can carry"
    )


@pytest.mark.parametrize(
    ("name", "reply", "why"),
    [
        ("argv-shlex", "printf a\0b", "argv-shlex: a token contains NUL"),
        ("argv-split", "printf a\0b", "argv-split: a token contains NUL"),
        ("json-correct", "printf a\0b", "json-correct: the decoded command holds a NUL character "
         "(U+0000) at character 8, which no process argument can carry"),
        ("json-naive", "echo \\u0000", "json-naive: the decoded command holds a NUL character "
         "(U+0000) at character 5, which no process argument can carry"),
        ("json-naive", "echo \\ud800", f"json-naive: the decoded command {NOT_TEXT}"),
        ("argv-shell-quote", "echo $'\\ud800'",
         "argv-shell-quote: a token is not encodable as UTF-8"),
    ],
)  # fmt: skip
def test_what_a_parse_makes_of_the_reply_is_checked_before_it_reaches_argv(
    name: str, reply: str, why: str, tmp_path: Path
) -> None:
    assert refused(name, reply, tmp_path) == why


def test_a_sequence_runs_up_to_the_reply_that_cannot_be_carried(tmp_path: Path) -> None:
    box = UntouchedSandbox(tmp_path)
    with box.workspace() as ws:
        first, second = make_transport("tmux-keys").execute_sequence(
            ["echo \0", "echo never"], ws, box
        )
    assert rejection(first).startswith("tmux-keys: the reply holds a NUL character")
    assert note(second) == "not run: an earlier reply was refused"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", Limits(timeout_s=5))
    yield box
    box.close()


@pytest.mark.bwrap
@pytest.mark.parametrize("name", sorted(BYTES_CARRIED - {"script-bash", "script-sh"}))
def test_a_nul_reaches_the_shell_through_a_byte_stream(sandbox: Sandbox, name: str) -> None:
    with sandbox.workspace() as ws:
        (res,) = make_transport(name).execute_sequence(["printf 'a\0b' > out.txt"], ws, sandbox)
        assert (res.exit_code, rejection(res)) == (0, "")
        assert (ws.work / "out.txt").read_bytes() == b"ab"  # bash drops the NUL it reads


@pytest.mark.bwrap
def test_a_nul_in_a_script_file_is_bashs_binary_file_refusal(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        res = make_transport("script-bash").execute("printf 'a\0b' > out.txt", ws, sandbox)
    assert (res.exit_code, rejection(res)) == (126, "")
    assert res.stderr.endswith(b": cannot execute binary file\n")


@pytest.mark.bwrap
@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("argv-split", "printf %s " + "a " * 500_000),
        ("argv-shell-quote", "a;" * 500_000),
        ("argv-shell-quote", "$(" * 300_000 + ")" * 300_000),
        ("json-naive", "printf %s " + "\\\\" * 450_000),
        ("json-correct", "echo " + "é" * 1_000_000),
    ],
    ids=["split-words", "shell-quote-operators", "shell-quote-nesting", "naive-escapes", "correct"],
)
def test_host_side_parsers_finish_near_the_cap_and_the_kernel_decides(
    name: str, reply: str
) -> None:
    transport = make_transport(name)
    # A roomy timeout: the parse is charged to it, and on a loaded machine it may take longer
    # than the usual few seconds; what is asserted is the bound and the outcome.
    with make_sandbox("bwrap", Limits(timeout_s=60)) as box, box.workspace() as ws:
        started = time.monotonic()
        res = transport.execute(reply, ws, box)
        elapsed = time.monotonic() - started
    assert elapsed < 30, elapsed  # a few seconds at most here; the point is the bound
    assert (res.exit_code, rejection(res)) == (126, "")
    assert res.stderr.endswith(b": cannot execute: Argument list too long\n")


def test_a_long_bashlex_split_runs_in_a_child_and_agrees_with_the_in_process_one() -> None:
    text = "echo a; echo 'b c' && cat <<EOF\nx\nEOF\n" * (BASHLEX_IN_PROCESS_CHARS // 30)
    assert len(text) > BASHLEX_IN_PROCESS_CHARS
    assert split_in_child(text, 60) == split_commands(text)
    assert BashlexSplit().apply(text, None).parts == (" ; ".join(split_commands(text)),)
    broken = "echo 'unterminated " * 1001  # what bashlex raises comes back by name
    assert split_in_child(broken, 60) == "MatchedPairError"


def test_a_long_bashlex_split_is_cut_at_the_runs_deadline() -> None:
    text = "a;" * (MAX_REPLY_CHARS // 2)  # bashlex needs minutes for this
    ctx = Context(None, None, deadline=time.monotonic() + 2.0)  # type: ignore[arg-type]
    started = time.monotonic()
    staged = BashlexSplit().apply(text, ctx)
    assert time.monotonic() - started < 5.0
    assert (staged.parts, staged.timed_out) == (
        (),
        "bashlex did not finish within the run's timeout",
    )


@pytest.mark.parametrize(("system", "path"), [("swe-agent", "default"), ("openhands", "model")])
def test_an_adapter_path_refuses_a_multi_megabyte_reply_before_any_step(
    system: str, path: str, tmp_path: Path
) -> None:
    adapter = next(a for a in load_adapters() if a.id == system)
    transport = AdapterTransport(adapter, next(p for p in adapter.paths if p.id == path))
    box = UntouchedSandbox(tmp_path)
    reply = "a;" * (2 << 20)
    with box.workspace() as ws:
        started = time.monotonic()
        (res,) = transport.execute_sequence([reply], ws, box)
    assert time.monotonic() - started < 1.0
    assert rejection(res) == (
        f"{transport.label}: the reply has {len(reply):,} characters, "
        f"more than a run accepts ({MAX_REPLY_CHARS:,})"
    )


@pytest.mark.bwrap
def test_pre_processing_time_is_charged_and_a_step_out_of_time_times_the_reply_out() -> None:
    adapter = next(a for a in load_adapters() if a.id == "swe-agent")
    path = dataclasses.replace(
        adapter.path("default"),
        preprocess=(StepSpec("swe-rex.bashlex-split"),),
        transport=TransportSpec("raw"),
    )
    transport = AdapterTransport(adapter, path)
    with make_sandbox("bwrap", Limits(timeout_s=2)) as box, box.workspace() as ws:
        started = time.monotonic()
        slow, quick = transport.execute_sequence(
            ["touch slow;" * (MAX_REPLY_CHARS // 12), "touch quick"], ws, box
        )
        elapsed = time.monotonic() - started
        assert sorted(p.name for p in ws.work.iterdir()) == ["quick"]
    assert elapsed < 6, elapsed  # the child is killed at the 2 s deadline
    assert (slow.timed_out, slow.exit_code) == (True, None)
    assert note(slow) == "swe-rex.bashlex-split: bashlex did not finish within the run's timeout"
    assert (quick.timed_out, quick.exit_code) == (False, 0)


def test_a_charged_timeout_still_reuses_the_warm_docker_slot(tmp_path: Path) -> None:
    made: list[object] = []

    def create(ws: Workspace, slot_dir: Path, limits: Limits) -> object:
        made.append(object())
        return made[-1]

    pool = SlotPool(create)
    with UntouchedSandbox(tmp_path) as box, box.workspace() as ws:
        first = pool.acquire(ws, Limits(timeout_s=10))
        pool.release(ws, Limits(timeout_s=10), first)
        charged = within(box, 7.25).limits  # what a run gets after 2.75 s of host work
        assert pool.acquire(ws, charged) is first
        assert pool.acquire(ws, Limits(timeout_s=10, max_procs=8)) is not first  # a real limit
    assert len(made) == 2
