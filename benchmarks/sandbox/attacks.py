"""The attack table: every reply kind of the attacker's corpus through every transport it
applies to, in the bwrap sandbox, and the backend-level kinds in the docker sandbox too.

    .venv/bin/python benchmarks/sandbox/attacks.py --jobs 4 --json attacks.json

The corpus and its host-side judge are `tests/support/attacks.py`: a run is *contained* or
*escaped* by what the host shows (files, kernel settings, sentinel processes, listeners,
engine objects, leftovers, resource peaks, secrets in what came back, time), never by what
the sandbox reports; *error* is a run the machinery could not carry out. Prints the table
(kind -> runs, reached, contained, escaped, errors) with the command line, the machine and
its load, and every escape with its reply and evidence; `--json OUT` writes every run.
Exit status 1 if anything escaped, 2 on bad arguments.

In the docker sandbox the backend-level kinds go through `raw` (the reply reaches the same
container whichever one-shot transport carries it); `--docker-transports all` runs them
through every transport that sandbox supports. Attacks never run in the `tempdir` sandbox
(asserted): there they would really hit the host. The sandbox uids come from a range of
their own (`BOUNDARY_AUDIT_SANDBOX_UIDS`, default below), so that another boundary-audit on
the machine never shares one and the judge's "no process of the run's uid" stays exact.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

UID_RANGE = "1650100000:1024"
os.environ.setdefault("BOUNDARY_AUDIT_SANDBOX_UIDS", UID_RANGE)

from boundary_audit import supervisor  # noqa: E402
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox  # noqa: E402
from boundary_audit.services import sshd  # noqa: E402
from boundary_audit.services.dockerd import Dockerd  # noqa: E402
from boundary_audit.transports import TRANSPORTS, make_transport  # noqa: E402
from boundary_audit.transports.interface import Transport  # noqa: E402
from tests.support.attacks import (  # noqa: E402
    ATTACKS,
    CATEGORIES,
    Attack,
    Host,
    Run,
    applies,
    refuse_unconfined,
    run_attack,
)

SANDBOXES = ("bwrap", "docker")


@dataclass(frozen=True)
class Cell:
    order: int
    attack: Attack
    sandbox: str
    transport: str


def plan(
    attacks: list[Attack],
    sandboxes: list[str],
    transports: dict[str, list[str]],
) -> list[Cell]:
    """Every (sandbox, kind, transport) run, bwrap first, kinds in corpus order."""
    cells: list[Cell] = []
    for box in sandboxes:
        for attack in attacks:
            for name in transports[box]:
                if applies(attack, name, box):
                    cells.append(Cell(len(cells), attack, box, name))
    return cells


def run_all(
    cells: list[Cell],
    boxes: dict[str, Sandbox],
    carriers: dict[tuple[str, str], Transport],
    host: Host,
    jobs: int,
) -> list[Run]:
    """Every cell on `jobs` threads; runs in plan order."""
    done: dict[int, Run] = {}
    pending = list(reversed(cells))
    lock = threading.Lock()
    start = time.monotonic()

    def one(cell: Cell) -> tuple[int, Run]:
        run = run_attack(cell.attack, carriers[cell.sandbox, cell.transport],
                         boxes[cell.sandbox], host)  # fmt: skip
        with lock:
            count = len(done) + 1
        if count % 50 == 0 or run.outcome == "escaped":
            print(f"  {count}/{len(cells)} runs, {time.monotonic() - start:.0f} s"
                  + (f"; ESCAPED: {run.kind} via {run.transport} in {run.sandbox}"
                     if run.outcome == "escaped" else ""), file=sys.stderr, flush=True)  # fmt: skip
        return cell.order, run

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ba-attack") as pool:
        running: set[Future[tuple[int, Run]]] = set()
        while pending or running:
            while pending and len(running) < max(1, jobs):
                running.add(pool.submit(one, pending.pop()))
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                order, run = future.result()
                with lock:
                    done[order] = run
    return [done[c.order] for c in cells]


def table(runs: list[Run], attacks: list[Attack]) -> list[str]:
    """kind -> runs, reached, contained, escaped, errors (Markdown)."""
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for run in runs:
        c = by_kind[run.kind]
        c["runs"] += 1
        c[run.outcome] += 1
        c["reached"] += run.reached
        c[run.sandbox] += 1
    out = [
        "| kind | category | runs (bwrap + docker) | reached | contained | escaped | errors |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for attack in attacks:
        c = by_kind.get(attack.kind)
        if not c:
            continue
        total.update(c)
        out.append(
            f"| {attack.kind} | {attack.category} | {c['runs']} ({c['bwrap']} + {c['docker']}) "
            f"| {c['reached']} | {c['contained']} | {c['escaped']} | {c['error']} |"
        )
    out.append(
        f"| **all {len(by_kind)} kinds** | | **{total['runs']}** ({total['bwrap']} + "
        f"{total['docker']}) | {total['reached']} | **{total['contained']}** | "
        f"**{total['escaped']}** | **{total['error']}** |"
    )
    return out


def escapes(runs: list[Run]) -> list[str]:
    """Each escape: where, the exact reply (cut), the evidence."""
    out = []
    for run in runs:
        if run.outcome != "escaped":
            continue
        out.append(f"ESCAPED {run.kind} via {run.transport} in {run.sandbox} "
                   f"(task {run.task}, token {run.token}):")  # fmt: skip
        out.append(f"  reply: {run.reply[:600]!r}")
        out += [f"  evidence: {e}" for e in run.evidence]
        if run.error:
            out.append(f"  (the run also failed: {run.error})")
    return out


def errors(runs: list[Run]) -> list[str]:
    """Errors grouped by kind and message."""
    found: Counter[tuple[str, str]] = Counter()
    for run in runs:
        if run.outcome == "error":
            found[run.kind, f"{run.transport}/{run.sandbox}: {run.error[:160]}"] += 1
    return [f"error x{n}: {kind}: {msg}" for (kind, msg), n in sorted(found.items())]


def machine() -> dict[str, object]:
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "kernel": platform.release(),
            "load": [round(x, 2) for x in load]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per run")
    parser.add_argument("--memory-mib", type=int, default=512, help="memory (and disk) per run")
    parser.add_argument("--sandbox", action="append", choices=SANDBOXES, default=[])
    parser.add_argument("--kind", action="append", default=[], help="only these kinds")
    parser.add_argument("--category", action="append", choices=CATEGORIES, default=[])
    parser.add_argument("--transport", action="append", choices=list(TRANSPORTS), default=[])
    parser.add_argument("--docker-transports", choices=("raw", "all"), default="raw")
    parser.add_argument("--json", metavar="OUT", help="write every run's detail here")
    parser.add_argument("--list", action="store_true", help="list the kinds and exit")
    args = parser.parse_args(argv)
    if args.list:
        for a in ATTACKS:
            print(f"{a.kind:26} {a.category:10} {a.goal}")
        return 0
    unknown = sorted(set(args.kind) - {a.kind for a in ATTACKS})
    if unknown:
        parser.error(f"unknown kind(s): {', '.join(unknown)} (see --list)")
    attacks = [
        a for a in ATTACKS
        if (not args.kind or a.kind in args.kind)
        and (not args.category or a.category in args.category)
    ]  # fmt: skip
    sandboxes = args.sandbox or list(SANDBOXES)
    command = shlex.join([sys.executable, *sys.argv])
    at_start = machine()
    print(f"command: {command}\nmachine: {at_start['cpus']} CPUs, kernel {at_start['kernel']},"
          f" load average {' '.join(map(str, at_start['load']))} at start", flush=True)  # fmt: skip
    supervisor.install_signal_handlers()
    limits = Limits(timeout_s=args.timeout, grace_s=2.0, memory_bytes=args.memory_mib << 20)
    dockerd = (
        Dockerd() if "docker" in sandboxes or "docker" in (args.transport or TRANSPORTS) else None
    )
    boxes: dict[str, Sandbox] = {}
    carriers: dict[tuple[str, str], Transport] = {}
    host: Host | None = None
    try:
        engine = dockerd.start() if dockerd else None
        engines = [str(engine.socket)] if engine else []
        host = Host(limits, engines=[*engines, "/var/run/docker.sock"])
        for name in sandboxes:
            options = {"engine": engine} if name == "docker" else {}
            boxes[name] = make_sandbox(name, limits, **options)
            refuse_unconfined(boxes[name])
            assert boxes[name].name == name != "tempdir" and boxes[name].isolated
        wanted = args.transport or list(TRANSPORTS)
        transports: dict[str, list[str]] = {}
        for name, box in boxes.items():
            names = wanted if name == "bwrap" or args.docker_transports == "all" else ["raw"]
            transports[name] = []
            for t in names:
                params = {"docker_host": engine.url} if t == "docker" and engine else {}
                carrier = make_transport(t, **params)
                why = carrier.supports(box)
                if why is None:
                    carriers[name, t] = carrier
                    transports[name].append(t)
                else:
                    print(f"skipped {t} in {name}: {why}")
                    carrier.close()
        cells = plan(attacks, sandboxes, transports)
        for name, box in boxes.items():
            print(f"sandbox {name}: {box.confinement()}")
        print(f"limits: timeout {limits.timeout_s} s, memory {limits.memory_bytes >> 20} MiB, "
              f"{limits.max_procs} processes, {limits.cpus} CPU; {len(attacks)} kinds, "
              f"{len(cells)} runs, {args.jobs} jobs", flush=True)  # fmt: skip
        start = time.monotonic()
        runs = run_all(cells, boxes, carriers, host, args.jobs)
        wall = time.monotonic() - start
    finally:
        for carrier in carriers.values():
            carrier.close()
        for box in boxes.values():
            box.close()
        sshd.stop_shared()
        if host is not None:
            host.close()
        if dockerd is not None:
            dockerd.stop()
    at_end = machine()
    lines = table(runs, attacks)
    print(f"\n{len(runs)} runs in {wall:.0f} s ({wall / 60:.1f} min), load average "
          f"{' '.join(map(str, at_end['load']))} at the end\n")  # fmt: skip
    print("\n".join(lines))
    for line in [*escapes(runs), *errors(runs)]:
        print(line)
    if args.json:
        doc = {
            "schema": "boundary-audit/attack-corpus/v1",
            "command": command,
            "machine": {"start": at_start, "end": at_end},
            "limits": {
                "timeout_s": limits.timeout_s,
                "memory_bytes": limits.memory_bytes,
                "max_procs": limits.max_procs,
                "cpus": limits.cpus,
            },  # fmt: skip
            "wall_s": round(wall, 1),
            "summary": dict(Counter(r.outcome for r in runs)),
            "runs": [r.as_json() for r in runs],
        }
        Path(args.json).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return 1 if any(r.outcome == "escaped" for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
