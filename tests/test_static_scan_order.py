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
