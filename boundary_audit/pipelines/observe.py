"""`run_observe(options) -> ObserveReport`: the library function behind `boundary-audit observe`.

1. Inputs first (the harness's argv, config templates, `--compare SYSTEM:PATH`, the task
   selection and reply sets), so a bad one costs nothing.
2. One traced run of the harness with `count` arrival canaries from the reply source (the
   mock model by default), in the tracing sandbox (`observe.Recorder`): the chains, the
   derived boundary. No canary arriving is an ObserveError (exit 6): the run says nothing.
3. With `fingerprint`: each carried probe through the harness (one traced run each), and the
   same probes through `raw`, which the Table-8 row compares with.
4. With `damage`: the task suite through the real harness, untraced, one mock conversation
   per task reply (`observe.harness.ObservedHarness`), and through `raw`, with the validators;
   damage per reply set in the Table-8 measure (`pipelines.matrix.measure`).
5. The report: chains, the path, its differences from the named adapter path, and the
   harness's Table-8 row (a one-row `Table8Report`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from boundary_audit import __version__
from boundary_audit.adapters import load_adapters
from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.errors import UsageError
from boundary_audit.observe import Recorder, observe
from boundary_audit.observe.canary import MISSING
from boundary_audit.observe.chain import Chain
from boundary_audit.observe.classify import ObserveError, compare, to_path
from boundary_audit.observe.harness import HarnessCommand, ObservedHarness
from boundary_audit.observe.replies import SOURCES, MockReplies, ReplySource
from boundary_audit.observe.run import Observation, fingerprint
from boundary_audit.pipelines.matrix import fingerprints, measure, run_matrix
from boundary_audit.probes import Fingerprint, load_probes
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.results.observe import ChainView, Difference, HopView, ObserveReport, Turn
from boundary_audit.results.table8 import Measure, Row, Table8Report
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.static.checks import record_of
from boundary_audit.tasks import ReplySet, Task, load_reply_set, load_tasks
from boundary_audit.taxonomy import BASELINE, Contract
from boundary_audit.transports import TRANSPORTS, make_transport

MEMORY = 2 << 30
"""The memory (cgroup) of one harness run: agent CLIs are larger than a shell."""
ADDRESS_SPACE = 1 << 36
"""Their per-process address space: node and bun reserve gigabytes they never touch."""


@dataclass(frozen=True)
class ObserveOptions:
    """What `boundary-audit observe` was asked to do."""

    harness: HarnessCommand
    source: str = "mock"
    count: int = 2
    ssh: bool = False
    fingerprint: bool = True
    damage: bool = True
    select: str = "core"
    replies: tuple[str, ...] = ("oracle", "naive")
    compare: str = ""
    """`system:path` of an adapter path to compare the observation with ("" for none)."""
    explanations: Mapping[str, str] = field(default_factory=dict)
    """Difference field -> why it is expected (`--explain FIELD=TEXT`)."""
    timeout_s: float = 60.0
    """Seconds one harness run (traced, or one task conversation) may take."""
    jobs: int = 2
    memory_bytes: int = MEMORY
    command: str = ""


@dataclass(frozen=True)
class ObservePlan:
    """Checked inputs."""

    options: ObserveOptions
    tasks: tuple[Task, ...]
    reply_sets: tuple[ReplySet, ...]
    adapter_path: BoundaryPath | None


def prepare_observe(options: ObserveOptions) -> ObservePlan:
    """Check every input; raise before anything runs."""
    if not options.harness.argv:
        raise UsageError("observe: give the harness command after `--`")
    options.harness.runnable  # noqa: B018 - an unknown placeholder is a usage error now
    if options.source not in SOURCES:
        raise UsageError(f"--source {options.source!r}: one of {', '.join(SOURCES)}")
    if options.source != "mock" and options.harness.templates:
        raise UsageError("--config-template needs --source mock (it points at the mock model)")
    if not 1 <= options.count <= 16:
        raise UsageError(f"--count {options.count}: between 1 and 16")
    adapter_path = None
    if options.compare:
        system, sep, path_id = options.compare.partition(":")
        if not sep or not system or not path_id:
            raise UsageError(f"--compare {options.compare!r}: expected SYSTEM:PATH")
        adapters = {a.id: a for a in load_adapters()}
        if system not in adapters:
            raise UsageError(f"--compare: no system {system!r} ({', '.join(sorted(adapters))})")
        try:
            adapter_path = adapters[system].path(path_id)
        except KeyError:
            known = ", ".join(p.id for p in adapters[system].paths)
            raise UsageError(f"--compare: {system} has no path {path_id!r} ({known})") from None
    tasks: tuple[Task, ...] = ()
    reply_sets: tuple[ReplySet, ...] = ()
    if options.damage:
        tasks = tuple(load_tasks(options.select))
        suite = load_tasks()
        reply_sets = tuple(load_reply_set(s, suite).restricted(tasks) for s in options.replies)
    return ObservePlan(options, tasks, reply_sets, adapter_path)


def make_source(options: ObserveOptions) -> ReplySource:
    """The reply source the options name."""
    if options.source == "mock":
        return MockReplies(shape=options.harness.shape, templates=options.harness.templates)
    return SOURCES[options.source]()


def limits(options: ObserveOptions) -> Limits:
    """The limits of every harness run."""
    return Limits(
        timeout_s=options.timeout_s,
        memory_bytes=options.memory_bytes,
        address_space_bytes=max(ADDRESS_SPACE, options.memory_bytes),
        cpu_s=max(30, int(options.timeout_s * 2)),
        max_procs=512,
    )


def run_observe(
    options: ObserveOptions,
    *,
    progress: Progress | None = None,
    announce: Callable[[str], None] | None = None,
) -> ObserveReport:
    """Observe, fingerprint, measure; see the module docstring. `announce` is told where the
    harness runs (the CLI writes it to stderr, as every command that runs replies does)."""
    plan = prepare_observe(options)
    progress = progress or NoProgress()
    say = progress.note
    cmd = options.harness
    source = make_source(options)
    with Recorder(limits(options)) as recorder:
        recorder.expose(cmd.expose)
        confinement = recorder.confinement()
        (announce or say)(f"the harness runs in: {confinement}")
        say(f"observing {cmd.label}: {options.count} canaries from the {source.name} source")
        obs = observe(
            recorder,
            cmd.runnable,
            source,
            count=options.count,
            env=cmd.env,
            ssh=options.ssh,
            timeout=options.timeout_s,
        )
        turns = _turns(source)
        if obs.derived is None or obs.derived.boundary_class is None:
            raise ObserveError(_why_nothing(obs, turns))
        facts: Fingerprint | None = None
        skipped: dict[str, str] = {}
        if options.fingerprint:
            say("fingerprint: one traced run per probe")
            facts, skipped, _ = fingerprint(
                recorder,
                cmd.runnable,
                source,
                load_probes(),
                env=cmd.env,
                ssh=options.ssh,
                timeout=options.timeout_s,
            )
    contract = obs.contract if source.name != "mock" else _contract(obs, turns)
    path = to_path(obs.derived, contract, expect=facts.as_dict() if facts else None)
    path = replace(path, fix=record_of(path.boundary_class).fix)
    differences: tuple[Difference, ...] = ()
    if plan.adapter_path is not None:
        differences = tuple(
            Difference(d.field, d.observed, d.adapter, options.explanations.get(d.field, ""))
            for d in compare(path, plan.adapter_path)
        )
    table8 = _table8(plan, path, facts, obs, progress) if options.damage else None
    notes = list(obs.derived.notes)
    if not obs.complete:
        notes.append("the harness's trace is not whole: it did not end inside the run")
    return ObserveReport(
        tool_version=__version__,
        command=options.command,
        harness=tuple(cmd.argv),
        name=cmd.label,
        confinement=confinement,
        source=source.name,
        contract=contract.value,
        exit_code=obs.result.exit_code,
        timed_out=obs.result.timed_out,
        complete=obs.complete,
        turns=turns,
        chains=tuple(_chain(c, obs) for c in obs.chains),
        path=path,
        persistent=obs.derived.persistent,
        relays=obs.derived.relays,
        compared=options.compare,
        differences=differences,
        facts=facts.facts if facts else (),
        skipped_probes=tuple(sorted(skipped.items())),
        table8=table8,
        notes=tuple(notes),
    )


def _contract(obs: Observation, turns: tuple[Turn, ...]) -> Contract:
    """What the harness received: fenced text (raw) or tool calls (native)."""
    shapes = {t.shape for t in turns if t.reply is not None}
    return Contract.RAW if shapes == {"fenced"} else Contract.NATIVE


def _turns(source: ReplySource) -> tuple[Turn, ...]:
    if not isinstance(source, MockReplies) or source.last is None:
        return ()
    return tuple(
        Turn(a.request, a.api, a.shape, a.reply, a.tool, a.why)
        for a in sorted(source.last.answers, key=lambda a: a.request)
    )


def _why_nothing(obs: Observation, turns: tuple[Turn, ...]) -> str:
    err = obs.result.stderr.decode("utf-8", "replace").strip().splitlines()
    said = f"; its last words: {err[-1][:200]}" if err else ""
    status = "timed out" if obs.result.timed_out else f"exited {obs.result.exit_code}"
    if not turns and obs.source == "mock":
        return f"observe: the harness made no model request ({status}{said})"
    sent = sum(1 for t in turns if t.reply is not None)
    asked = f"{len(turns)} model requests, {sent} replies sent; " if turns else ""
    return f"observe: no canary ran ({asked}the harness {status}{said})"


def _shell(hop_shell: object) -> str:
    if hop_shell is None:
        return ""
    shell = getattr(hop_shell, "shell", "")
    flags = getattr(hop_shell, "flags", "")
    return f"{shell} {flags}".strip()


def _chain(chain: Chain, obs: Observation) -> ChainView:
    c = chain.canary
    return ChainView(
        label=c.label,
        reply=c.reply,
        token=c.token,
        arrived=chain.arrived,
        complete=chain.complete,
        outcome=obs.outcomes.get(c.label, MISSING),
        hops=tuple(
            HopView(h.trace, h.pid, h.argv, h.via, h.parses, _shell(h.shell), h.detail)
            for h in chain.hops
        ),
    )


def transport_label(path: BoundaryPath) -> str:
    """`name(params)` of the derived transport, as the Table-8 rows write it."""
    spec = path.transport
    if spec.name in TRANSPORTS:
        try:
            return make_transport(spec.name, **dict(spec.params)).label
        except UsageError:
            pass
    inner = ",".join(f"{k}={v}" for k, v in sorted(spec.params.items()))
    return f"{spec.name or '?'}({inner})" if inner else spec.name or "?"


def _table8(
    plan: ObservePlan,
    path: BoundaryPath,
    facts: Fingerprint | None,
    obs: Observation,
    progress: Progress,
) -> Table8Report:
    options = plan.options
    cmd = options.harness
    transport = ObservedHarness.for_class(
        cmd, path.boundary_class, timeout=options.timeout_s, source=options.source
    )
    baseline: Fingerprint | None = None
    with make_sandbox("bwrap", limits(options)) as sandbox:
        if facts is not None:
            progress.note("probes through raw (what the row compares with)")
            baseline = fingerprints([make_transport(BASELINE)], sandbox, load_probes()).get(
                BASELINE
            )
        progress.note(f"damage: {len(plan.tasks)} tasks through raw and {transport.label}")
        matrix = run_matrix(
            plan.tasks, plan.reply_sets, [transport], sandbox, jobs=options.jobs, progress=progress
        )
        described = sandbox.describe()
    measures: tuple[Measure, ...] = tuple(
        measure(matrix.records, transport.label, rs.name) for rs in plan.reply_sets
    )
    skipped = next((s.reason for s in matrix.skipped if s.transport == transport.label), "")
    row = Row(
        system=cmd.label,
        system_name=cmd.label,
        path="observed",
        title=f"{cmd.label}, observed from its behaviour",
        is_row=True,
        extra=True,
        study_contract="",
        study_anchor="",
        study_observed="",
        contract=path.contract.value,
        boundary_class=path.boundary_class.value,
        shell_parses=path.shell_parses,
        parse_layers=path.parse_layers,
        observed=path.observed,
        transport=transport_label(path),
        preprocess=(),
        anchors=(),
        fix=path.fix,
        marked="",
        notes=path.notes,
        facts=facts.facts if facts else (),
        measures=() if skipped else measures,
        static=None,
        skipped=skipped,
    )
    return Table8Report(
        tool_version=__version__,
        command=options.command,
        sandbox=described,
        task_select=options.select,
        task_count=len(plan.tasks),
        core_count=sum(1 for t in plan.tasks if t.core),
        reply_sets=tuple(s.name for s in plan.reply_sets),
        baseline=BASELINE,
        probes=tuple(f.probe for f in facts.facts) if facts else (),
        rows=(row,),
        baseline_facts=baseline.facts if baseline else (),
        notes=(f"{transport.label}: {skipped}",) if skipped else (),
        title=f"Table 8, measured: the command boundary of {cmd.label}, observed",
    )
