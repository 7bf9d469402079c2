"""Benchmark: what the cross-file tables cost to build and to hold, per language family.

    .venv/bin/python benchmarks/static/bench_corpus.py [--size-mb 80] [--tree DIR] \
        [--repeat 3] [--other-code DIR]

`Corpus.prepare` builds, in the parent before any worker forks, each family's identifier
index, quoting helpers and class bases (`static/crossfile.py`); the workers inherit them.
This reads every file of a tree the scanner would analyse (`--tree DIR`, else the synthetic
tree of `synth.py` at --size-mb, generated in a temporary directory), then in a fresh child
process per round builds each table lazily, family by family, and reports the CPU of each
build (`time.process_time`, the best of --repeat rounds) and, in a separate child under
tracemalloc, the memory the tables hold once built (and the build's peak) with the corpus
excluded. `--other-code DIR` runs the same children with PYTHONPATH=DIR (another version of
the package, e.g. `git archive main boundary_audit tasks probes system_adapters specimens
contracts | tar -x -C DIR`), in the same rounds. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TABLES = ("index", "quoters", "class_bases")


def _files(tree: Path) -> dict[str, tuple[str, bytes]]:
    from boundary_audit.static.parsing import detect_language

    files = {}
    for path in sorted(tree.rglob("*")):
        if ".git" in path.parts or path.is_symlink() or not path.is_file():
            continue
        lang = detect_language(str(path))
        if lang:
            files[str(path.relative_to(tree))] = (lang, path.read_bytes())
    return files


def child(tree: Path, memory: bool) -> dict[str, object]:
    """One build of every table of every family (in this process: the package on sys.path)."""
    import tracemalloc

    from boundary_audit.static import crossfile

    files = _files(tree)
    families = sorted({f for lg, _ in files.values() if (f := crossfile.FAMILY.get(lg))})
    corpus = crossfile.Corpus(files)
    if memory:
        tracemalloc.start()
    times: dict[str, float] = {}
    for family in families:
        for table in TABLES:
            if table == "class_bases" and family not in ("py", "js"):
                continue
            start = time.process_time()
            getattr(corpus, table)(family)
            times[f"{family} {table}"] = time.process_time() - start
        corpus.index(family).lookup(b"run", dotted=False)  # the suffix table, as lookups build it
    out: dict[str, object] = {"files": len(files), "times": times}
    if memory:
        held, peak = tracemalloc.get_traced_memory()
        out["held_mib"], out["peak_mib"] = held / 2**20, peak / 2**20
    return out


def _run(code: Path | None, tree: Path, memory: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code) if code is not None else str(ROOT)
    argv = [sys.executable, __file__, "--child", str(tree)] + (["--memory"] if memory else [])
    done = subprocess.run(argv, env=env, capture_output=True, check=True, timeout=3600)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tree", type=Path, help="a directory to read instead of the synthetic tree"
    )
    parser.add_argument("--size-mb", type=float, default=80.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--other-code", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.memory)))
        return 0
    versions: list[tuple[str, Path | None]] = [("this", None)]
    if args.other_code is not None:
        versions.append(("[other]", args.other_code))
    with tempfile.TemporaryDirectory(prefix="ba-bench-corpus-") as tmp:
        tree = args.tree
        if tree is None:
            sys.path.insert(0, str(HERE))
            from synth import generate

            tree = Path(tmp) / "tree"
            generate(tree, args.size_mb, sink_share=0.25)
        print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; tree {tree}")
        best: dict[str, dict[str, float]] = {name: {} for name, _ in versions}
        files = 0
        for _ in range(args.repeat):
            for name, code in versions:
                got = _run(code, tree, memory=False)
                files = int(got["files"])
                for key, value in got["times"].items():
                    best[name][key] = min(best[name].get(key, float("inf")), value)
        memory = {name: _run(code, tree, memory=True) for name, code in versions}
        print(f"{files} files; CPU best of {args.repeat}, then the tables' memory (tracemalloc)")
        keys = list(best["this"])
        print(f"   {'table':24s}" + "".join(f"{name:>12s}" for name, _ in versions))
        for key in keys:
            row = "".join(f"{best[name].get(key, float('nan')):11.3f}s" for name, _ in versions)
            print(f"   {key:24s}{row}")
        total = "".join(f"{sum(best[name].values()):11.3f}s" for name, _ in versions)
        print(f"   {'all':24s}{total}")
        for label, field in (("held MiB", "held_mib"), ("build peak MiB", "peak_mib")):
            row = "".join(f"{float(memory[name][field]):12.1f}" for name, _ in versions)
            print(f"   {label:24s}{row}")
        print(f"load after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
