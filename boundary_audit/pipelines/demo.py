"""The embedded default: the packaged specimens as a repository, scanned, probed, tabulated.

`build_specimen_repo` writes the specimen harnesses (one per boundary class, see
specimens/README.md) into a git repository with a fixed identity and date, so its commit sha
is the same on every machine. `run_demo` scans it (`run_static`), measures every
model-controlled finding's derived path and its fixed path with the task selection
(`pipelines.measure.probe_findings`, the same step as `scan`), fingerprints each path with the
probes, and lays the result out as a Table-8 report whose rows are the findings: the row's
damage is its path's first route, the range over its routes and the verified fix are notes.
Runs that could not be carried out are left out of every damage and counted
(`Table8Report.notes`, `DemoResult.error_runs`). Offline: nothing leaves the machine.
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
from boundary_audit.pipelines.matrix import measure
from boundary_audit.pipelines.measure import ProbeOutcome, ProbeSettings, probe_findings
from boundary_audit.pipelines.scan import StaticOptions, run_static
from boundary_audit.probes import load_probes
from boundary_audit.progress import NoProgress, Progress
from boundary_audit.results.scan import ScanReport, boundary_row
from boundary_audit.results.table8 import (
    VERIFIED,
    AnchorCheck,
    Row,
    StaticCheck,
    Table8Report,
)
from boundary_audit.static.checks import record_of
from boundary_audit.taxonomy import BASELINE

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


def _row(f: Finding, report: ScanReport, outcome: ProbeOutcome, sets: tuple[str, ...]) -> Row:
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
    path = f.boundary_path
    label = next((e.transport for e in f.evidence if e.role == "path"), "")
    skipped = dict(outcome.info.not_measured) if outcome.info is not None else {}
    measures = tuple(measure(outcome.records, label, s) for s in sets) if label else ()
    notes: list[str] = []
    row = boundary_row(report, f)
    if path is not None and len(path.routes) > 1 and row.damage is not None:
        ranges = ", ".join(r.assumes for r in path.routes)
        notes.append(f"range over the routes ({ranges}): {row.damage.text()} ({sets[0]})")
    if path is not None and path.fix and row.damage is not None:
        after = row.fixed.text() if row.fixed is not None else "not measured"
        notes.append(f"fix verified ({sets[0]}): {row.damage.text()} → {after}: {path.fix}")
    if path is not None:
        notes += [f"derived path: {n}" for n in path.notes]
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
        parse_layers=path.parse_layers if path is not None else record_of(f.boundary_class).layers,
        observed=f.message,
        transport=label or "not measured",
        preprocess=tuple(s.label() for s in path.preprocess) if path is not None else (),
        anchors=(f.primary.anchor(),),
        fix=(path.fix if path is not None else "") or record_of(f.boundary_class).fix,
        marked="",
        notes=tuple(notes),
        facts=outcome.fingerprints.get(label, ()),
        measures=measures,
        static=static,
        skipped=skipped.get(label, "") if label else (path.unmeasurable if path else ""),
    )


@dataclass(frozen=True)
class DemoResult:
    """What `run_demo` made."""

    scan: ScanReport
    table: Table8Report

    @property
    def error_runs(self) -> int:
        """Runs that could not be carried out (left out of every damage)."""
        return self.scan.error_runs


def run_demo(
    options: DemoOptions,
    *,
    progress: Progress | None = None,
) -> DemoResult:
    """Build the specimens repository, scan it, probe it: the scan and the Table-8 report."""
    progress = progress or NoProgress()
    say = progress.note
    repo = options.output_dir / "specimens"
    sha = build_specimen_repo(repo)
    say(f"specimens repository at {repo} ({sha[:12]})")
    report = run_static(StaticOptions(target=str(repo), jobs=options.jobs))
    report = replace(report, target="specimens", target_name="specimens")
    settings = ProbeSettings(
        select=options.select,
        replies=options.replies,
        sandbox=options.sandbox,
        jobs=options.jobs,
        timeout_s=options.timeout_s,
        adapters=False,
        probes=options.probes,
    )
    outcome = probe_findings(report.findings, settings, commit=report.commit, progress=progress)
    report = replace(
        report,
        findings=outcome.findings,
        command=options.command,
        sandbox=outcome.sandbox,
        probe=outcome.info,
        probe_facts=outcome.fingerprints,
    )
    rows = tuple(
        _row(f, report, outcome, options.replies) for f in report.active if f.model_controlled
    )
    info = outcome.info
    notes = [f"{label}: {why}" for label, why in (info.not_measured if info else ())]
    if info is not None and info.errors:
        notes += [
            f"{e.runs} run{'' if e.runs == 1 else 's'} through {e.transport} could not be "
            f"carried out (left out of the pass rates and the damage): {e.reason}"
            for e in info.errors
        ]
    table = Table8Report(
        tool_version=__version__,
        command=options.command,
        sandbox=outcome.sandbox.split(" (", 1)[0],
        task_select=options.select,
        task_count=info.tasks if info else 0,
        core_count=info.core if info else 0,
        reply_sets=tuple(options.replies),
        baseline=BASELINE,
        probes=tuple(p.id for p in load_probes()) if options.probes else (),
        rows=rows,
        baseline_facts=outcome.fingerprints.get(BASELINE, ()),
        notes=tuple(notes),
        title="Table 8 of the specimens: every boundary class, found by the scan and measured",
    )
    return DemoResult(report, table)
