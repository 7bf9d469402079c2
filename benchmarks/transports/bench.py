"""Per-run cost of every transport relative to `raw`, over the full damage matrix.

Runs the matrix of `boundary-audit probe --transport all --replies oracle --replies naive`
(56 core tasks x 2 reply sets x every transport) through the probe runner, in one sandbox,
and prints for each transport its per-run cost (the runner's `duration_s`: workspace,
fixture, transport, validation, teardown) as a ratio to `raw` measured in the same run, its
pass counts and timeouts, and the matrix's wall-clock time against the two-minute budget.

    .venv/bin/python benchmarks/transports/bench.py [--jobs 4] [--timeout 10] [--sandbox auto]

`--transport NAME` (repeatable) restricts the matrix (raw is always included). `--cpu` then
runs each transport alone over the same 112 cells and prints the CPU time one run costs
(this process, its children, and the sshd and dockerd this run uses), a figure that load
from other programs on the machine inflates far less than wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from boundary_audit.pipelines.probe import ProbeOptions, execute_probes, prepare_probes  # noqa: E402
from boundary_audit.record import RunRecord  # noqa: E402
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox  # noqa: E402
from boundary_audit.services import sshd  # noqa: E402
from boundary_audit.services.dockerd import Dockerd  # noqa: E402
from boundary_audit.tasks import Task  # noqa: E402
from boundary_audit.tasks.run import run_task  # noqa: E402
from boundary_audit.transports import make_transport  # noqa: E402

BUDGET_S = 120.0


def rows(records: tuple[RunRecord, ...]) -> list[tuple[str, list[RunRecord]]]:
    """Records grouped by transport label, in matrix order."""
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        groups[record.transport].append(record)
    return list(groups.items())


def render(records: tuple[RunRecord, ...], wall: float, jobs: int, sandbox: str) -> str:
    """The table: per transport, runs, passes, timeouts, median/mean cost and ratio to raw."""
    grouped = rows(records)
    base = dict(grouped)["raw"]
    base_median = statistics.median(r.duration_s for r in base)
    base_mean = statistics.fmean(r.duration_s for r in base)
    out = [
        f"sandbox {sandbox}, {jobs} jobs, {len(records)} runs in {wall:.1f} s "
        f"(budget {BUDGET_S:.0f} s: {'met' if wall < BUDGET_S else 'EXCEEDED'})",
        "",
        "| transport | runs | oracle pass | naive pass | timeouts | errors | median ms "
        "| median vs raw | mean vs raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, group in grouped:
        durations = [r.duration_s for r in group]
        median = statistics.median(durations)
        mean = statistics.fmean(durations)
        oracle = [r for r in group if r.reply_set == "oracle"]
        naive = [r for r in group if r.reply_set == "naive"]
        out.append(
            f"| {label} | {len(group)} | {sum(r.passed for r in oracle)}/{len(oracle)} "
            f"| {sum(r.passed for r in naive)}/{len(naive)} "
            f"| {sum(r.timed_out for r in group)} | {sum(r.errored for r in group)} "
            f"| {median * 1000:.0f} | {median / base_median:.1f}x | {mean / base_mean:.1f}x |"
        )
    return "\n".join(out)


def _tree_cpu(root: int | None) -> float:
    """CPU seconds of `root` and its descendants, including their reaped children."""
    if root is None:
        return 0.0
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            stats[int(entry)] = text[text.rfind(")") + 2 :].split()
    todo, total = [root], 0
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(int(x) for x in stats[pid][11:15])
            todo += [p for p, f in stats.items() if int(f[1]) == pid]
    return total / os.sysconf("SC_CLK_TCK")


def _daemons() -> float:
    """CPU seconds so far of the process's sshd and of the private dockerd (with containerd)."""
    pidfile = Dockerd().state_dir / "dockerd.pid"
    dockerd = int(pidfile.read_text()) if pidfile.exists() else None
    service = sshd.running_service()
    return _tree_cpu(dockerd) + _tree_cpu(service.sshd_pid if service else None)


def _self_and_children() -> float:
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_per_run(names: list[str], tasks: tuple[Task, ...], sandbox: Sandbox, jobs: int) -> str:
    """Each transport alone over oracle and naive replies: CPU ms per run and ratio to raw."""
    cells = [(t, getattr(t, kind)) for t in tasks for kind in ("oracle", "naive")]
    costs: dict[str, float] = {}
    for name in names:
        transport = make_transport(name)
        with sandbox.workspace() as ws:
            transport.execute("true", ws, sandbox)  # start its engine or sshd outside the count
        before, daemons = _self_and_children(), _daemons()
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda cell: run_task(cell[0], cell[1], transport, sandbox), cells))
        transport.close()
        costs[name] = (_self_and_children() - before + _daemons() - daemons) / len(cells)
    out = ["| transport | CPU ms per run | vs raw |", "|---|---:|---:|"]
    out += [f"| {n} | {c * 1000:.0f} | {c / costs['raw']:.1f}x |" for n, c in costs.items()]
    total = sum(costs.values()) * len(cells)
    out.append(
        f"\nCPU for the whole matrix: {total:.0f} s, {total / 2:.0f} s of wall time on 2 cores"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--transport", action="append", default=[])
    parser.add_argument("--cpu", action="store_true", help="also measure CPU per run")
    args = parser.parse_args(argv)
    options = ProbeOptions(
        replies=("oracle", "naive"),
        transports=tuple(args.transport) or ("all",),
        select="core",
        sandbox=args.sandbox,
        jobs=args.jobs,
        timeout_s=args.timeout,
    )
    plan = prepare_probes(options)
    with make_sandbox(args.sandbox, Limits(timeout_s=args.timeout)) as sandbox:
        start = time.monotonic()
        report = execute_probes(plan, sandbox)
        wall = time.monotonic() - start
        name = sandbox.describe()
        for skipped in report.skipped:
            print(f"skipped {skipped.transport}: {skipped.reason}")
        print(render(report.records, wall, args.jobs, name), flush=True)
        if args.cpu:
            names = [n for n in plan.transports if n not in {s.transport for s in report.skipped}]
            print()
            print(cpu_per_run(names, plan.tasks, sandbox, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
