"""Benchmark: reading every file of a commit with `Checkout.files()` against three baselines.

    .venv/bin/python benchmarks/bench_source_files.py [--files 2000] [--repeat 3]

Builds a repository of N text files (~3 KiB each, plus a few binary and oversized ones) in a
temp dir and times, in the same run, the best of `--repeat` passes of:
  files()        one ls-tree, one cat-file --batch-check, one streaming cat-file --batch
  per-process    one `git cat-file blob OID` per file (what a naive reader does)
  gitpython      tree.traverse() + blob.data_stream.read() through gitpython's object database
  work-tree read open().read() of every file of a materialized checkout (a floor: no git)
Output is the time of each and its ratio to files(); nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import git

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boundary_audit.source import materialize, open_checkout  # noqa: E402
from tests.support.gitrepos import make_repo  # noqa: E402


def build(root: Path, n: int) -> Path:
    rng = random.Random(7)
    words = [f"name{i}" for i in range(200)] + ["subprocess.run(", "bash -lc", "shlex.quote", "f'"]
    files: dict[str | bytes, bytes] = {}
    for i in range(n):
        lines = [" ".join(rng.choices(words, k=8)) for _ in range(60)]
        files[f"pkg{i % 40}/mod{i}.py"] = ("\n".join(lines) + "\n").encode()
    for i in range(10):
        files[f"assets/img{i}.png"] = bytes(rng.randrange(256) for _ in range(4096))
        files[f"data/big{i}.json"] = b"[" + b"0," * (1 << 20) + b"0]"
    repo = root / "repo"
    make_repo(repo, files)
    return repo


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - start)
    return min(times), count


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = build(Path(tmp), args.files)
        co = open_checkout(str(repo))
        oids = subprocess.run(
            ["git", "-C", str(repo), "ls-tree", "-r", "--format=%(objectname)", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        tree = materialize(co, Path(tmp) / "tree")
        gp = git.Repo(repo)

        def ours() -> int:
            return sum(len(f.data) for f in co.files() if f.data is not None)

        def per_process() -> int:
            return sum(
                len(
                    subprocess.run(
                        ["git", "-C", str(repo), "cat-file", "blob", o],
                        capture_output=True,
                        check=True,
                    ).stdout
                )
                for o in oids
            )

        def gitpython() -> int:
            return sum(
                len(b.data_stream.read())
                for b in gp.commit(co.sha).tree.traverse()
                if b.type == "blob"
            )

        def worktree() -> int:
            return sum(len(p.read_bytes()) for p in tree.rglob("*") if p.is_file())

        base, count = best(ours, args.repeat)
        print(f"{len(oids)} blobs; files() read {count} bytes of text in {base * 1000:.1f} ms")
        for name, fn in [
            ("per-process", per_process),
            ("gitpython", gitpython),
            ("work-tree read", worktree),
        ]:
            t, _ = best(fn, 1 if name == "per-process" else args.repeat)
            print(f"{name:>15}: {t * 1000:9.1f} ms  = {t / base:6.2f} x files()")
        gp.close()


if __name__ == "__main__":
    main()
