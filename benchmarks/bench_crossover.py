"""What the crossover adds to the probe runs it needs: 56 tasks x 2 contracts x 2 draws x 2
transports (448 runs), measured in one process, one run.

    .venv/bin/python benchmarks/bench_crossover.py [--sandbox bwrap] [--jobs 2] [--repeat 3]

The reply file is the one `bench_generate.py` gets from its mock: the raw contract answered
with each task's oracle, the disclosed contract with the oracle written for the double-quote
wrapper (the plain oracle again for the second draw of tier-3 tasks). The probe stage is
`pipelines.probe.prepare_probes` + `execute_probes` through `raw` and `nested` in the sandbox
(what `probe --replies FILE --transport nested` does); the crossover stage is what
`crossover` does on top: `results.crossover.build_crossover` on those records (cells, the four
effects, exact bootstrap intervals, enumerated sign tests, Holm, LOFO, rank flips) and the
terminal, JSON and Markdown renders; the HTML page (matplotlib figures) is timed on its own.
The claim: the crossover stage is < 10 % of the probe stage. The load average is printed, since
the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from boundary_audit.pipelines.crossover import family_groups
from boundary_audit.pipelines.probe import ProbeOptions, execute_probes, prepare_probes
from boundary_audit.report.crossover import CrossoverFormat, renderer_for
from boundary_audit.results.crossover import build_crossover
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.tasks import load_tasks


def for_double_quotes(command: str) -> str:
    return "".join("\\" + ch if ch in '\\"$`' else ch for ch in command)


def reply_file(path: Path) -> Path:
    lines = []
    for t in load_tasks("core"):
        for draw in (0, 1):
            adapted = t.oracle if (draw == 1 and t.tier == 3) else for_double_quotes(t.oracle)
            for contract, reply in (("raw", t.oracle), ("disclosed", adapted)):
                lines.append(
                    {
                        "task_id": t.id,
                        "reply": reply,
                        "reply_id": f"{contract}-d{draw}",
                        "model": "mock",
                        "contract": contract,
                        "meta": {"draw": draw},
                    }
                )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sandbox", default="bwrap")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="repeats of the crossover stage")
    args = ap.parse_args()
    replies = reply_file(Path(tempfile.mkdtemp(prefix="ba-bench-crossover-")) / "mock.jsonl")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} cores")  # fmt: skip
    started = time.perf_counter()
    plan = prepare_probes(
        ProbeOptions(replies=(str(replies),), transports=("nested",), sandbox=args.sandbox,
                     jobs=args.jobs)
    )  # fmt: skip
    with make_sandbox(args.sandbox, Limits(timeout_s=10.0)) as sandbox:
        report = execute_probes(plan, sandbox)
    probe_s = time.perf_counter() - started
    records = report.records
    print(
        f"probe stage: {len(records)} runs in {probe_s:.2f} s "
        f"({len(records) / probe_s:.1f} runs/s, -j {args.jobs}, sandbox {args.sandbox})"
    )
    groups = family_groups()
    stage: list[float] = []
    html: list[float] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        x = build_crossover(records, transports=("nested",), family_groups=groups)
        for fmt in (CrossoverFormat.TERMINAL, CrossoverFormat.JSON, CrossoverFormat.MARKDOWN):
            renderer_for(fmt).render(x)
        stage.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        renderer_for(CrossoverFormat.HTML).render(x)
        html.append(time.perf_counter() - t1)
    (c,) = x.configs
    shown = " ".join(f"{n} {float(c.cells[n].rate) * 100:.1f}" for n in ("RR", "RN", "NR", "NN"))
    print(f"crossover: {shown} (units {c.cells['RR'].total})")
    best, median = min(stage), statistics.median(stage)
    print(
        f"crossover stage (build + terminal/json/markdown): median {median * 1000:.0f} ms, "
        f"best {best * 1000:.0f} ms = {100 * median / probe_s:.2f} % of the probe stage"
    )
    print(
        f"html page (two matplotlib figures): median {statistics.median(html) * 1000:.0f} ms "
        f"= {100 * statistics.median(html) / probe_s:.2f} % of the probe stage"
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
