"""Benchmark: `boundary-audit scan` on real harness trees against a parse-only pass.

    .venv/bin/pip install -e '.[bench]'      # bandit and semgrep (once)
    .venv/bin/python benchmarks/static/real.py [--repeat 3] [--mirrors /work/.mirror] \
        [--trees real_trees.toml] [--only NAME] [--other-code DIR] [--no-peers] [--floor]

For each tree of `real_trees.toml` (a bare git mirror and a commit; skipped with a note when
the mirror or the commit is absent), whole processes, as a user starts them:
  parse-only     `python real.py --parse-only DIR`: imports the scanner's parsing module
                 (tree-sitter and its grammars) and parses every file once, in one process
                 (`static.parsing.parse`, the scan's own); the baseline
  scan -j1       `boundary-audit scan MIRROR@COMMIT --no-probe --format json --jobs 1`
  scan -j2       the same with 2 worker processes (the default)
  sites only     with --floor, `python real.py --sites-only MIRROR@COMMIT ... --jobs 1`: the
                 scan -j1 with its sinks' evaluation left out (`analyze.evaluate_sink` and
                 `analyze.serialized_templates` answer nothing), so it reads, filters,
                 parses, runs the query pass and finds the catalogue sites, and reports
                 nothing: what a scan of these checks costs before it traces one value
  ... [other]    with --other-code DIR, both scans again with PYTHONPATH=DIR (another
                 version of the package, e.g. `git archive main boundary_audit tasks probes
                 system_adapters specimens contracts | tar -x -C DIR`), in the same rounds
  bandit         `bandit -q -t B602,B603,B604,B605,B606,B607 -r DIR -f json` (its shell and
                 process checks; Python files only), in the same rounds
  semgrep        `semgrep scan --metrics=off --disable-version-check --config
                 semgrep-rules.yml --json DIR` (local rules for the same sinks; semgrep's
                 default ignores apply), in the same rounds
The peers are left out with --no-peers, and noted as missing when not installed; their
notes give the exit status (bandit exits 1 when it reports an issue) and the results' count.
DIR holds exactly the files the scan analyses: the commit's files as the scan reads them
(`source.open_checkout(...).files()`, so missing blobs of a partial mirror, binaries and
oversized files are left out as the scan leaves them; `git archive` cannot serve a partial
mirror) whose language `static.parsing.detect_language` knows. The three alternate
`--repeat` times after one uncounted warm-up round (the checkout cache, .pyc files); each
reports its median CPU (user + system of the process and the workers it reaped, `wait4`)
and wall time, and the ratio to parse-only. The load average is printed before and after
each tree; the findings' count and the sha256 of the report's `findings` array are printed
so that a change to the scanner can show its findings byte-identical. Nothing is asserted.
The children run without PYTHONDONTWRITEBYTECODE (see benchmarks/bench_startup.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import bench  # noqa: E402  (benchmarks/static/bench.py, beside this file)


@dataclass(frozen=True)
class Tree:
    name: str
    mirror: Path
    commit: str


def trees(toml: Path, mirrors: Path) -> list[Tree]:
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    return [Tree(t["name"], mirrors / t["mirror"], t["commit"]) for t in data["tree"]]


def parse_only(root: Path) -> int:
    """The baseline process: parse every file below `root` once; print files and bytes."""
    from boundary_audit.static.parsing import detect_language, parse

    files = size = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lang = detect_language(path.relative_to(root).as_posix(), data[:256])
        if lang is not None:
            parse(lang, data)
            files, size = files + 1, size + len(data)
    print(f"{files} {size}")
    return 0


def write_scanned_files(tree: Tree, dest: Path, cache: Path) -> dict[str, int]:
    """The files the scan analyses, written below `dest`; their count per language."""
    from boundary_audit.source import open_checkout
    from boundary_audit.static.parsing import detect_language

    checkout = open_checkout(f"{tree.mirror}@{tree.commit}", offline=True, cache_dir=cache)
    counts: dict[str, int] = {}
    for f in checkout.files():
        if f.data is None:
            continue
        lang = detect_language(f.path, f.data[:256])
        if lang is None:
            continue
        out = dest / f.path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(f.data)
        counts[lang] = counts.get(lang, 0) + 1
    return dict(sorted(counts.items()))


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """(CPU seconds, wall seconds, exit status, stdout) of one process and its children
    (the static benchmark's `measure`, without the peak memory)."""
    cpu, wall, _peak, status, out = bench.measure(argv, env)
    return cpu, wall, status, out


def sites_only(argv: list[str]) -> int:
    """The floor process (`--floor`): `boundary-audit scan` with `argv`, its sinks never
    evaluated (no dataflow), so it costs what finding the sites costs."""
    from boundary_audit import cli
    from boundary_audit.static import analyze

    analyze.evaluate_sink = lambda site, ctx: None  # type: ignore[assignment]
    analyze.serialized_templates = lambda sites, ctx: []  # type: ignore[assignment]
    sys.argv = ["boundary-audit", "scan", *argv]
    try:
        cli.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def peers(files_dir: Path, out: Path) -> dict[str, tuple[list[str], Path]]:
    """The installed peer tools' processes over `files_dir` (`bench.peer_argv`), each with
    the JSON report it writes below `out`."""
    found: dict[str, tuple[list[str], Path]] = {}
    for name in bench.PEERS:
        report = out / f"{name}.json"
        argv = bench.peer_argv(name, files_dir, report)
        if not bench.installed(argv[0]):
            print(f"   {name}: not installed (pip install -e '.[bench]')")
            continue
        found[name] = (argv, report)
    return found


def peer_results(report: Path) -> str:
    """How many results a peer's JSON report holds."""
    try:
        done = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no report"
    return f"{len(done.get('results', []))} results"


def bench_tree(
    tree: Tree,
    repeat: int,
    exe: Path,
    other: Path | None,
    with_peers: bool = True,
    floor: bool = False,
) -> None:
    if not tree.mirror.is_dir():
        print(f"== {tree.name}: skipped, no mirror at {tree.mirror}")
        return
    probe = subprocess.run(
        ["git", f"--git-dir={tree.mirror}", "cat-file", "-e", f"{tree.commit}^{{commit}}"],
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull},
        check=False,
    )
    if probe.returncode != 0:
        print(f"== {tree.name}: skipped, commit {tree.commit} not in {tree.mirror}")
        return
    with tempfile.TemporaryDirectory(prefix="ba-real-bench-") as tmp:
        cache, files_dir, report = Path(tmp) / "cache", Path(tmp) / "files", Path(tmp) / "r.json"
        counts = write_scanned_files(tree, files_dir, cache)
        size = sum(p.stat().st_size for p in files_dir.rglob("*") if p.is_file())
        print(
            f"== {tree.name} @{tree.commit}: {sum(counts.values())} files, {size / 1e6:.2f} MB "
            f"({', '.join(f'{k} {v}' for k, v in counts.items())}); load {load()}"
        )
        env = {**os.environ, "BOUNDARY_AUDIT_CACHE_DIR": str(cache)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        scan = [str(exe), "scan", f"{tree.mirror}@{tree.commit}", "--no-probe", "--offline"]
        scan += ["--format", "json", "--output", str(report)]
        cases = {
            "parse-only, 1 process": [sys.executable, __file__, "--parse-only", str(files_dir)],
            "scan --jobs 1": [*scan, "--jobs", "1"],
            "scan --jobs 2": [*scan, "--jobs", "2"],
        }
        if floor:
            cases["sites only --jobs 1"] = [sys.executable, __file__, "--sites-only", *scan[2:]]
            cases["sites only --jobs 1"] += ["--jobs", "1"]
        envs = dict.fromkeys(cases, env)
        if other is not None:
            for jobs in ("1", "2"):
                cases[f"scan --jobs {jobs} [other]"] = [*scan, "--jobs", jobs]
                envs[f"scan --jobs {jobs} [other]"] = {**env, "PYTHONPATH": str(other)}
        reports = peers(files_dir, Path(tmp)) if with_peers else {}
        for name, (argv, _report) in reports.items():
            cases[name] = argv
            envs[name] = env
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        notes: dict[str, set[str]] = {k: set() for k in cases}
        for round_ in range(repeat + 1):
            for name, argv in cases.items():
                cpu, wall, status, out = measure(argv, envs[name])
                if name.startswith("scan"):
                    done = json.loads(report.read_text())
                    findings = done["findings"]
                    digest = hashlib.sha256(
                        json.dumps(findings, sort_keys=True).encode()
                    ).hexdigest()
                    notes[name].add(
                        f"exit {status}, {done['summary']['files_scanned']} files, "
                        f"{len(findings)} findings sha256 {digest[:12]}"
                    )
                elif name.startswith("sites only"):
                    notes[name].add(f"exit {status}")
                elif name in reports:
                    notes[name].add(f"exit {status}, {peer_results(reports[name][1])}")
                else:
                    notes[name].add(f"exit {status}, files/bytes {out.strip()}")
                if round_:
                    runs[name].append((cpu, wall))
        base_cpu = statistics.median(c for c, _ in runs["parse-only, 1 process"])
        base_wall = statistics.median(w for _, w in runs["parse-only, 1 process"])
        print(f"   {repeat} rounds, medians; load after {load()}")
        print(f"   {'pass':<27} {'CPU':>8} {'ratio':>6} {'wall':>8} {'ratio':>6}  notes")
        for name, samples in runs.items():
            cpu = statistics.median(c for c, _ in samples)
            wall = statistics.median(w for _, w in samples)
            print(
                f"   {name:<27} {cpu:7.2f}s {cpu / base_cpu:5.2f}x {wall:7.2f}s "
                f"{wall / base_wall:5.2f}x  {'; '.join(sorted(notes[name]))}"
            )


def main() -> int:
    if sys.argv[1:2] == ["--parse-only"]:
        return parse_only(Path(sys.argv[2]))
    if sys.argv[1:2] == ["--sites-only"]:
        return sites_only(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--trees", type=Path, default=HERE / "real_trees.toml")
    ap.add_argument("--only", action="append", help="tree name (repeatable)")
    ap.add_argument("--other-code", type=Path, help="also scan with PYTHONPATH=DIR")
    ap.add_argument("--no-peers", action="store_true", help="leave out bandit and semgrep")
    ap.add_argument(
        "--floor", action="store_true", help="also the scan -j1 without its sinks' dataflow"
    )
    args = ap.parse_args()
    exe = Path(sys.executable).parent / "boundary-audit"
    if not exe.exists():
        sys.stderr.write(f"no console script at {exe}: run ./scripts/setup first\n")
        return 2
    for tree in trees(args.trees, args.mirrors):
        if not args.only or tree.name in args.only:
            bench_tree(tree, args.repeat, exe, args.other_code, not args.no_peers, args.floor)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
