"""What runs on a fleet worker: scan a target, run a batch of units, assemble a target's report.

Each worker process keeps one `WorkerState` per plan: its sandbox (made and *checked* once,
before the first run: a sandbox that cannot run `echo ok` makes every run unit of this worker
an error unit saying why, never a task failure), the task suite, the transports it built, and
the scans of the targets it has seen (a target's transports are rebuilt from its scan, which
is deterministic; a scan that does not give the plan the client received is an error, not a
silent mismatch). Results go straight to the store, unit by unit, as each run finishes: a
worker killed in the middle of a batch loses only the runs it had in flight.

The functions here are what the client submits to Dask; they never raise for a unit's
failure (a failed unit is a returned status), only for a bug.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary_audit.errors import BoundaryAuditError
from boundary_audit.fleet.store import Store, unit_key
from boundary_audit.fleet.units import RunUnit, ScanUnit, Settings, TargetUnit, task_digest
from boundary_audit.pipelines import measure
from boundary_audit.pipelines.runner import Cell, preflight, run_cells
from boundary_audit.pipelines.scan import StaticOptions, run_static
from boundary_audit.progress import NoProgress
from boundary_audit.record import PROBE_FIELDS, RunRecord
from boundary_audit.report.scan import ScanFormat, renderer_for
from boundary_audit.results.scan import ScanReport
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.sandbox.interface import Sandbox
from boundary_audit.tasks import Reply, Task, load_tasks
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

OK, ERROR, SKIPPED, STORED = "ok", "error", "skipped", "stored"
"""A unit's status: done now, could not be carried out, transport unsupported, done before."""


@dataclass(frozen=True)
class Job:
    """A run unit as sent to a worker: no Task object, only what names it."""

    key: str
    inputs: dict[str, Any]
    target: str
    repo: str
    transport: str
    task_id: str
    task_sha: str
    reply_set: str
    reply: Reply

    @classmethod
    def of(cls, unit: RunUnit, settings: Settings, repo: str) -> Job:
        """The job of `unit` (keyed)."""
        return cls(
            unit.key,
            unit.inputs(settings),
            unit.target,
            repo,
            unit.transport,
            unit.task.id,
            task_digest(unit.task),
            unit.reply_set,
            unit.reply,
        )


@dataclass
class _Scanned:
    report: ScanReport
    plan: measure.Plan
    summary: dict[str, Any]


@dataclass
class WorkerState:
    """One plan's state in one worker process."""

    settings: Settings
    store: Store
    tasks: dict[str, Task]
    sandbox: Sandbox | None = None
    broken: str | None = None
    transports: dict[tuple[str, str], Transport] = field(default_factory=dict)
    scans: dict[str, _Scanned] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ensure_sandbox(self) -> Sandbox | None:
        """The checked sandbox, or None when this worker cannot run replies (`broken` says
        why)."""
        if self.sandbox is None and self.broken is None:
            s = self.settings
            try:
                box = make_sandbox(s.sandbox, Limits(timeout_s=s.timeout_s))
                box.__enter__()
            except BoundaryAuditError as exc:
                self.broken = f"sandbox {s.sandbox!r} unavailable on {worker_name()}: {exc.message}"
                return None
            try:
                preflight(box)
            except BoundaryAuditError as exc:
                box.__exit__(None, None, None)
                self.broken = f"{worker_name()}: {exc.message}"
                return None
            self.sandbox = box
        return self.sandbox

    def close(self) -> None:
        """Close every transport and the sandbox."""
        for t in self.transports.values():
            with contextlib.suppress(Exception):
                t.close()
        self.transports.clear()
        for scanned in self.scans.values():
            for t in scanned.plan.transports.values():
                with contextlib.suppress(Exception):
                    t.close()
        self.scans.clear()
        if self.sandbox is not None:
            with contextlib.suppress(Exception):
                self.sandbox.__exit__(None, None, None)
            self.sandbox = None


_STATES: dict[Settings, WorkerState] = {}
_STATES_LOCK = threading.Lock()


def worker_name() -> str:
    """This worker's name in messages: host and pid."""
    return f"worker {socket.gethostname()}:{os.getpid()}"


def state(settings: Settings) -> WorkerState:
    """This process's state for the plan `settings` describe (made on first use)."""
    with _STATES_LOCK:
        found = _STATES.get(settings)
        if found is None:
            tasks = {str(t.id): t for t in load_tasks(settings.select)}
            found = WorkerState(settings, Store(Path(settings.store)), tasks)
            _STATES[settings] = found
        return found


def close_all() -> None:
    """Close every plan's state (the worker plugin's teardown, and at exit)."""
    with _STATES_LOCK:
        states = list(_STATES.values())
        _STATES.clear()
    for s in states:
        s.close()


atexit.register(close_all)


def probe_settings(settings: Settings) -> measure.ProbeSettings:
    """The `scan --probe` settings of the plan."""
    return measure.ProbeSettings(
        select=settings.select,
        replies=settings.replies,
        sandbox=settings.sandbox,
        jobs=settings.jobs,
        timeout_s=settings.timeout_s,
        fixes=settings.fixes,
        adapters=settings.adapters,
        probes=settings.probes,
    )


# -- scan ---------------------------------------------------------------------------------


def _static(settings: Settings, repo: str, refresh: bool) -> ScanReport:
    options = StaticOptions(
        target=repo,
        offline=settings.offline,
        refresh=refresh,
        cache_dir=Path(settings.cache_dir) if settings.cache_dir else None,
        jobs=1,
        command_flags=settings.command_flags,
    )
    return run_static(options)


def plan_summary(report: ScanReport, the_plan: measure.Plan) -> dict[str, Any]:
    """The part of a target's scan the client plans runs from (JSON-ready)."""
    return {
        "sha": report.commit,
        "target_name": report.target_name,
        "transports": list(the_plan.transports),
        "findings": len(report.findings),
        "measured": sum(1 for rows in the_plan.measured.values() if rows),
    }


def _scanned(st: WorkerState, unit: ScanUnit) -> _Scanned:
    with st.lock:
        found = st.scans.get(unit.repo)
    if found is not None:
        return found
    report = _static(st.settings, unit.repo, unit.refresh)
    the_plan = measure.plan(
        report.findings, commit=report.commit, settings=probe_settings(st.settings)
    )
    made = _Scanned(report, the_plan, plan_summary(report, the_plan))
    with st.lock:
        return st.scans.setdefault(unit.repo, made)


def scan_target(settings: Settings, unit: ScanUnit) -> dict[str, Any]:
    """Run the scan unit (stored); {"status", "key", "result" | "error"}."""
    st = state(settings)
    inputs = unit.inputs(settings)
    key = unit_key(inputs)
    try:
        scanned = _scanned(st, unit)
    except BoundaryAuditError as exc:
        st.store.put_error(key, inputs, exc.message)
        return {"status": ERROR, "key": key, "error": exc.message}
    st.store.put(key, inputs, scanned.summary)
    return {"status": OK, "key": key, "result": scanned.summary}


# -- runs ---------------------------------------------------------------------------------


class _Writer(NoProgress):
    """Writes each finished run to the store the moment the runner hands it over."""

    def __init__(self, st: WorkerState, jobs: dict[tuple[str, str, str, str], Job]) -> None:
        self.st = st
        self.jobs = jobs
        self.statuses: dict[str, str] = {}

    def advance(self, record: RunRecord) -> None:
        job = self.jobs[(record.task_id, record.transport, record.reply_set, record.reply_id or "")]
        box = self.st.sandbox
        where = box.confinement() if box is not None else ""
        self.statuses[job.key] = write_record(self.st.store, job, record, where)


def write_record(store: Store, job: Job, record: RunRecord, sandbox: str) -> str:
    """Store one run: a result, or (when the machinery failed) an error to redo."""
    if record.errored:
        store.put_error(job.key, job.inputs, record.reason)
        return ERROR
    result = {"record": record.as_json(), "sandbox": sandbox, "worker": worker_name()}
    store.put(job.key, job.inputs, result)
    return OK


def _transport(st: WorkerState, job: Job) -> Transport | str:
    """The job's transport, or why there is none."""
    if not job.target:
        with st.lock:
            found = st.transports.get(("", job.transport))
            if found is None:
                found = make_transport(job.transport)
                if found.label != job.transport:
                    found.close()
                    return f"transport {job.transport!r} has the label {found.label!r} here"
                st.transports[("", job.transport)] = found
        return found
    scanned = _scanned(st, ScanUnit(job.target, job.repo))
    built = scanned.plan.transports.get(job.transport)
    if built is None:
        return (
            f"the scan of {job.target} on {worker_name()} does not plan {job.transport!r} "
            "(the scan differs between the client and this worker)"
        )
    return built


def run_batch(settings: Settings, jobs: Sequence[Job]) -> dict[str, Any]:
    """Run every job not already in the store: {"statuses": key -> ok, error, skipped or
    stored; "sandbox": where the replies ran, "" if nothing ran}."""
    statuses = _run_batch(settings, jobs)
    box = state(settings).sandbox
    return {"statuses": statuses, "sandbox": box.confinement() if box is not None else ""}


def _run_batch(settings: Settings, jobs: Sequence[Job]) -> dict[str, str]:
    st = state(settings)
    todo = [j for j in jobs if not st.store.has(j.key)]
    out = {j.key: STORED for j in jobs}
    for j in todo:
        del out[j.key]
    box = st.ensure_sandbox() if todo else None
    if todo and box is None:
        for j in todo:
            st.store.put_error(j.key, j.inputs, f"error: {st.broken}")
            out[j.key] = ERROR
        return out
    cells: list[Cell] = []
    by_id: dict[tuple[str, str, str, str], Job] = {}
    for j in todo:
        task = st.tasks.get(j.task_id)
        if task is None or task_digest(task) != j.task_sha:
            why = f"error: task {j.task_id} differs on {worker_name()} (another version?)"
            st.store.put_error(j.key, j.inputs, why)
            out[j.key] = ERROR
            continue
        try:
            transport = _transport(st, j)
        except BoundaryAuditError as exc:
            st.store.put_error(j.key, j.inputs, f"error: {exc.message}")
            out[j.key] = ERROR
            continue
        if isinstance(transport, str):
            st.store.put_error(j.key, j.inputs, f"error: {transport}")
            out[j.key] = ERROR
            continue
        assert box is not None
        why_not = transport.supports(box)
        if why_not is not None:
            st.store.put(j.key, j.inputs, {"skipped": why_not})
            out[j.key] = SKIPPED
            continue
        by_id[(task.id, transport.label, j.reply_set, j.reply.reply_id or "")] = j
        cells.append(Cell(len(cells), task, j.reply_set, j.reply, transport))
    if cells:
        assert box is not None
        writer = _Writer(st, by_id)
        run_cells(cells, box, jobs=settings.jobs, progress=writer)
        out.update(writer.statuses)
    return out


# -- a target's report ---------------------------------------------------------------------


def read_record(data: dict[str, Any]) -> RunRecord:
    """A stored run's record (the probe JSON's fields)."""
    values = {name: data[name] for name in PROBE_FIELDS if name in data}
    values["tags"] = tuple(values.get("tags", ()))
    return RunRecord(**values)


def target_report(settings: Settings, unit: TargetUnit, runs: Sequence[str]) -> dict[str, Any]:
    """Assemble one target's scan report from its runs in the store (stored once none
    errored); {"status", "key", "result" | "error"}. `runs` are the run keys in plan order."""
    st = state(settings)
    inputs = unit.inputs(settings)
    key = unit_key(inputs)
    if st.store.has(key):
        return {"status": OK, "key": key, "result": st.store.get(key)}
    try:
        scanned = _scanned(st, ScanUnit(unit.target, unit.repo))
    except BoundaryAuditError as exc:
        return {"status": ERROR, "key": key, "error": exc.message}
    records: list[RunRecord] = []
    skipped: dict[str, str] = {}
    errors = 0
    for run_key in runs:
        got = st.store.get(run_key)
        if got is None:
            errors += 1
            why = st.store.error(run_key) or "error: the run was not carried out"
            records.append(_error_record(run_key, st, why))
        elif "skipped" in got:
            skipped.setdefault(_label_of(st, run_key), str(got["skipped"]))
        else:
            records.append(read_record(got["record"]))
    ps = probe_settings(settings)
    box = st.ensure_sandbox()
    confinement = box.confinement() if box is not None else ""
    broken = ""
    prints: dict[str, Any] = {}
    if settings.probes and box is None:
        broken = f"error: {st.broken}"  # the probes run in the sandbox too
    elif settings.probes:
        try:
            prints = measure.fingerprint_routes(scanned.plan, ps)
        except BoundaryAuditError as exc:
            broken = f"error: the probes could not be run: {exc.message}"
    tasks = list(st.tasks.values())
    found = measure.outcome(
        scanned.report.findings,
        scanned.plan,
        ps,
        tasks,
        settings.reply_names,
        records,
        sorted(skipped.items()),
        confinement,
        prints,
    )
    report = measure.with_outcome(scanned.report, found)
    text = renderer_for(ScanFormat.JSON).render(report)
    result = {"scan_json": text, "errors": errors}
    if errors == 0 and not broken:
        st.store.put(key, inputs, result)
        return {"status": OK, "key": key, "result": result}
    why = broken or f"error: {errors} of its runs could not be carried out"
    return {"status": ERROR, "key": key, "result": result, "error": why}


def _label_of(st: WorkerState, run_key: str) -> str:
    path = st.store.unit_path(run_key)
    body = json.loads(path.read_text("utf-8"))
    return str(body["inputs"]["transport"])


def _error_record(run_key: str, st: WorkerState, why: str) -> RunRecord:
    """An error run for a unit that has no result (its inputs from the error file)."""
    import json

    path = st.store.root / "errors" / f"{run_key}.json"
    try:
        inputs = json.loads(path.read_text("utf-8"))["inputs"]
    except (OSError, ValueError, KeyError):
        inputs = {}
    task = st.tasks.get(str(inputs.get("task", "")))
    reason = why if why.startswith("error: ") else f"error: {why}"
    return RunRecord(
        task_id=str(inputs.get("task", "?")),
        family=task.family if task else "?",
        tier=task.tier if task else 0,
        core=task.core if task else False,
        tags=tuple(task.tags) if task else (),
        transport=str(inputs.get("transport", "?")),
        reply_set=str(inputs.get("reply_set", "?")),
        reply_id=inputs.get("reply_id"),
        passed=False,
        reason=reason,
    )
