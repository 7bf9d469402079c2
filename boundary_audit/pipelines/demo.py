"""The embedded default: the packaged specimens as a repository, scanned, probed, tabulated.

`build_specimen_repo` writes the specimen harnesses (one per boundary class, see
specimens/README.md) into a git repository with a fixed identity and date, so its commit sha
is the same on every machine. `run_demo` scans it (`run_static`), maps every model-controlled
finding to a transport (`pipelines.measure.choose_transports`), runs the task selection through
`raw` and those transports once, attaches the evidence to the findings, fingerprints each
transport with the probes, and lays the result out as a Table-8 report whose rows are the
findings. Offline: nothing leaves the machine.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from boundary_audit import __version__
from boundary_audit._data import iter_files
from boundary_audit._subprocess import run
from boundary_audit.errors import UsageError
from boundary_audit.finding import Finding
from boundary_audit.pipelines.matrix import fingerprints, measure, run_matrix
from boundary_audit.pipelines.measure import attach_evidence, choose_transports
from boundary_audit.pipelines.scan import StaticOptions, run_static
from boundary_audit.probes import Fingerprint, load_probes
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.results.scan import ScanReport
from boundary_audit.results.table8 import (
    VERIFIED,
    AnchorCheck,
    Measure,
    Row,
    StaticCheck,
    Table8Report,
)
from boundary_audit.sandbox import Limits, make_sandbox
from boundary_audit.static.checks import record_of
from boundary_audit.tasks import load_reply_sets, load_tasks
from boundary_audit.taxonomy import BASELINE
from boundary_audit.transports import make_transport
from boundary_audit.transports.interface import Transport

MARKER = "boundary-audit-specimens"
"""File in the repository's .git that says we built it (and may rebuild it)."""
IDENTITY = {
    "GIT_AUTHOR_NAME": "boundary-audit",
    "GIT_AUTHOR_EMAIL": "specimens@invalid",
    "GIT_COMMITTER_NAME": "boundary-audit",
    "GIT_COMMITTER_EMAIL": "specimens@invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


@dataclass(frozen=True)
class DemoOptions:
    """What `boundary-audit demo` runs."""

    output_dir: Path
    select: str = "core"
    replies: tuple[str, ...] = ("oracle",)
    sandbox: str = "auto"
    jobs: int = 4
    """Parallel runs: most of a run waits on tmux, ssh or a session, so 4 beats 2 on 2 cores."""
    timeout_s: float = 10.0
    probes: bool = True
    command: str = ""


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(repo), **IDENTITY}
    res = run(["git", "-C", str(repo), *args], env=env, timeout=60, check=True, what="git")
    return res.stdout.decode().strip()


def build_specimen_repo(dest: Path) -> str:
    """A fresh git repository of the packaged specimens at `dest`; returns its sha.

    `dest` must be absent, or a repository this function built before (it is rebuilt)."""
    if dest.exists():
        if not (dest / ".git" / MARKER).is_file():
            raise UsageError(
                f"{dest} exists and is not a specimens repository built by "
                "boundary-audit; choose another --output-dir"
            )
        shutil.rmtree(dest)
    files = iter_files("specimens")
    if not files:
        raise UsageError("no specimens are packaged with this installation")
    for rel, node in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(node.read_bytes())
    _git(dest, "init", "-q", "-b", "main")
    (dest / ".git" / MARKER).write_text("built by boundary-audit demo\n", encoding="utf-8")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "boundary-audit specimens")
    return _git(dest, "rev-parse", "HEAD")


def _row(
    f: Finding,
    report: ScanReport,
    label: str,
    measures: tuple[Measure, ...],
    facts: Fingerprint | None,
    skipped: str,
) -> Row:
    system = f.primary.path.split("/", 1)[0]
    check = AnchorCheck(
        f.primary.anchor(), "sink", f.boundary_class.value, VERIFIED, f"{f.code} `{f.sink}`"
    )
    static = StaticCheck(
        f"{report.url}@{report.commit}",
        report.commit,
        True,
        "found by the static scan of the specimens",
        (check,),
    )
    layers = record_of(f.boundary_class).layers + (
        (f"sanitizer at the interpolation point: {f.sanitizer}",) if f.sanitizer else ()
    )
    return Row(
        system=system,
        system_name=system,
        path=f.code,
        title=f"{f.name}: {f.message}",
        is_row=True,
        extra=False,
        study_contract="",
        study_anchor="",
        study_observed="",
        contract=f.contract.value,
        boundary_class=f.boundary_class.value,
        shell_parses=f.parse_layers,
        parse_layers=layers,
        observed=f.message,
        transport=label,
        preprocess=(),
        anchors=(f.primary.anchor(),),
        fix=record_of(f.boundary_class).fix,
        marked="",
        notes=(),
        facts=facts.facts if facts else (),
        measures=measures,
        static=static,
        skipped=skipped,
    )


def run_demo(
    options: DemoOptions,
    *,
    progress: Progress | None = None,
) -> tuple[ScanReport, Table8Report]:
    """Build the specimens repository, scan it, probe it: (scan report, Table-8 report)."""
    progress = progress or NoProgress()
    say = progress.note
    repo = options.output_dir / "specimens"
    sha = build_specimen_repo(repo)
    say(f"specimens repository at {repo} ({sha[:12]})")
    report = run_static(StaticOptions(target=str(repo), jobs=options.jobs))
    report = replace(report, target="specimens", target_name="specimens")
    tasks = load_tasks(options.select)
    sets = [part for s in options.replies for part in load_reply_sets(s, tasks)]
    chosen = choose_transports(
        report.findings, report.sink_text, lambda p: (repo / p).read_text("utf-8", "replace")
    )
    by_label = {t.label: t for t in chosen.values()}
    extra: list[Transport] = [t for label, t in by_label.items() if label != BASELINE]
    with make_sandbox(options.sandbox, Limits(timeout_s=options.timeout_s)) as sandbox:
        matrix = run_matrix(tasks, sets, extra, sandbox, jobs=options.jobs, progress=progress)
        described = sandbox.describe()
    prints: dict[str, Fingerprint] = {}
    if options.probes:
        with make_sandbox(options.sandbox, Limits(timeout_s=5.0)) as box:
            probe_list = [
                make_transport(BASELINE),
                *(make_transport(t.name, **t.params) for t in extra),
            ]
            prints = fingerprints(probe_list, box, load_probes(), jobs=options.jobs)
    findings = attach_evidence(report.findings, chosen, matrix.records, [s.name for s in sets])
    report = replace(report, findings=findings, command=options.command)
    skipped = {s.transport: s.reason for s in matrix.skipped}
    rows = []
    for f in report.active:
        if not f.model_controlled:
            continue
        label = next((e.transport for e in f.evidence), "")
        measures = tuple(measure(matrix.records, label, s.name) for s in sets) if label else ()
        rows.append(
            _row(
                f,
                report,
                label or "not measured",
                measures,
                prints.get(label),
                skipped.get(label, ""),
            )
        )
    table = Table8Report(
        tool_version=__version__,
        command=options.command,
        sandbox=described,
        task_select=options.select,
        task_count=len(tasks),
        core_count=sum(1 for t in tasks if t.core),
        reply_sets=tuple(options.replies),
        baseline=BASELINE,
        probes=tuple(p.id for p in load_probes()) if options.probes else (),
        rows=tuple(rows),
        baseline_facts=prints[BASELINE].facts if BASELINE in prints else (),
        notes=tuple(f"{k}: {v}" for k, v in sorted(skipped.items())),
        title="Table 8 of the specimens: every boundary class, found by the scan and measured",
    )
    return report, table
