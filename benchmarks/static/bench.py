"""Benchmark: the static scan against a tree-sitter parse-only pass, bandit and semgrep.

    .venv/bin/pip install -e '.[bench]'      # bandit and semgrep (once)
    .venv/bin/python benchmarks/static/bench.py [--size-mb 10] [--sink-share 0.25] \
        [--repeat 3] [--jobs 2] [--no-peers]

Generates a ~10 MB synthetic tree of mixed-language files (`synth.py`: the check fixtures and
specimens with varied names inside ordinary filler code in a quarter of the files, filler
only in the rest; no network) and times, in one run on the same files:
  (a) parse-only   every file parsed by tree-sitter in one process (the baseline)
  (b) scan         `scan_path(tree, options=ScanOptions(jobs=N))` (queries, dataflow,
                   classification, suppressions) on N worker processes
  (c) bandit       `bandit -t B602,B603,B604,B605,B606,B607 -r TREE` (Python files only)
  (d) semgrep      `semgrep --metrics=off --disable-version-check --config semgrep-rules.yml`
                   with local rules for the same sinks (Python, JS/TS, Go, bash)
(a) and (b) alternate --repeat times and each keeps its best run; the peers run once. Output:
wall seconds and the ratio to (a), and for (a)/(b) also CPU seconds (workers included);
nothing is asserted. Peers that are not installed are reported as missing.

    .venv/bin/python benchmarks/static/bench.py --scale [--size-mb 10] [--factors 1,2,4,8] \
        [--repeat 2] [--jobs 2] [--other-code DIR]

The scaling run (issue 15): the synthetic tree at --size-mb times each factor (the same seed,
so a larger tree starts with the files of the smaller one), each measured as whole processes,
as a user starts them, alternating in each of --repeat rounds:
  parse-only   `python bench.py --parse-only DIR`: reads every file (the bytes are kept, as
               the scan keeps its corpus), then parses each with tree-sitter, one process
  scan         `boundary-audit scan DIR --no-probe --offline --format json --jobs N`
  ... [other]  with --other-code DIR, the scan again with PYTHONPATH=DIR (another version of
               the package, e.g. main's: `git archive main boundary_audit tasks probes
               system_adapters specimens contracts | tar -x -C DIR`), in the same rounds
Each tree is committed to a fresh git repository first (the CLI scans a commit).
CPU is user + system of the process and of the workers it reaped, wall its elapsed time,
both the median of the rounds minus the same pass on a 2-file tree (the start-up, measured
after one uncounted warm-up round: .pyc files, the checkout cache); peak is
the largest resident set of the process and its reaped workers (`wait4`'s ru_maxrss: one
process's peak, the largest, not their sum). Printed per size, then the growth (8x time /
1x time, net) and the peak ratio to parse-only; the load average before and after each size;
the findings' count and the sha256 of the report's `findings` array (equal sha256 with
--other-code: the same findings).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from synth import generate  # noqa: E402

from boundary_audit.static.parsing import detect_language, parser  # noqa: E402


def source_files(tree: Path) -> list[tuple[str, bytes]]:
    out = []
    for path in sorted(tree.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(tree).parts:
            data = path.read_bytes()
            lang = detect_language(path.name, data[:256])
            if lang is not None:
                out.append((lang, data))
    return out


def cpu() -> float:
    """CPU seconds of this process and its finished children (the scan's workers)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def parse_only(tree: Path) -> tuple[float, float]:
    files = source_files(tree)
    start, start_cpu = time.perf_counter(), cpu()
    for lang, data in files:
        parser(lang).parse(data)
    return time.perf_counter() - start, cpu() - start_cpu


def scan(tree: Path, jobs: int) -> tuple[float, float, int]:
    from boundary_audit.static.engine import ScanOptions, scan_path

    start, start_cpu = time.perf_counter(), cpu()
    result = scan_path(tree, options=ScanOptions(jobs=jobs))
    return time.perf_counter() - start, cpu() - start_cpu, len(result.findings)


def peer(argv: list[str]) -> tuple[float | None, str]:
    from boundary_audit._subprocess import run

    if not installed(argv[0]):
        return None, "not installed (pip install -e '.[bench]')"
    start = time.perf_counter()
    done = run(argv, timeout=1800)
    return time.perf_counter() - start, f"exit {done.returncode}"


def installed(exe: str) -> bool:
    """Whether the program `exe` (a path, or a name on PATH) is there."""
    return shutil.which(exe) is not None or Path(exe).exists()


def tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


PEERS = ("bandit", "semgrep")


def peer_argv(name: str, tree: Path, report: Path) -> list[str]:
    """The command line of peer `name` over `tree`, writing its JSON to `report`: bandit's
    shell and process checks (Python files only), or semgrep with the local rules."""
    if name == "bandit":
        checks = "B602,B603,B604,B605,B606,B607"
        return [tool(name), "-q", "-t", checks, "-r", str(tree), "-f", "json", "-o", str(report)]
    rules = str(HERE / "semgrep-rules.yml")
    options = ["--metrics=off", "--disable-version-check", "--config", rules, "--json", "--quiet"]
    return [tool(name), "scan", *options, "--output", str(report), str(tree)]


def parse_only_child(tree: Path) -> int:
    """The parse-only process of the scaling run: read every file, then parse each once."""
    files = source_files(tree)
    for lang, data in files:
        parser(lang).parse(data)
    print(f"{len(files)} {sum(len(d) for _, d in files)}")
    return 0


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int, str]:
    """(CPU s, wall s, peak MiB, exit status, stdout) of one process and its reaped children."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu_s = usage.ru_utime + usage.ru_stime
    return cpu_s, wall, usage.ru_maxrss / 1024, proc.returncode, out


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def commit_tree(tree: Path) -> None:
    """Make `tree` a git work tree with one commit of its files (the CLI scans a commit)."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for argv in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "tree"],
    ):
        subprocess.run(["git", "-C", str(tree), *argv], env=env, check=True)


def scale(args: argparse.Namespace) -> int:
    """The scaling run: parse-only and scan at each size, net of start-up, with peak memory."""
    exe = Path(sys.executable).parent / "boundary-audit"
    if not exe.exists():
        sys.stderr.write(f"no console script at {exe}: run ./scripts/setup first\n")
        return 2
    factors = [int(f) for f in args.factors.split(",")]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"load {load()}; jobs {args.jobs}; {args.repeat} rounds, medians")
    with tempfile.TemporaryDirectory(prefix="ba-static-scale-") as tmp:
        report = Path(tmp) / "r.json"
        env["BOUNDARY_AUDIT_CACHE_DIR"] = str(Path(tmp) / "cache")

        def cases(tree: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
            scan = [str(exe), "scan", str(tree), "--no-probe", "--offline", "--format", "json"]
            scan += ["--output", str(report), "--jobs", str(args.jobs)]
            out = {
                "parse-only": ([sys.executable, __file__, "--parse-only", str(tree)], env),
                "scan": (scan, env),
            }
            if args.other_code is not None:
                out["scan [other]"] = (scan, {**env, "PYTHONPATH": str(args.other_code)})
            return out

        def rounds(tree: Path, n: int, warm: int) -> dict[str, tuple[float, float, float, str]]:
            """Per case: median CPU, median wall, largest peak, notes; `warm` uncounted first."""
            runs: dict[str, list[tuple[float, float, float]]] = {}
            notes: dict[str, set[str]] = {}
            for round_ in range(n + warm):
                for name, (argv, case_env) in cases(tree).items():
                    cpu_s, wall, peak, status, out = measure(argv, case_env)
                    if name.startswith("scan"):
                        done = json.loads(report.read_text())
                        digest = hashlib.sha256(
                            json.dumps(done["findings"], sort_keys=True).encode()
                        ).hexdigest()
                        note = (
                            f"exit {status}, {done['summary']['files_scanned']} files, "
                            f"{len(done['findings'])} findings sha256 {digest[:12]}"
                        )
                    else:
                        note = f"exit {status}, files/bytes {out.strip()}"
                    notes.setdefault(name, set()).add(note)
                    if round_ >= warm:
                        runs.setdefault(name, []).append((cpu_s, wall, peak))
            return {
                name: (
                    statistics.median(c for c, _, _ in got),
                    statistics.median(w for _, w, _ in got),
                    max(p for _, _, p in got),
                    "; ".join(sorted(notes[name])),
                )
                for name, got in runs.items()
            }

        tiny = Path(tmp) / "tiny"
        tiny.mkdir()
        (tiny / "a.py").write_text("import subprocess\n\ndef f(x):\n    return x\n")
        (tiny / "b.sh").write_text("echo hello\n")
        commit_tree(tiny)
        startup = rounds(tiny, max(args.repeat, 3), 1)  # warms .pyc files and caches
        print("start-up (2-file tree), subtracted below:")
        for name, (c, w, p, note) in startup.items():
            print(f"   {name:<14} cpu {c:6.2f}s wall {w:6.2f}s peak {p:6.1f} MiB  {note}")
        table: dict[int, dict[str, tuple[float, float, float, str]]] = {}
        for factor in factors:
            tree = Path(tmp) / f"tree{factor}"
            counts = generate(tree, args.size_mb * factor, sink_share=args.sink_share)
            size = sum(len(d) for _, d in source_files(tree))
            commit_tree(tree)
            before = load()
            got = table[factor] = rounds(tree, args.repeat, 0)
            print(
                f"{factor}x: {sum(counts.values())} files, {size / 1e6:.1f} MB; "
                f"load {before} -> {load()}"
            )
            base_cpu = got["parse-only"][0] - startup["parse-only"][0]
            for name, (c, w, p, note) in got.items():
                net_c, net_w = c - startup[name][0], w - startup[name][1]
                print(
                    f"   {name:<14} cpu {net_c:7.2f}s ({net_c / base_cpu:4.2f}x parse-only) "
                    f"wall {net_w:7.2f}s peak {p:6.1f} MiB "
                    f"({p / got['parse-only'][2]:4.2f}x parse-only)  {note}"
                )
            shutil.rmtree(tree)
        lo, hi = factors[0], factors[-1]
        print(f"growth {hi}x / {lo}x (net of start-up), and peak vs parse-only at {hi}x:")
        for name in table[lo]:
            (c0, w0, _, _), (c1, w1, p1, _) = table[lo][name], table[hi][name]
            s0, s1 = startup[name][0], startup[name][1]
            print(
                f"   {name:<14} cpu {(c1 - s0) / (c0 - s0):5.2f}x  wall "
                f"{(w1 - s1) / (w0 - s1):5.2f}x  peak {p1 / table[hi]['parse-only'][2]:4.2f}x"
            )
    print(f"load after {load()}")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--parse-only"]:
        return parse_only_child(Path(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--sink-share", type=float, default=0.25, help="share of files seeded with sinks"
    )
    ap.add_argument("--no-peers", action="store_true", help="skip bandit and semgrep")
    ap.add_argument("--scale", action="store_true", help="the scaling run (see above)")
    ap.add_argument("--factors", default="1,2,4,8", help="--scale: tree sizes, x --size-mb")
    ap.add_argument("--other-code", type=Path, help="--scale: also scan with PYTHONPATH=DIR")
    args = ap.parse_args()
    if args.scale:
        return scale(args)
    with tempfile.TemporaryDirectory(prefix="ba-static-bench-") as tmp:
        tree = Path(tmp) / "tree"
        counts = generate(tree, args.size_mb, sink_share=args.sink_share)
        size = sum(len(d) for _, d in source_files(tree))
        print(
            f"tree: {sum(counts.values())} files, {size / 1e6:.1f} MB: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
        # NOTE(h2): parse-only and scan alternate, so a burst of load on the shared machine
        # hits both; each keeps its best run.
        parses, scans = [], []
        for _ in range(args.repeat):
            parses.append(parse_only(tree))
            scans.append(scan(tree, args.jobs))
        base, base_cpu = min(parses)
        best, best_cpu, findings = min(scans)
        rows = [
            ("(a) parse-only, 1 process", base, f"cpu {base_cpu:.2f}s"),
            (
                f"(b) boundary-audit scan, jobs={args.jobs}",
                best,
                f"cpu {best_cpu:.2f}s ({best_cpu / base_cpu:.2f}x), {findings} findings",
            ),
        ]
        if not args.no_peers:
            t, note = peer(peer_argv("bandit", tree, Path(tmp) / "bandit.json"))
            rows.append(("(c) bandit -t B602..B607 -r", t, note + ", Python files only"))
            t, note = peer(peer_argv("semgrep", tree, Path(tmp) / "semgrep.json"))
            rows.append(("(d) semgrep, local rules", t, note))
        for label, seconds, note in rows:
            shown = "   n/a  " if seconds is None else f"{seconds:7.2f}s"
            ratio = "   n/a" if seconds is None else f"{seconds / base:5.2f}x"
            print(f"{label:<38} {shown} {ratio}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
