"""Sandbox overhead: the 56 core oracles through each backend vs a bare `bash -c`, same run.

Rerun (from the repository root, on an otherwise idle machine):

    .venv/bin/python benchmarks/sandbox/bench.py               # tempdir, bwrap, docker
    .venv/bin/python benchmarks/sandbox/bench.py --repeat 5 --backends bwrap

For every core task the fixture is materialized into a fresh workspace (not timed), then the
oracle runs once per repeat in each of:

- `bare`: `subprocess.run(["bash", "-c", oracle])` in the workspace's work dir with the scrubbed
  environment, i.e. no sandbox at all: the baseline;
- each backend: `RawTransport.execute` (the sandbox's `run` of `bash -c oracle`), teardown
  included, since that is what a probe pays per run.

It prints, per task, the median milliseconds of each and the ratio to `bare`, then per backend
the median ratio, the median absolute overhead in ms and the total. Every sandboxed oracle
must also pass its validator (a benchmark of broken runs would measure nothing); failures are
counted and printed. The docker backend starts (and afterwards stops) the private engine of
`services.dockerd` if none answers; it is left out with a note where it cannot start.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from boundary_audit.errors import BoundaryAuditError
from boundary_audit.sandbox import Limits, Sandbox, layout, make_sandbox
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.tasks import Task, load_tasks, materialize, validate
from boundary_audit.transports.raw import RawTransport

BACKENDS = ("tempdir", "bwrap", "docker")


def time_bare(task: Task, repeat: int) -> float:
    """Median seconds of a bare `bash -c oracle` in a fresh materialized workspace."""
    times = []
    for _ in range(repeat):
        ws = layout.new_workspace(fixed_inner=False)
        try:
            materialize(task, ws)
            env = TempdirSandbox().base_env(ws)
            start = time.perf_counter()
            subprocess.run(["bash", "-c", task.oracle], cwd=ws.work, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)  # fmt: skip
            times.append(time.perf_counter() - start)
        finally:
            layout.remove_workspace(ws)
    return statistics.median(times)


def time_sandboxed(task: Task, sandbox: Sandbox, repeat: int) -> tuple[float, bool]:
    """Median seconds of the raw transport in `sandbox`, and whether every run passed."""
    transport, times, passed = RawTransport(), [], True
    for _ in range(repeat):
        with sandbox.workspace() as ws:
            materialize(task, ws)
            start = time.perf_counter()
            result = transport.execute(task.oracle, ws, sandbox)
            times.append(time.perf_counter() - start)
            passed = passed and validate(task, ws, result).passed
    return statistics.median(times), passed


def open_backends(names: list[str]) -> tuple[dict[str, Sandbox], list[str]]:
    """The backends that start here, and notes about those that do not."""
    found, notes = {}, []
    for name in names:
        try:
            found[name] = make_sandbox(name, Limits(timeout_s=60))
        except BoundaryAuditError as exc:
            notes.append(f"{name}: not measured ({exc.message})")
    return found, notes


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def report(tasks: tuple[Task, ...], bare: dict[str, float], timed: dict[str, dict[str, float]],
           out: Callable[[str], None]) -> None:  # fmt: skip
    names = list(timed)
    widths = [22, 9] + [18] * len(names)
    out(row(["task", "bare ms", *[f"{n} ms (x)" for n in names]], widths))
    for t in tasks:
        cells = [t.id, f"{bare[t.id] * 1000:.1f}"]
        cells += [
            f"{timed[n][t.id] * 1000:.1f} ({timed[n][t.id] / bare[t.id]:.1f}x)" for n in names
        ]
        out(row(cells, widths))
    out("")
    out(f"bare: median {statistics.median(bare.values()) * 1000:.1f} ms per run, "
        f"total {sum(bare.values()):.2f} s for {len(tasks)} tasks")  # fmt: skip
    for n in names:
        ratios = [timed[n][t.id] / bare[t.id] for t in tasks]
        extra = [(timed[n][t.id] - bare[t.id]) * 1000 for t in tasks]
        total = sum(timed[n].values())
        out(f"{n}: median {statistics.median(ratios):.1f}x bare, median overhead "
            f"{statistics.median(extra):.1f} ms per run, total {total:.2f} s")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per task and backend (median)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated")
    args = parser.parse_args(argv)
    tasks = load_tasks("core")
    backends, notes = open_backends([b for b in args.backends.split(",") if b])
    try:
        bare = {t.id: time_bare(t, args.repeat) for t in tasks}
        timed: dict[str, dict[str, float]] = {}
        failures: list[str] = []
        for name, sandbox in backends.items():
            timed[name] = {}
            for t in tasks:
                timed[name][t.id], ok = time_sandboxed(t, sandbox, args.repeat)
                if not ok:
                    failures.append(f"{name}/{t.id}")
    finally:
        for sandbox in backends.values():
            sandbox.close()
    print(f"{len(tasks)} core oracles, raw transport, median of {args.repeat} runs each")
    report(tasks, bare, timed, print)
    for note in notes:
        print(note)
    print(f"oracles that failed their validator: {', '.join(failures) or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
