"""A file's findings do not depend on which files its process analysed before it.

The four files below make a cycle of parameters across files (run_a.cmd -> relay_b.w ->
back_a.v -> run_a.cmd). Evaluating a.py's sink walks the cycle, and the walk cuts it at
run_a.cmd, so what it learns of relay_b.w on the way is partial: only d.py's constant. When
that partial value was kept for the next file, b.py's own sink read it, and it reported
b.py:8 as not model-controlled if a.py came first but as model-controlled (from e.py's tool
call) if b.py came first. With 2 workers, the order is whichever worker takes which chunk.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pytest

from boundary_audit.static.engine import ScanOptions, scan_files

FILES = {
    "a.py": (
        b"import subprocess\n\nfrom b import relay_b\n\n\n"
        b"def run_a(cmd):\n"
        b"    subprocess.run(cmd, shell=True)\n"
        b"    back_a(cmd)\n\n\n"
        b"def back_a(v):\n"
        b"    relay_b(v)\n"
    ),
    "b.py": (
        b"import subprocess\n\nfrom a import run_a\n\n\n"
        b"def relay_b(w):\n"
        b"    run_a(w)\n"
        b"    subprocess.run(w, shell=True)\n"
    ),
    "d.py": b'from b import relay_b\n\nrelay_b("ls -l")\n',
    "e.py": (
        b"import json\n\nfrom a import run_a\n\n\n"
        b"def on_tool_call(call):\n"
        b'    run_a(json.loads(call.function.arguments)["command"])\n'
    ),
}


@dataclass(frozen=True)
class _File:
    path: str
    data: bytes
    skipped: str | None = None


def _scan(order: list[str], jobs: int) -> list[dict[str, object]]:
    files = [_File(p, FILES[p]) for p in order]
    return [
        asdict(f) for f in scan_files(files, commit=None, options=ScanOptions(jobs=jobs)).findings
    ]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_findings_are_the_same_in_any_order(jobs: int) -> None:
    forward = _scan(sorted(FILES), jobs)
    assert [
        (f["primary"]["path"], f["primary"]["start_line"], f["model_controlled"])  # type: ignore[index]
        for f in forward
    ] == [("a.py", 7, True), ("b.py", 8, True)]
    assert _scan(sorted(FILES, reverse=True), jobs) == forward
    assert _scan(["b.py", "d.py", "a.py", "e.py"], 1) == forward


def test_chunks_hand_out_the_largest_files_first_in_shrinking_chunks() -> None:
    from boundary_audit.static.engine import MIN_CHUNK_BYTES, _chunks

    sizes = [300_000, 5, 90_000, 40_000, 1_000_000, 70_000] + [20_000] * 40
    work = [(f"f{i:02}.py", b"x" * n, "python") for i, n in enumerate(sizes)]
    chunks = _chunks(work, 2)
    assert chunks[:4] == [[4], [0], [2, 5], [3, 6, 7, 8, 9]]  # an eighth of what is left
    assert [len(c) for c in chunks[4:]] == [5, 4, 4, 4, 4, 4, 4, 4, 4]  # then at least 64 KiB
    cost = [sum(512 + len(work[i][1]) for i in c) for c in chunks]
    assert min(cost[:-1]) == 82048 >= MIN_CHUNK_BYTES and cost[-1] == 62053  # the rest
    assert sorted(i for c in chunks for i in c) == list(range(len(work)))


def test_results_come_back_in_the_order_of_the_files_whatever_the_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from boundary_audit.static import engine

    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", 0)  # these few bytes go to workers too
    files = {
        f"m{i:02}.py": b"import subprocess\nsubprocess.run(x, shell=True)\n" * (i + 1)
        for i in range(12)
    }
    work = [(p, d, "python") for p, d in files.items()]
    one = engine._analyse(work, None, ScanOptions(jobs=1))
    two = engine._analyse(work, None, ScanOptions(jobs=2))
    assert [r.findings[0].primary.path for r in two] == list(files)
    assert [[asdict(f) for f in r.findings] for r in two] == [
        [asdict(f) for f in r.findings] for r in one
    ]


def test_workers_are_sent_file_indices_not_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker inherits the files; a chunk is their indices (bytes would cross the pipe
    and be held twice in the parent's queue and in the worker)."""
    import concurrent.futures

    from boundary_audit.static import engine

    sent: list[object] = []
    real = concurrent.futures.ProcessPoolExecutor

    class Recording(real):  # type: ignore[misc, valid-type]
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            sent.append(args[0])
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", 0)
    files = {f"m{i:02}.py": b"import subprocess\nsubprocess.run(x, shell=True)\n" for i in range(6)}
    work = [(p, d, "python") for p, d in files.items()]
    results = engine._analyse(work, None, ScanOptions(jobs=2))
    assert [r.findings[0].primary.path for r in results] == list(files)
    assert all(isinstance(c, list) and all(type(i) is int for i in c) for c in sent)
    assert sorted(i for c in sent for i in c) == list(range(6))  # type: ignore[attr-defined]


def test_the_freed_corpus_goes_back_to_the_system() -> None:
    """`release_freed_memory` returns the holes freed bytes leave in the C heap: 64 MiB of
    file-sized bytes objects, freed with small objects kept between them, stay resident
    until it runs (then at least half of them: pages a hole only partly covers stay)."""
    import subprocess
    import sys

    code = (
        "from boundary_audit.static.engine import release_freed_memory\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status')"
        " if l.startswith('VmRSS')) // 1024\n"
        "files, keep = [], []\n"
        "for i in range(4096):\n"
        "    files.append(bytes([i % 251]) * 16384)\n"
        "    keep.append(bytes(600))\n"
        "before = rss()\n"
        "del files\n"
        "freed = rss()\n"
        "release_freed_memory()\n"
        "print(before - freed, freed - rss())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    kept_after_free, released = map(int, out.stdout.split())
    assert kept_after_free < 8 and released >= 32, out.stdout  # 50 MiB here


def test_a_scan_of_few_bytes_starts_no_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below `MIN_PARALLEL_BYTES` the files are analysed in the scanning process whatever
    `jobs` says; at it, they are shared out to the workers."""
    import concurrent.futures

    from boundary_audit.static import engine

    pools: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            pools.append(kwargs["max_workers"])
            super().__init__(*args, **kwargs)

    assert engine.MIN_PARALLEL_BYTES == 256 * 1024
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counting)
    line = b"import subprocess\nsubprocess.run(x, shell=True)\n"
    files = {f"m{i:02}.py": line for i in range(6)}
    work = [(p, d, "python") for p, d in files.items()]
    size = len(line) * 6
    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", size + 1)
    few = engine._analyse(work, None, ScanOptions(jobs=2))
    assert pools == []
    monkeypatch.setattr(engine, "MIN_PARALLEL_BYTES", size)
    shared = engine._analyse(work, None, ScanOptions(jobs=2))
    assert pools == [2]
    assert [[asdict(f) for f in r.findings] for r in few] == [
        [asdict(f) for f in r.findings] for r in shared
    ]
