"""A fleet worker's own logs go to the store's log directory, never to the fleet's stderr.

A local worker process shares the fleet's stderr. One that loses its client (a Ctrl-C at the
terminal, a closed cluster) logs the tracebacks of its failed callbacks through tornado's and
distributed's loggers, which distributed points at stderr when it is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import logging, os, sys
import distributed  # noqa: F401 - sets up its loggers on stderr, as in a worker process
from boundary_audit.fleet.cluster import FleetPlugin
if sys.argv[1] == "setup":
    FleetPlugin(sys.argv[2]).setup(None)
logging.getLogger("tornado.application").error("Exception in callback probe")
logging.getLogger("distributed.worker").error("worker probe")
logging.getLogger("asyncio").error("asyncio probe")
print(os.getpid())
"""


def _run(mode: str, log_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, mode, str(log_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_a_worker_set_up_by_the_plugin_logs_to_its_own_file(tmp_path: Path) -> None:
    done = _run("setup", tmp_path)
    assert done.stderr == ""
    log = (tmp_path / f"worker-{done.stdout.strip()}.log").read_text(encoding="utf-8")
    assert [line.split(" ", 2)[2] for line in log.splitlines()] == [
        "tornado.application ERROR Exception in callback probe",
        "distributed.worker ERROR worker probe",
        "asyncio ERROR asyncio probe",
    ]


def test_without_the_plugin_the_same_logs_reach_stderr(tmp_path: Path) -> None:
    done = _run("none", tmp_path)
    assert "Exception in callback probe" in done.stderr
    assert "worker probe" in done.stderr
    assert list(tmp_path.iterdir()) == []
