"""Per-run cost of every transport relative to `raw`, over the full damage matrix.

Runs the matrix of `boundary-audit probe --transport all --replies oracle --replies naive`
(56 core tasks x 2 reply sets x every transport) through the probe runner, in one sandbox,
and prints for each transport its per-run cost (the runner's `duration_s`: workspace,
fixture, transport, validation, teardown) as a ratio to `raw` measured in the same run, its
pass counts and timeouts, and the matrix's wall-clock time against the two-minute budget.

    .venv/bin/python benchmarks/transports/bench.py [--jobs 4] [--timeout 10] [--sandbox auto]

`--transport NAME` (repeatable) restricts the matrix (raw is always included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from boundary_audit.probe.pipeline import ProbeOptions, execute_probes, prepare_probes  # noqa: E402
from boundary_audit.probe.records import RunRecord  # noqa: E402
from boundary_audit.sandbox import Limits, make_sandbox  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--transport", action="append", default=[])
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
    print(render(report.records, wall, args.jobs, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
