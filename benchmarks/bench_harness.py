"""Benchmark: the per-run cost of each real-harness driver against `raw`, measured in one run.

    .venv/bin/python benchmarks/bench_harness.py [--select core] [--sandbox bwrap] [--jobs 1]

Runs the oracle replies of the selected tasks (default: the 14 tier-0 core tasks) through
`raw` and through every installed driver (run `boundary-audit harness install swe-agent
langchain autogen` first), one run at a time by default so the numbers are per-run cost
rather than throughput, and prints each
transport's mean and median time per run in the sandbox (process start to exit) and its
ratio to `raw`. It also prints each driver's own split, as the in-sandbox driver reports it:
interpreter start + harness import, then the harness's work (session start-up included).
Nothing is asserted; the numbers land in docs/harness.md ("What it costs").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boundary_audit.harness import SYSTEMS  # noqa: E402
from boundary_audit.harness.install import installed  # noqa: E402
from boundary_audit.harness.suite import run_suite  # noqa: E402
from boundary_audit.harness.transport import HarnessTransport  # noqa: E402
from boundary_audit.sandbox import Limits, make_sandbox  # noqa: E402
from boundary_audit.tasks import load_reply_set, load_tasks  # noqa: E402
from boundary_audit.transports import make_transport  # noqa: E402
from boundary_audit.transports.interface import Transport  # noqa: E402


def split(transport: HarnessTransport, sandbox: object, replies: list[str]) -> tuple[float, float]:
    """Mean (import_s, drive_s) the driver reports for `replies` run in empty workspaces."""
    imports, drives = [], []
    for reply in replies:
        with sandbox.workspace() as ws:  # type: ignore[attr-defined]
            outcome = transport.drive(reply, ws, sandbox)  # type: ignore[arg-type]
        imports.append(outcome.timings.get("import_s", 0.0))
        drives.append(outcome.timings.get("drive_s", 0.0))
    return statistics.mean(imports), statistics.mean(drives)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", default="*-t0")
    ap.add_argument("--sandbox", default="bwrap")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    tasks = load_tasks(args.select)
    oracle = load_reply_set("oracle", tasks)
    transports: list[Transport] = [make_transport("raw")]
    transports += [cls() for cls in SYSTEMS.values() if installed(cls.spec)]
    print(f"{len(tasks)} tasks ({args.select}), oracle replies, sandbox {args.sandbox}, "
          f"jobs {args.jobs}")  # fmt: skip
    with make_sandbox(args.sandbox, Limits(timeout_s=60)) as sandbox:
        base = None
        for transport in transports:
            t0 = time.monotonic()
            runs = run_suite(transport, tasks, [oracle], sandbox, jobs=args.jobs)
            wall = time.monotonic() - t0
            times = [r.duration_s for r in runs]
            mean = statistics.mean(times)
            base = base or mean
            passed = sum(r.passed for r in runs)
            line = (f"{transport.label:22} mean {mean * 1000:7.0f} ms  median "
                    f"{statistics.median(times) * 1000:7.0f} ms  x{mean / base:6.1f}  "
                    f"passed {passed}/{len(runs)}  wall {wall:5.1f}s")  # fmt: skip
            if isinstance(transport, HarnessTransport):
                imp, drv = split(transport, sandbox, [r.reply for r in oracle.replies[:3]])
                line += f"  [import {imp * 1000:.0f} ms, harness {drv * 1000:.0f} ms]"
            print(line, flush=True)
            transport.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
