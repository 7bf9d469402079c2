"""Benchmark: what starting `boundary-audit` costs, against `python -c pass` in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 15] [--other-code DIR]
    .venv/bin/python benchmarks/bench_startup.py --breakdown [--repeat 5]

Whole processes, as a user starts them (the venv's `boundary-audit` console script): each
case's CPU (user + system of the process and every child it reaped, from `wait4`) and wall
time. The cases run interleaved, round after round, so a burst of load on the shared machine
hits all of them alike; each reports its median over `--repeat` rounds and its ratio to the
median of `python -c pass` (the same interpreter, `-I`-free like the console script). Cases:
  python -c pass            the baseline
  --version                 the root command only
  --help                    the root help: every command's summary, no command imported
  scan --no-probe 2 files   a 2-file repository (a Python tool and a shell script whose
                            commands are constants: no finding, nothing model-controlled)
  scan 2 files              the same with the default probe step (nothing to probe)
  ... [other]               with --other-code DIR, each boundary-audit case again with
                            PYTHONPATH=DIR (another version of the package, e.g. `git archive
                            main boundary_audit tasks probes system_adapters specimens
                            contracts | tar -x -C DIR`), in the same rounds
`--breakdown` instead runs, --repeat times in fresh interpreters, what a 2-file scan imports
and compiles, one step after the other, and prints each step's median CPU
(`time.process_time`; a step pays only for what the earlier ones did not import).
The load average is printed before and after; nothing is asserted. The 2-file repository is
built with `tests/support/gitrepos.make_repo` (deterministic sha) in a temporary directory;
the cache dir of the scans is a fresh temporary one. One warm-up round is not counted (it
fills that cache and writes the package's .pyc files). The children run without
PYTHONDONTWRITEBYTECODE, as an installed package (pip compiles it) would: with it set, every
start recompiles every module imported from source, which is not what a user pays.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.gitrepos import make_repo  # noqa: E402

FILES = {
    "tool.py": b"import subprocess\n\n\ndef status():\n"
    b"    return subprocess.run(['git', 'status'], check=False)\n",
    "run.sh": b"#!/bin/sh\nset -e\nmake -C build all\n",
}


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of one whole process and its children."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, close_fds=True
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


BREAKDOWN = """
import json, time
marks = {}
def step(name, t=[time.process_time()]):
    now = time.process_time()
    marks[name] = now - t[0]
    t[0] = now
import typer, typer.main; step("typer")
import rich.console, rich.table; step("rich (the terminal renderer)")
import boundary_audit.static.engine, boundary_audit.static.checks; step("static/ imports")
import boundary_audit.source, boundary_audit.config; step("source/, config")
import boundary_audit.pipelines.scan, boundary_audit.commands.scan; step("scan pipeline+command")
from boundary_audit.static.analyze import bundles_for
bundles_for("python"); step("query bundles: python")
bundles_for("shell"); step("query bundles: shell")
print(json.dumps(marks))
"""


def breakdown(repeat: int) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    root = str(Path(__file__).resolve().parent.parent)
    samples: dict[str, list[float]] = {}
    for round_ in range(repeat + 1):
        done = subprocess.run(
            [sys.executable, "-c", BREAKDOWN],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            check=True,
        )
        if round_:
            for name, seconds in json.loads(done.stdout).items():
                samples.setdefault(name, []).append(seconds)
    print(f"{repeat} fresh interpreters, median CPU per step")
    for name, values in samples.items():
        print(f"  {name:<48} {statistics.median(values):6.3f}s")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--other-code", type=Path, help="also run with PYTHONPATH=DIR")
    ap.add_argument("--breakdown", action="store_true", help="what a 2-file scan pays for")
    args = ap.parse_args()
    if args.breakdown:
        return breakdown(args.repeat)
    exe = Path(sys.executable).parent / "boundary-audit"
    if not exe.exists():
        sys.stderr.write(f"no console script at {exe}: run ./scripts/setup first\n")
        return 2
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="ba-startup-bench-") as tmp:
        repo = Path(tmp) / "repo"
        make_repo(repo, dict(FILES))
        env = {**os.environ, "BOUNDARY_AUDIT_CACHE_DIR": str(Path(tmp) / "cache")}
        env.pop("COLUMNS", None)
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            print("PYTHONDONTWRITEBYTECODE was set: unset for the measured processes")
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--version": [str(exe), "--version"],
            "--help": [str(exe), "--help"],
            "scan --no-probe (2 files)": [str(exe), "scan", str(repo), "--no-probe"],
            "scan (2 files)": [str(exe), "scan", str(repo)],
        }
        envs = dict.fromkeys(cases, env)
        if args.other_code is not None:
            for name, argv in list(cases.items())[1:]:
                cases[f"{name} [other]"] = argv
                envs[f"{name} [other]"] = {**env, "PYTHONPATH": str(args.other_code)}
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        statuses: dict[str, set[int]] = {name: set() for name in cases}
        for round_ in range(args.repeat + 1):
            for name, argv in cases.items():
                cpu, wall, status = measure(argv, envs[name])
                statuses[name].add(status)
                if round_:
                    runs[name].append((cpu, wall))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base_cpu = statistics.median(c for c, _ in runs["python -c pass"])
    base_wall = statistics.median(w for _, w in runs["python -c pass"])
    print(f"{args.repeat} interleaved rounds, medians; ratios to `python -c pass`")
    print(f"{'case':<36} {'CPU':>9} {'ratio':>7} {'wall':>9} {'ratio':>7}  exit")
    for name, samples in runs.items():
        cpu = statistics.median(c for c, _ in samples)
        wall = statistics.median(w for _, w in samples)
        codes = ",".join(str(s) for s in sorted(statuses[name]))
        print(
            f"{name:<36} {cpu:8.3f}s {cpu / base_cpu:6.1f}x {wall:8.3f}s "
            f"{wall / base_wall:6.1f}x  {codes}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
