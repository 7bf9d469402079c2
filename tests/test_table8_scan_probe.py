"""`scan` going dynamic: derived path -> transports, measured evidence, fixes, confidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.finding import Evidence, Finding, FindingBuilder, Location, Mechanism, Route
from boundary_audit.pipelines.measure import (
    PathTransport,
    ProbeSettings,
    confirms,
    plan,
    probe_findings,
    route_label,
)
from boundary_audit.pipelines.scan import StaticOptions, run_static
from boundary_audit.taxonomy import BoundaryClass, Confidence
from tests.support.gitrepos import make_repo

HARNESS = b"""import json
import subprocess


def run_tool(tool_call):
    args = json.loads(tool_call.function.arguments)
    return subprocess.run(["bash", "-c", args["command"]])


def run_remote(tool_call):
    cmd = json.loads(tool_call.function.arguments)["command"]
    return subprocess.run(["bash", "-c", f'bash -c "{cmd}"'])
"""


def finding(cls: BoundaryClass, sanitizer: str | None = None) -> Finding:
    return (
        FindingBuilder("BA999", "test", "python")
        .set(
            boundary_class=cls,
            sanitizer=sanitizer,
            model_controlled=True,
            confidence=Confidence.MEDIUM,
        )
        .primary(Location("a.py", 3, 3))
        .build()
    )


def test_confirmation_rule() -> None:
    hurt = Evidence("nested", "oracle", 56, 56, 20)
    same = Evidence("raw", "oracle", 56, 56, 56)
    unmeasured = Evidence("session", "oracle", 0, 0, 0, points=None, errors=112)
    assert confirms(finding(BoundaryClass.NESTED_STRING), hurt)
    assert not confirms(finding(BoundaryClass.NESTED_STRING), same)
    assert confirms(finding(BoundaryClass.SCRIPT_FILE), same)
    assert not confirms(finding(BoundaryClass.SCRIPT_FILE), hurt)
    assert confirms(finding(BoundaryClass.NESTED_STRING, "shlex.quote"), same)
    assert not confirms(finding(BoundaryClass.SHELL_SESSION), unmeasured)


def test_a_route_label_names_its_transport_and_its_steps() -> None:
    plain = Route(Mechanism("raw", {"shell": "bash", "flags": "-lc"}))
    assert route_label(plain) == "raw(flags=-lc)"
    stepped = Route(
        Mechanism("raw", {"shell": "sh", "flags": "-c"}),
        (Mechanism("template.interpolate", {"prefix": 'sh -c "', "suffix": '"'}),),
    )
    assert route_label(stepped) == 'raw(shell=sh)[template.interpolate(prefix=sh -c ",suffix=")]'


def test_findings_with_the_same_route_share_one_transport(tmp_path: Path) -> None:
    path = tmp_path / "harness"
    make_repo(path, {"agent/tools.py": HARNESS})
    report = run_static(StaticOptions(target=str(path), jobs=1))
    the_plan = plan(report.findings)
    assert sorted(the_plan.transports) == [
        'raw[template.interpolate(prefix=bash -c ",suffix=")]',
        "raw[template.interpolate(prefix=bash -c ,quote=shell,suffix=)]",
    ]
    nested = next(f for f in report.findings if f.boundary_class == BoundaryClass.NESTED_STRING)
    assert isinstance(
        the_plan.transports['raw[template.interpolate(prefix=bash -c ",suffix=")]'],
        PathTransport,
    )
    assert the_plan.measured[id(nested)] == [
        ("path", "", 'raw[template.interpolate(prefix=bash -c ",suffix=")]'),
        ("fix", "", "raw[template.interpolate(prefix=bash -c ,quote=shell,suffix=)]"),
    ]
    shell = next(f for f in report.findings if f.boundary_class == BoundaryClass.SHELL_STRING)
    assert the_plan.measured[id(shell)] == [("path", "", "raw")]  # bash -c R *is* the baseline
    for t in the_plan.transports.values():
        t.close()


@pytest.mark.bwrap
def test_model_controlled_findings_carry_measured_damage_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "harness"
    make_repo(path, {"agent/tools.py": HARNESS})
    report = run_static(StaticOptions(target=str(path), jobs=1))
    settings = ProbeSettings(select="write-file", replies=("oracle", "naive"), probes=False)
    out = probe_findings(report.findings, settings)
    measured = {f.boundary_class: f for f in out.findings}
    nested = measured[BoundaryClass.NESTED_STRING]
    got = [(e.role, e.reply_set, e.tasks, e.passed_raw) for e in nested.evidence]
    assert got == [("path", "oracle", 4, 4), ("fix", "oracle", 4, 4), ("path", "naive", 4, 1),
                   ("fix", "naive", 4, 1)]  # fmt: skip
    path_ev, fix_ev = nested.evidence[0], nested.evidence[1]
    assert path_ev.passed_boundary < 4 and path_ev.damage_pp < 0
    assert (fix_ev.passed_boundary, fix_ev.damage_pp) == (4, 0.0)  # the fix, verified
    assert nested.confidence is Confidence.HIGH
    shell = measured[BoundaryClass.SHELL_STRING]
    assert [(e.transport, e.passed_raw, e.passed_boundary) for e in shell.evidence] == [
        ("raw", 4, 4),
        ("raw", 1, 1),
    ]
    assert shell.confidence is Confidence.HIGH
    assert out.info is not None and out.info.error_runs == 0
