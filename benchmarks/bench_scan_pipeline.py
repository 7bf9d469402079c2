"""Benchmark: what `boundary-audit scan` adds around the scanner, and what rendering costs.

    .venv/bin/python benchmarks/bench_scan_pipeline.py [--files 600] [--repeat 3] [--jobs 2]

Builds a repository of N small Python "tool" modules (one in three hands a model-controlled
command to a shell, one in three nests it in `ssh "..."`, the rest run constants) and times,
in the same run, the best of `--repeat` passes of:
  scan_files      the static scanner alone over the commit's files already in memory (baseline)
  run_static      the whole library pipeline: open checkout, read config, stream the files,
                  scan, apply config/thresholds/baseline, read sink text, build the report
  render <fmt>    each renderer over that report
Output is each time and its ratio to scan_files; nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boundary_audit.pipelines.scan import StaticOptions, run_static  # noqa: E402
from boundary_audit.report.scan import ScanFormat, renderer_for  # noqa: E402
from boundary_audit.source import open_checkout  # noqa: E402
from boundary_audit.static.engine import ScanOptions, scan_files  # noqa: E402
from tests.support.gitrepos import make_repo  # noqa: E402

TEMPLATES = (
    "import json, subprocess\n\ndef tool_{i}(call):\n"
    "    args = json.loads(call.function.arguments)\n"
    "    return subprocess.run(args['command'], shell=True)\n",
    "import json, subprocess\n\ndef tool_{i}(call):\n"
    "    cmd = json.loads(call.function.arguments)['command']\n"
    "    return subprocess.run(['bash', '-c', f'ssh box \"{{cmd}}\"'])\n",
    "import subprocess\n\ndef tool_{i}():\n"
    "    return subprocess.run(['git', 'rev-parse', 'HEAD'])\n",
)


def build(root: Path, n: int) -> Path:
    """A repository of n tool modules padded with inert code to ~2 KiB each."""
    files: dict[str | bytes, bytes] = {}
    for i in range(n):
        pad = "".join(f"\ndef helper_{i}_{k}(x):\n    return x * {k} + {i}\n" for k in range(20))
        files[f"tools/pkg{i % 20}/tool_{i}.py"] = (TEMPLATES[i % 3].format(i=i) + pad).encode()
    repo = root / "repo"
    make_repo(repo, files)
    return repo


def best(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` timed calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as tmp:
        repo = build(Path(tmp), args.files)
        checkout = open_checkout(str(repo))
        files = list(checkout.files())
        options = ScanOptions(jobs=args.jobs)
        base = best(lambda: scan_files(files, commit=checkout.sha, options=options), args.repeat)
        static = StaticOptions(target=str(repo), jobs=args.jobs)
        report = run_static(static)
        rows = [("scan_files", base), ("run_static", best(lambda: run_static(static), args.repeat))]
        for fmt in ScanFormat:
            renderer = renderer_for(fmt)
            rows.append(
                (f"render {fmt.value}", best(lambda r=renderer: r.render(report), args.repeat))
            )
    print(
        f"{args.files} files, {len(report.findings)} findings, jobs={args.jobs}, "
        f"best of {args.repeat}"
    )
    for name, seconds in rows:
        print(f"  {name:<18} {seconds * 1000:9.1f} ms   {seconds / base:6.2f}x scan_files")


if __name__ == "__main__":
    main()
