"""The observation runs' ptrace: the tracer has it, nothing it watches does, other runs never.

- the default seccomp program is what it was, and the tracing one differs from it by exactly
  `seccomp.TRACING`; nothing else can be let through;
- a default bwrap run still cannot trace (strace fails on PTRACE_TRACEME);
- in an observation run the harness is sealed: it cannot attach to the reaper or to its own
  tracer, cannot run a strace of its own, and cannot open the tracer's /proc files (strace
  runs from an exec-only copy, so it is not dumpable);
- what the harness leaves running is ended once it exits, instead of holding the run (strace
  waits for all it traces) until the timeout;
- a harness that cannot be executed is the user's error, named in one line; a seal that
  cannot be installed stops before anything of the harness runs.
"""

from __future__ import annotations

import errno
import struct
import sys
from collections.abc import Iterator

import pytest

from boundary_audit.errors import UsageError
from boundary_audit.observe import seal
from boundary_audit.observe.record import Recorder
from boundary_audit.sandbox import Limits, make_sandbox, seccomp

pytestmark = pytest.mark.bwrap


def denials(program: bytes) -> dict[int, int]:
    """syscall number -> errno of every `if nr == N: return ERRNO(e)` pair in `program`."""
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    found = {}
    for (code, jt, jf, k), (ret_code, _, _, ret) in zip(insns, insns[1:]):
        deny = code == 0x15 and (jt, jf) == (0, 1)  # the arch check jumps the other way
        if deny and ret_code == 0x06 and ret & 0xFFFF0000 == 0x00050000:
            found[k] = ret & 0xFFFF
    return found


def test_the_tracing_program_lacks_exactly_ptrace_and_process_vm_readv() -> None:
    arch = seccomp.native_arch()
    assert arch is not None
    default = denials(seccomp.program(arch))
    assert default == {
        arch.numbers[n]: errno.ENOSYS if n in seccomp.NOT_IMPLEMENTED else errno.EPERM
        for n in seccomp.DENIED
        if n in arch.numbers
    }
    assert default[arch.numbers["ptrace"]] == errno.EPERM
    tracing = denials(seccomp.program(arch, seccomp.TRACING))
    assert tracing == {
        nr: e
        for nr, e in default.items()
        if nr not in {arch.numbers["ptrace"], arch.numbers["process_vm_readv"]}
    }
    assert seccomp.program(arch, frozenset()) == seccomp.program(arch)
    with pytest.raises(ValueError, match=r"^only \['process_vm_readv', 'ptrace'\] may be"):
        seccomp.program(arch, frozenset({"mount"}))


def test_a_default_run_still_cannot_trace() -> None:
    with make_sandbox("bwrap", Limits(timeout_s=10)) as box, box.workspace() as ws:
        r = box.run(ws, ["strace", "-f", "-o", "/dev/null", "true"])
    assert r.exit_code == 1
    assert r.stderr.startswith(
        b"strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted\n"
    )


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder(Limits(timeout_s=20))
    yield rec
    rec.close()


PROBE = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
comm = {p: open(f"/proc/{p}/comm").read().strip() for p in os.listdir("/proc") if p.isdigit()}
tracer = int(next(p for p, name in comm.items() if name == "ba-strace"))
for who, pid in (("reaper", 1), ("tracer", tracer)):
    r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
    print("attach", who, r, os.strerror(ctypes.get_errno()))
for name in ("mem", "fd"):
    try:
        open(f"/proc/{tracer}/mem", "rb") if name == "mem" else os.listdir(f"/proc/{tracer}/fd")
        print(name, "open")
    except OSError as exc:
        print(name, os.strerror(exc.errno))
"""


def test_the_observed_harness_cannot_reach_the_reaper_or_its_tracer(recorder: Recorder) -> None:
    with recorder.workspace() as ws:
        run = recorder.run(ws, [sys.executable, "-c", PROBE])
        nested = recorder.run(ws, ["strace", "-o", "/dev/null", "true"])
    assert run.result.stdout.decode() == (
        "attach reaper -1 Operation not permitted\n"
        "attach tracer -1 Operation not permitted\n"
        "mem Permission denied\n"  # the tracer runs from an exec-only copy: not dumpable
        "fd Permission denied\n"
    )
    assert run.tree.root is not None and run.tree.root.argv == (sys.executable, "-c", PROBE)
    assert run.tree.complete
    assert nested.result.exit_code == 1
    assert b"PTRACE_TRACEME: Operation not permitted" in nested.result.stderr
    assert "ptrace for the tracer only" in recorder.confinement()


def test_what_the_harness_leaves_running_ends_with_it(recorder: Recorder) -> None:
    with recorder.workspace() as ws:
        run = recorder.run(ws, ["bash", "-c", "setsid sleep 30 & echo started; exit 3"])
    assert (run.result.exit_code, run.result.stdout, run.result.timed_out) == (
        3,
        b"started\n",
        False,
    )
    assert run.result.duration_s < 4
    assert run.tree.complete
    (sleeper,) = run.tree.left_behind
    assert [i.argv for i in run.tree.processes[sleeper].images] == [
        ("setsid", "sleep", "30"),
        ("sleep", "30"),
    ]


def test_a_harness_that_cannot_be_executed_is_named(recorder: Recorder) -> None:
    with recorder.workspace() as ws, pytest.raises(UsageError) as caught:
        recorder.run(ws, ["no-such-harness", "--flag"])
    assert caught.value.message == (
        "cannot execute the harness: no-such-harness: No such file or directory"
    )


def test_a_seal_that_cannot_be_installed_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert seal.main(["0011", "--", "/bin/true"]) == 125
    assert seal.main(["zz", "--", "/bin/true"]) == 125
    assert seal.main(["0011", "/bin/true"]) == 125
    assert capsys.readouterr().err.splitlines() == [
        "boundary-audit: cannot seal the observed harness: "
        "a filter program is a multiple of 8 bytes, not 2",
        "boundary-audit: cannot seal the observed harness: "
        "non-hexadecimal number found in fromhex() arg at position 0",
        "boundary-audit: cannot seal the observed harness: usage: seal.py HEX -- ARGV...",
    ]
