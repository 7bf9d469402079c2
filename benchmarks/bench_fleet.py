"""Benchmark: what the fleet costs against one process doing the same runs, in one run.

    .venv/bin/python benchmarks/bench_fleet.py [--select FAMILIES] [--repeat 2]

The same work three ways, each a whole process on a fresh store, paired and repeated:

- `probe`: one `boundary-audit probe` process running the oracle and naive replies of the
  selected tasks through raw and three boundary transports (nested, session, script-bash) with
  `--jobs 2` (the bare run: the runner, no Dask);
- `fleet -w 1`: a fleet plan naming the same reply sets, transports and tasks (the same run
  units, `jobs = 2`), on a local cluster of one worker;
- `fleet -w 2`: the same on two workers.

It prints each one's wall time, the ratio of 1 to 2 workers, the fleet's cost over the bare
run, split into the fixed cost of starting and stopping a local cluster (measured alone) and
the rest per unit (the scheduling overhead per unit, as a share of a unit's own cost), and, on
paper from those per-unit costs, the wall time of a 20-harness x 5-model x 3-draw audit on a
16-node cluster. The machine's load is printed before and after. Nothing is asserted; the
figures land in benchmarks/README.md ("Fleet").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boundary_audit.tasks import load_tasks  # noqa: E402

TRANSPORTS = ("nested", "session", "script-bash")
SETS = ("oracle", "naive")
SELECT = "write-file,json-write,git-commit,heredoc-write"
CLI = [sys.executable, "-m", "boundary_audit"]


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=3600)
    took = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"{' '.join(argv[2:5])}... exited {res.returncode}: {res.stderr.decode()[-400:]}")
    return took


def _plan(where: Path, select: str) -> Path:
    plan = where / "plan.toml"
    plan.write_text(
        f'name = "bench"\nselect = "{select}"\nsandbox = "bwrap"\njobs = 2\n'
        f"replies = {json.dumps(list(SETS))}\ntransports = {json.dumps(list(TRANSPORTS))}\n"
    )
    return plan


def _cluster_start_stop(where: Path) -> float:
    code = (
        "import sys; from pathlib import Path; from boundary_audit.fleet.cluster import connect\n"
        "with connect(None, 1, Path(sys.argv[1])) as c: c.submit(abs, -1).result()\n"
    )
    return _timed([sys.executable, "-c", code, str(where)], where)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", default=SELECT, help=f"tasks (as --select; default {SELECT})")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    tasks = load_tasks(args.select)
    units = len(tasks) * len(SETS) * (1 + len(TRANSPORTS))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{len(tasks)} tasks x {len(SETS)} reply sets x (raw + {len(TRANSPORTS)} transports) "
          f"= {units} run units")  # fmt: skip
    times: dict[str, list[float]] = {"probe": [], "fleet -w 1": [], "fleet -w 2": [],
                                     "cluster": []}  # fmt: skip
    probe = [*CLI, "probe", "--select", args.select, "--sandbox", "bwrap", "-j", "2",
             "--format", "json", "-o", "probe.json"]  # fmt: skip
    for r in SETS:
        probe += ["-r", r]
    for t in TRANSPORTS:
        probe += ["-t", t]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="ba-bench-fleet-") as tmp:
            where = Path(tmp)
            plan = _plan(where, args.select)
            times["probe"].append(_timed(probe, where))
            for workers in (1, 2):
                shutil.rmtree(where / "bench.store", ignore_errors=True)
                argv = [*CLI, "fleet", str(plan), "-w", str(workers), "--format", "json",
                        "-o", f"fleet{workers}.json"]  # fmt: skip
                times[f"fleet -w {workers}"].append(_timed(argv, where))
            times["cluster"].append(_cluster_start_stop(where))
    med = {k: statistics.median(v) for k, v in times.items()}
    for name in ("probe", "fleet -w 1", "fleet -w 2"):
        spread = ", ".join(f"{x:.1f}" for x in times[name])
        print(f"{name:12s} {med[name]:7.1f} s wall (runs: {spread})")
    print(f"cluster start+stop alone: {med['cluster']:.1f} s")
    print(f"1 worker / 2 workers: {med['fleet -w 1'] / med['fleet -w 2']:.2f}x")
    unit_cost = med["probe"] / units  # wall per unit at jobs=2, start-up included
    extra = med["fleet -w 1"] - med["probe"] - med["cluster"]
    per_unit = extra / units
    print(f"fleet -w 1 over probe: {med['fleet -w 1'] - med['probe']:+.1f} s = "
          f"{med['cluster']:.1f} s cluster + {extra:+.1f} s over {units} units "
          f"({per_unit * 1000:+.1f} ms/unit, {100 * per_unit / unit_cost:+.1f}% of a unit's "
          f"{unit_cost * 1000:.0f} ms)")  # fmt: skip
    # On paper: 20 harnesses x 5 models x 3 draws, raw and disclosed, 74 tasks, each harness
    # with the mean of 1.3 derived transports of the specimens plus raw, on 16 nodes like this
    # one (2 workers each, at the measured 2-worker throughput).
    harnesses, models, draws, contracts, suite, per_target = 20, 5, 3, 2, 74, 1.3
    runs = int(suite * models * draws * contracts * (harnesses * per_target + 1))
    node_rate = units / (med["fleet -w 2"] - med["cluster"])  # units/s of one 2-worker node
    wall = runs / (16 * node_rate) + med["cluster"]
    print(f"on paper: {harnesses} harnesses x {models} models x {draws} draws x {contracts} "
          f"contracts x {suite} tasks = {runs} runs; one node like this does "
          f"{node_rate:.1f} units/s, 16 nodes: {wall / 60:.1f} min (one node: "
          f"{runs / node_rate / 3600:.1f} h)")  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
