"""The client of a fleet: expand the plan into units, schedule what the store lacks, merge.

`run_fleet(options)`:

1. opens the store (one fleet at a time per store: an advisory lock) and removes what killed
   writers left;
2. prepares the reply sets: reply files are copied into the store (workers read them there),
   `[[generate]]` entries are asked of their endpoints into the store (resumed on rerun);
3. expands the plan: a scan unit per target, then, as each scan arrives, a run unit per
   (transport its derived path needs x reply set x task x reply); raw and the named
   transports once for the whole fleet (they do not depend on a target); a target unit per
   target once its runs are done;
4. schedules every unit whose result is not in the store, in batches of runs (one Dask task
   each, `batch` runs), at most two batches per worker in flight: a Ctrl-C stops scheduling,
   waits for those batches and leaves only whole units in the store;
5. builds the fleet report from the store alone, in plan order, so that it is the same bytes
   whatever the number of workers and the order units finished in.

A unit that could not be carried out (its worker's sandbox failed its check, the worker died
more often than the scheduler allows, its scan failed) is an *error*: counted and named in the
report, left out of every pass rate and damage, and done again by the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from boundary_audit.errors import BoundaryAuditError, UsageError
from boundary_audit.fleet import worker as w
from boundary_audit.fleet.cluster import connect, worker_count
from boundary_audit.fleet.plan import FleetPlan, Generate
from boundary_audit.fleet.store import Store, StoreError, unit_key
from boundary_audit.fleet.units import RunUnit, ScanUnit, Settings, TargetUnit
from boundary_audit.record import RunRecord
from boundary_audit.tasks import ReplySet, Task, load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE

DEFAULT_BATCH = 8
SCAN_DEFAULT_REPLIES = ("oracle", "naive")


class FleetProgress(Protocol):
    """What the client reports while the fleet runs."""

    def units(self, total: int, done: int, failed: int, workers: int) -> None:
        """The counts now (`total` grows as scans arrive)."""

    def note(self, message: str) -> None:
        """A one-line message."""


class _Silent:
    def units(self, total: int, done: int, failed: int, workers: int) -> None:
        """Nothing."""

    def note(self, message: str) -> None:
        """Nothing."""


@dataclass(frozen=True)
class FleetOptions:
    """How to run a plan."""

    plan: FleetPlan
    scheduler: str | None = None
    workers: int = 2
    batch: int = DEFAULT_BATCH
    refresh: bool = False
    offline: bool = False
    cache_dir: Path | None = None


@dataclass
class FleetRun:
    """What the client collected: every target's report document and the shared records."""

    plan: FleetPlan
    settings: Settings
    reply_sets: tuple[ReplySet, ...]
    tasks: tuple[Task, ...]
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Target name -> {"repo", "sha", "scan_json" (text) | "error"}."""
    shared: tuple[RunRecord, ...] = ()
    """raw and the named transports' records (plan order); errors included."""
    total: int = 0
    done: int = 0
    ran: int = 0
    """Units carried out by this run (the rest were in the store)."""
    failed: dict[str, str] = field(default_factory=dict)
    """Unit key -> why it could not be carried out."""
    interrupted: bool = False
    workers: int = 0
    sandbox: str = ""
    """Where the replies ran (a worker's `Sandbox.confinement()`)."""


@contextlib.contextmanager
def _locked(store: Store) -> Iterator[None]:
    path = store.root / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"{store.root}: another fleet run is using this store",
                hint="wait for it, or give this plan another store",
            ) from None
        yield
    finally:
        os.close(fd)


def _generate(store: Store, g: Generate, select: str, say: Callable[[str], None]) -> Path:
    """Ask `g`'s endpoint for the plan's replies into the store (resumed); the file."""
    from boundary_audit.llm import generate as gen

    settings = {
        "model": g.model,
        "base_url": gen.public_url(g.base_url),
        "api": g.api,
        "contracts": list(g.contracts),
        "draws": g.draws,
        "temperature": g.temperature,
        "max_tokens": g.max_tokens,
        "seed": g.seed,
        "disclose_for": g.disclose_for,
        "select": select,
    }
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in g.model)[:64]
    output = store.generated_reply_path(f"{slug}.jsonl", unit_key(settings))
    key = os.environ.get(g.api_key_env, "")
    if not key and not g.base_url.startswith(("http://127.0.0.1", "http://localhost")):
        raise UsageError(f"[[generate]] {g.model}: ${g.api_key_env} is not set")
    the_plan = gen.plan(
        select=select, contracts=g.contracts, draws=g.draws, disclose_for=g.disclose_for
    )
    say(f"asking {g.model} for {len(the_plan.jobs)} replies (resumed where the store has them)")
    gen.run(
        the_plan,
        endpoint=gen.Endpoint(base_url=g.base_url, api_key=key or gen.NO_KEY, api=g.api),
        sampling=gen.Sampling(
            model=g.model, temperature=g.temperature, max_tokens=g.max_tokens, seed=g.seed
        ),
        pacing=gen.Pacing(concurrency=g.concurrency),
        output=output,
        seed=g.seed,
    )
    return output


def prepare_replies(
    plan: FleetPlan, store: Store, tasks: Sequence[Task], say: Callable[[str], None]
) -> tuple[tuple[str, ...], tuple[ReplySet, ...]]:
    """(the reply specs workers use, the loaded sets) — files copied in, generations done."""
    specs = [
        s if not os.path.isabs(s) else str(store.add_reply_file(Path(s))) for s in plan.replies
    ]
    specs += [str(_generate(store, g, plan.select, say)) for g in plan.generate]
    sets = [part for spec in specs for part in load_reply_sets(spec, tasks)]
    names = [s.name for s in sets]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise UsageError(f"{plan.path}: two reply sets are named {dup!r} (rename one file)")
    return tuple(specs), tuple(sets)


def settings_of(options: FleetOptions, specs: Sequence[str], sets: Sequence[ReplySet]) -> Settings:
    """The worker settings of a plan."""
    p = options.plan
    flags = ["--format", "json"]
    flags += ["--select", p.select] if p.select != "all" else []
    if tuple(specs) != SCAN_DEFAULT_REPLIES:  # what `scan` would record for the same runs
        flags += [a for s in specs for a in ("--replies", s)]
    flags += ["--sandbox", p.sandbox] if p.sandbox != "auto" else []
    return Settings(
        store=str(p.store),
        select=p.select,
        sandbox=p.sandbox,
        timeout_s=p.timeout_s,
        jobs=p.jobs,
        replies=tuple(specs),
        reply_names=tuple(s.name for s in sets),
        fixes=p.fixes,
        adapters=p.adapters,
        probes=p.probes,
        offline=options.offline,
        cache_dir=str(options.cache_dir) if options.cache_dir else None,
        command_flags=tuple(flags),
    )


def run_units(
    target: str,
    sha: str,
    transports: Sequence[str],
    sets: Sequence[ReplySet],
    tasks: Sequence[Task],
    settings: Settings,
) -> list[RunUnit]:
    """Every run of `transports` over the sets and tasks, in the runner's plan order (reply
    set, transport, task, reply), keyed."""
    out: list[RunUnit] = []
    for rs in sets:
        for label in transports:
            for task in tasks:
                for reply in rs.for_task(task.id):
                    unit = RunUnit(len(out), sha, target, label, task, rs.name, reply)
                    out.append(unit.keyed(settings))
    return out


class _Scheduler:
    """Submits batches with back-pressure and keeps the counts (one per client run). The
    cluster is started (or reached) on the first submission: a plan the store already holds
    whole needs none."""

    def __init__(
        self,
        connect_to: Callable[[], Any],
        settings: Settings,
        options: FleetOptions,
        run: FleetRun,
        progress: FleetProgress,
    ) -> None:
        self._connect = connect_to
        self.client: Any = None
        self.settings = settings
        self.batch = max(1, options.batch)
        self.run = run
        self.progress = progress
        self.queue: list[w.Job] = []
        self.waiting: Any = None
        self.inflight: dict[Any, tuple[str, Any]] = {}
        self.stopping = False
        self.seen: set[str] = set()
        self.last_tick = 0.0

    def _connected(self) -> Any:
        if self.client is None:
            import distributed

            self.client = self._connect()
            self.waiting = distributed.as_completed(loop=self.client.loop)
            self.run.workers = worker_count(self.client)
        return self.client

    def capacity(self) -> int:
        return max(2, 2 * max(1, self.run.workers))

    def add_runs(self, units: Sequence[RunUnit], repo: str, store: Store) -> list[str]:
        """Queue the units the store lacks (each key once per client run); their keys."""
        keys = []
        for u in units:
            keys.append(u.key)
            if u.key in self.seen:
                continue
            self.seen.add(u.key)
            self.run.total += 1
            if store.has(u.key):
                self.run.done += 1
            else:
                self.queue.append(w.Job.of(u, self.settings, repo if u.target_sha else ""))
        return keys

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        future = self._connected().submit(fn, self.settings, *args, pure=False)
        self.inflight[future] = (what, args)
        self.waiting.add(future)

    def fill(self) -> None:
        while not self.stopping and self.queue and len(self.inflight) < self.capacity():
            head = self.queue[: self.batch]
            del self.queue[: self.batch]
            self.submit("runs", w.run_batch, head)

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_tick > 0.5:
            self.last_tick = now
            if self.client is not None:
                self.run.workers = worker_count(self.client) or self.run.workers
            self.progress.units(
                self.run.total, self.run.done, len(self.run.failed), self.run.workers
            )


def _fail_batch(store: Store, jobs: Sequence[w.Job], why: str, run: FleetRun) -> None:
    for j in jobs:
        if not store.has(j.key):
            store.put_error(j.key, j.inputs, f"error: {why}")
            run.failed[j.key] = why
        else:
            run.done += 1


def _why(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        return "the workers running it died (the scheduler gave up after its allowed failures)"
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{name}: {first}" if first else name


def execute(options: FleetOptions, *, progress: FleetProgress | None = None) -> FleetRun:
    """Run the plan (see the module docstring); the collected results."""
    plan = options.plan
    progress = progress or _Silent()
    store = Store(plan.store).create()
    with _locked(store):
        store.sweep()
        tasks = load_tasks(plan.select)
        specs, sets = prepare_replies(plan, store, tasks, progress.note)
        settings = settings_of(options, specs, sets)
        run = FleetRun(plan, settings, sets, tasks)
        n = options.workers
        where = options.scheduler or f"a local cluster of {n} worker{'s' if n > 1 else ''}"
        try:
            with contextlib.ExitStack() as stack:

                def connect_to() -> Any:
                    progress.note(f"connecting to {where}")
                    return stack.enter_context(
                        connect(options.scheduler, options.workers, store.log_dir)
                    )

                _drive(connect_to, options, store, run, progress)
        finally:
            if options.scheduler is None:
                # the local cluster is closed: a temporary still in the store is a killed
                # worker's (an external cluster's workers may still be writing a duplicate)
                store.sweep()
        if not run.interrupted:
            run.shared = _shared_records(store, run)
    return run


def _shared_units(run: FleetRun) -> list[RunUnit]:
    p = run.plan
    labels = [BASELINE, *p.named] if (p.named or p.targets) else []
    return run_units("", "", labels, run.reply_sets, run.tasks, run.settings)


def _drive(
    connect_to: Callable[[], Any],
    options: FleetOptions,
    store: Store,
    run: FleetRun,
    progress: FleetProgress,
) -> None:
    plan, settings = run.plan, run.settings
    sched = _Scheduler(connect_to, settings, options, run, progress)
    shared = _shared_units(run)
    sched.add_runs(shared, "", store)
    raw_keys: dict[str, list[str]] = {}
    for u in shared:
        raw_keys.setdefault(u.transport, []).append(u.key)
    pending_targets: dict[str, dict[str, Any]] = {}
    for t in plan.targets:
        unit = ScanUnit(t.name, t.repo, refresh=options.refresh)
        run.total += 1
        if not options.refresh and store.has(scan_key := unit_key(unit.inputs(settings))):
            got = store.get(scan_key)
            assert got is not None
            run.done += 1
            pending_targets[t.name] = {"repo": t.repo, "scan_key": scan_key, "summary": got}
        else:
            sched.submit("scan", w.scan_target, unit)
    for name, info in list(pending_targets.items()):
        _plan_target(name, info, sched, store, run, raw_keys)
    try:
        sched.fill()
        sched.tick(force=True)
        _loop(sched, store, run, pending_targets, raw_keys)
    except KeyboardInterrupt:
        run.interrupted = True
        sched.stopping = True
        progress.note("stopping: waiting for the runs in flight (Ctrl-C again to abandon them)")
        _drain(sched, store, run, pending_targets, raw_keys)
        raise
    finally:
        sched.tick(force=True)
        for t in plan.targets:
            run.targets[t.name] = _target_doc(t.repo, pending_targets.get(t.name))


def _target_doc(repo: str, info: dict[str, Any] | None) -> dict[str, Any]:
    """What the report shows of one target: its scan JSON, or why there is none."""
    if info is None:
        return {"repo": repo, "error": "not scanned (the run was stopped first)"}
    if "report" in info:
        return {"repo": repo, "scan_json": info["report"]["scan_json"], "runs": info["runs"]}
    if info.get("state") == "failed":
        return {"repo": repo, "error": info.get("error", "")}
    return {"repo": repo, "error": "not reported (the run was stopped first)"}


def _plan_target(
    name: str,
    info: dict[str, Any],
    sched: _Scheduler,
    store: Store,
    run: FleetRun,
    raw_keys: dict[str, list[str]],
) -> None:
    summary = info["summary"]
    labels = list(summary["transports"])
    units = run_units(name, summary["sha"], labels, run.reply_sets, run.tasks, run.settings)
    own = sched.add_runs(units, info["repo"], store)
    info["runs"] = _plan_order(units, raw_keys, run)
    info["own"] = set(own)
    info["state"] = "running"


def _plan_order(
    units: Sequence[RunUnit], raw_keys: dict[str, list[str]], run: FleetRun
) -> list[str]:
    """A target's run keys as its `scan --probe` orders records: per reply set, raw first
    (raw's keys are in (reply set, task, reply) order: sliced per set)."""
    raw = raw_keys.get(BASELINE, [])
    by_set: dict[str, list[str]] = {}
    for u in units:
        by_set.setdefault(u.reply_set, []).append(u.key)
    out: list[str] = []
    offset = 0
    for rs in run.reply_sets:
        count = sum(len(rs.for_task(t.id)) for t in run.tasks)
        out += raw[offset : offset + count]
        offset += count
        out += by_set.get(rs.name, [])
    return out


def _ready(info: dict[str, Any], store: Store, run: FleetRun) -> bool:
    """True when every run of a target is finished or failed."""
    return info.get("state") == "running" and all(
        k in run.failed or store.has(k) for k in info["runs"]
    )


def _loop(
    sched: _Scheduler,
    store: Store,
    run: FleetRun,
    targets: dict[str, dict[str, Any]],
    raw_keys: dict[str, list[str]],
) -> None:
    _submit_ready(sched, store, run, targets)
    while sched.inflight:
        future = next(sched.waiting)
        _collect(future, sched, store, run, targets, raw_keys)
        sched.fill()
        _submit_ready(sched, store, run, targets)
        sched.tick()


def _drain(
    sched: _Scheduler,
    store: Store,
    run: FleetRun,
    targets: dict[str, dict[str, Any]],
    raw_keys: dict[str, list[str]],
) -> None:
    sched.queue.clear()
    for future in list(sched.inflight):
        if future.status == "pending":
            with contextlib.suppress(Exception):
                future.cancel()
    while sched.inflight:
        future = next(sched.waiting)
        _collect(future, sched, store, run, targets, raw_keys)
        sched.tick()


def _submit_ready(
    sched: _Scheduler, store: Store, run: FleetRun, targets: dict[str, dict[str, Any]]
) -> None:
    if sched.stopping:
        return
    for name, info in targets.items():
        if _ready(info, store, run):
            info["state"] = "reporting"
            unit = TargetUnit(name, info["repo"], info["scan_key"], tuple(info["runs"]))
            run.total += 1
            key = unit_key(unit.inputs(run.settings))
            got = store.get(key)
            if got is not None:
                run.done += 1
                info["state"] = "done"
                info["report"] = got
            else:
                sched.submit("target", w.target_report, unit, info["runs"])


def _collect(
    future: Any,
    sched: _Scheduler,
    store: Store,
    run: FleetRun,
    targets: dict[str, dict[str, Any]],
    raw_keys: dict[str, list[str]],
) -> None:
    what, args = sched.inflight.pop(future)
    try:
        result = future.result()
        error = None
    except Exception as exc:  # noqa: BLE001 - a worker's failure is the unit's error
        result, error = None, _why(exc)
    if what == "runs":
        jobs = args[0]
        if error is not None:
            _fail_batch(store, jobs, error, run)
            return
        if result["sandbox"] and not run.sandbox:
            run.sandbox = result["sandbox"]
            sched.progress.note(f"replies run in: {run.sandbox}")
        for key, status in result["statuses"].items():
            if status == w.ERROR:
                run.failed[key] = store.error(key) or "error: the run was not carried out"
                continue
            run.done += 1
            run.ran += status != w.STORED
        return
    if what == "scan":
        unit = args[0]
        if error is not None or result["status"] != w.OK:
            why = error or result.get("error", "")
            run.failed[f"scan:{unit.target}"] = why
            targets[unit.target] = {"repo": unit.repo, "state": "failed", "error": why}
            return
        run.done += 1
        run.ran += 1
        info = {"repo": unit.repo, "scan_key": result["key"], "summary": result["result"]}
        targets[unit.target] = info
        _plan_target(unit.target, info, sched, store, run, raw_keys)
        return
    unit = args[0]
    info = targets[unit.target]
    if error is not None:
        run.failed[f"target:{unit.target}"] = error
        info.update(state="failed", error=error)
        return
    run.ran += 1
    info["report"] = result["result"]
    info["state"] = "done"
    if result["status"] == w.OK:
        run.done += 1
    else:
        run.failed[f"target:{unit.target}"] = str(result.get("error", "error: not assembled"))


def _shared_records(store: Store, run: FleetRun) -> tuple[RunRecord, ...]:
    out: list[RunRecord] = []
    for u in _shared_units(run):
        got = store.get(u.key)
        if got is None:
            why = store.error(u.key) or "error: the run was not carried out"
            out.append(_error_of(u, why))
        elif "record" in got:
            out.append(w.read_record(got["record"]))
            if len(out) == 1:  # the plan's first run says where replies ran (deterministic)
                run.sandbox = str(got.get("sandbox", ""))
    return tuple(out)


def _error_of(u: RunUnit, why: str) -> RunRecord:
    builtin = u.reply_set in ("oracle", "naive")
    return RunRecord(
        task_id=u.task.id,
        family=u.task.family,
        tier=u.task.tier,
        core=u.task.core,
        tags=tuple(u.task.tags),
        transport=u.transport,
        reply_set=u.reply_set,
        reply_id=u.reply.reply_id,
        model=None if builtin else u.reply.model,
        contract=None if builtin else u.reply.contract,
        passed=False,
        reason=why if why.startswith("error: ") else f"error: {why}",
    )


def plan_digest(plan: FleetPlan) -> str:
    """A short hash of what the plan asks (targets, replies, transports, tasks, sandbox)."""
    what = {
        "targets": [(t.name, t.repo) for t in plan.targets],
        "replies": list(plan.replies),
        "generate": [g.model for g in plan.generate],
        "transports": list(plan.transports),
        "select": plan.select,
        "sandbox": plan.sandbox,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


__all__ = ["BoundaryAuditError", "FleetOptions", "FleetProgress", "FleetRun", "execute"]
