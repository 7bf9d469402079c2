"""Benchmark: what deriving every model-controlled finding's boundary path adds to a scan.

    .venv/bin/python benchmarks/static/bench_path.py [--size-mb 10] [--repeat 3] [--jobs 2]

On the synthetic tree of `bench.py` (`synth.py`), times in one run, alternating, best of
--repeat each:
  (a) scan without paths   `scan_path` with `static.path.derive` replaced by `None` (the
                           baseline: the scan as it was before paths)
  (b) scan with paths      `scan_path` as shipped: each model-controlled finding's sink is
                           re-read through the corpus (its file's sites once per file) and
                           its path derived
and prints wall seconds, the ratio (b)/(a), the findings and the derived paths. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from synth import generate  # noqa: E402

from boundary_audit.static import findings as F  # noqa: E402
from boundary_audit.static.engine import ScanOptions, scan_path  # noqa: E402


def timed(tree: Path, jobs: int, derive: bool) -> tuple[float, int, int]:
    original = F.derive
    if not derive:
        F.derive = lambda *_a, **_k: None  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        result = scan_path(tree, options=ScanOptions(jobs=jobs))
        wall = time.perf_counter() - start
    finally:
        F.derive = original
    paths = sum(1 for f in result.findings if f.boundary_path is not None)
    return wall, len(result.findings), paths


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ba-bench-path-"))
    try:
        counts = generate(root / "tree", args.size_mb)
        base: list[float] = []
        with_paths: list[float] = []
        found = derived = 0
        for _ in range(args.repeat):
            base.append(timed(root / "tree", args.jobs, derive=False)[0])
            wall, found, derived = timed(root / "tree", args.jobs, derive=True)
            with_paths.append(wall)
        a, b = min(base), min(with_paths)
        print(f"files: {sum(counts.values())} ({', '.join(f'{k} {v}' for k, v in counts.items())})")
        print(f"findings: {found}, with a derived path: {derived}")
        print(f"(a) scan without paths  {a:7.2f} s  1.00x")
        print(f"(b) scan with paths     {b:7.2f} s  {b / a:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
