"""`_spawn.wait`: a child's exit is seen when it happens (pidfd), with `Popen.wait`'s contract."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from boundary_audit import _spawn
from boundary_audit._subprocess import run


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def _no_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Popen.wait(timeout)` polls with `time.sleep`; the pidfd wait must never sleep."""

    def refuse(_seconds: float) -> None:
        raise AssertionError("polled with time.sleep")

    monkeypatch.setattr(time, "sleep", refuse)


def test_an_exit_is_seen_without_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = _child("import time, sys; time.sleep(0.2); sys.exit(7)")
    _no_sleeping(monkeypatch)
    assert _spawn.wait(proc, 30) == 7
    assert proc.returncode == 7


def test_a_child_that_outlives_the_timeout_raises_timeout_expired() -> None:
    proc = _child("import time; time.sleep(30)")
    try:
        start = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            _spawn.wait(proc, 0.3)
        assert time.monotonic() - start >= 0.3
        assert proc.returncode is None
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9


def test_a_reaped_child_and_a_huge_timeout_are_waited_for_as_popen_does() -> None:
    proc = _child("pass")
    proc.wait()
    assert _spawn.wait(proc, 5) == 0  # already reaped: no pidfd is opened for a stale pid
    proc = _child("raise SystemExit(3)")
    assert _spawn.wait(proc, 1e12) == 3  # beyond poll()'s int milliseconds


def test_without_pidfds_the_wait_falls_back_to_popen(monkeypatch: pytest.MonkeyPatch) -> None:
    def unsupported(_pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", unsupported)
    proc = _child("raise SystemExit(5)")
    assert _spawn.wait(proc, 30) == 5


def test_run_sees_the_exit_without_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one way every host program runs (git above all) waits with the pidfd."""
    _no_sleeping(monkeypatch)
    res = run(["sh", "-c", "sleep 0.1; echo done; exit 4"], timeout=30, guarded=False)
    assert (res.returncode, res.stdout, res.timed_out) == (4, b"done\n", False)
    res = run(["sh", "-c", "exec sleep 30"], timeout=0.2, guarded=False)
    assert (res.returncode, res.timed_out) == (-9, True)
