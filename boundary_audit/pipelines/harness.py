"""`harness run` and `harness compare` as library calls: options in, a `HarnessReport` out.

`run_harness(options)` installs the system's driver if needed (never with `offline`), loads the
selected tasks and reply sets, opens the sandbox, runs the suite through the real harness, the
`raw` baseline (unless disabled) and, for a comparison, each transport the harness is compared
with (the system's adapter by default), then assembles the report. Nothing here prints;
progress goes to callbacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from boundary_audit.errors import UsageError
from boundary_audit.harness import driver_class
from boundary_audit.harness import explain as explanations_mod
from boundary_audit.harness.install import install
from boundary_audit.harness.suite import run_suite, suite_size
from boundary_audit.harness.transport import HarnessTransport
from boundary_audit.progress import NoProgress, Progress, Say, silent
from boundary_audit.record import RunRecord
from boundary_audit.results.harness import HarnessReport, build_report, pair
from boundary_audit.sandbox import make_sandbox
from boundary_audit.tasks import load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

Params = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class HarnessOptions:
    """What `harness run` / `harness compare` were asked to do."""

    system: str
    select: str | None = None
    """Task selection (`load_tasks` syntax); None runs the core and boundary families."""
    reply_sets: tuple[str, ...] = ("oracle", "naive")
    sandbox: str = "auto"
    jobs: int = 2
    params: Params = ()
    """Driver parameters, e.g. (("timeout", "10"),)."""
    baseline: bool = True
    """Also run the `raw` transport, for damage in points."""
    offline: bool = False
    timings: bool = False
    compare: bool = False
    against: tuple[str, ...] = ()
    """What to compare with, each: `adapter` (the system adapter's path this driver
    reproduces; the default), `adapter:<path id>`, or a transport name."""
    against_params: Params = ()
    """Parameters of the named (non-adapter) transports in `against`."""
    explanations: Path | None = None
    """A user's explanations file instead of the packaged one."""
    command: str = field(default="", compare=False)
    """The command line recorded in the report."""


def run_harness(
    options: HarnessOptions,
    *,
    progress: Progress | None = None,
    notice: Say = silent,
) -> HarnessReport:
    """Run the suite through `options.system`'s real harness (and what it is compared with)."""
    cls = driver_class(options.system)
    harness = cls(**dict(options.params))
    againsts = against_transports(harness, options) if options.compare else []
    found = install(cls.spec, offline=options.offline, progress=notice)
    tasks = load_tasks(options.select)
    reply_sets = [part for name in options.reply_sets for part in load_reply_sets(name, tasks)]
    explanations = (
        explanations_mod.load(options.explanations)
        if options.explanations
        else explanations_mod.packaged(cls.spec.name)
    )
    sandbox = make_sandbox(options.sandbox)  # announces itself and its notices (CLI)

    bar = progress or NoProgress()

    def suite(transport: Transport) -> list[RunRecord]:
        return run_suite(transport, tasks, reply_sets, sandbox, jobs=options.jobs, progress=bar)

    suites = 1 + int(options.baseline) + len(againsts)
    bar.start(suites * suite_size(tasks, reply_sets))
    try:
        harness_runs = suite(harness)
        baseline_runs = suite(make_transport(BASELINE)) if options.baseline else []
        comparisons = [pair(harness_runs, suite(t), explanations) for t in againsts]
        described = sandbox.describe()
        bar.finish()
    finally:
        for transport in (harness, *againsts):
            transport.close()
        sandbox.close()
    return build_report(
        spec=cls.spec,
        command=options.command,
        python_version=found.python_version,
        sandbox=described,
        selection=_selection(options.select, len(tasks)),
        harness_runs=harness_runs,
        baseline_runs=baseline_runs,
        comparisons=comparisons,
        timings=options.timings,
    )


def against_transports(harness: HarnessTransport, options: HarnessOptions) -> list[Transport]:
    """What `options.against` names: the system's adapter paths and named transports."""
    names = options.against or ("adapter",)
    params = dict(options.against_params)
    named = [n for n in names if not _is_adapter(n)]
    if params and not named:
        raise UsageError("--against-param sets a named transport's parameters; none was named")
    return [
        _adapter_transport(harness, n) if _is_adapter(n) else make_transport(n, **params)
        for n in names
    ]


def _is_adapter(name: str) -> bool:
    return name == "adapter" or name.startswith("adapter:")


def _adapter_transport(harness: HarnessTransport, name: str) -> Transport:
    from boundary_audit.adapters import AdapterTransport, load_adapters

    adapter = load_adapters([harness.spec.name])[0]
    path_id = name.partition(":")[2] or harness.adapter_path()
    return AdapterTransport(adapter, adapter.path(path_id))


def _selection(select: str | None, count: int) -> str:
    what = "core and boundary families" if select is None else f"--select {select}"
    return f"{what} ({count} tasks)"
