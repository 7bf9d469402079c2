"""`scan` going dynamic: class + static evidence -> transport, measured evidence, confidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.finding import Evidence, Finding, FindingBuilder, Location
from boundary_audit.pipelines.measure import ProbeSettings, confirms, probe_findings, transport_spec
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


@pytest.mark.parametrize(
    ("cls", "text", "sanitizer", "spec"),
    [
        (
            BoundaryClass.SHELL_STRING,
            "subprocess.run(cmd, shell=True)",
            None,
            ("raw", {"shell": "sh", "flags": "-c"}),
        ),
        (
            BoundaryClass.SHELL_STRING,
            'Command::new("bash").arg("-lc").arg(cmd)',
            None,
            ("raw", {"shell": "bash", "flags": "-lc"}),
        ),
        (BoundaryClass.NESTED_STRING, "f'ssh h \"{cmd}\"'", None, ("nested", {})),
        (
            BoundaryClass.NESTED_STRING,
            "f'bash -c {shlex.quote(cmd)}'",
            "shlex.quote",
            ("nested-escaped", {}),
        ),
        (BoundaryClass.SHELL_SESSION, "self.shell.sendline(cmd)", None, ("session", {})),
        (BoundaryClass.SHELL_SESSION, "proc.stdin.write(cmd)", None, ("session-pipe", {})),
        (
            BoundaryClass.TTY_KEYSTROKES,
            "pane.send_keys(cmd, literal=True)",
            None,
            ("tmux-literal", {}),
        ),
        (
            BoundaryClass.TTY_KEYSTROKES,
            '["tmux", "send-keys", "-t", s, cmd]',
            None,
            ("tmux-keys", {}),
        ),
        (
            BoundaryClass.ARGV_DIRECT,
            "spawn(shellQuote.parse(line))",
            None,
            ("argv-shell-quote", {}),
        ),
        (BoundaryClass.ARGV_DIRECT, "Popen(cmd.split())", None, ("argv-split", {})),
        (BoundaryClass.ARGV_DIRECT, "Popen(shlex.split(cmd))", None, ("argv-shlex", {})),
        (BoundaryClass.SCRIPT_FILE, '["sh", path]', None, ("script-sh", {})),
        (BoundaryClass.REMOTE_STRING, "container.exec_run(cmd)", None, ("docker", {})),
        (BoundaryClass.REMOTE_STRING, '["ssh", host, cmd]', None, ("ssh", {})),
        (BoundaryClass.SERIALIZED, "'{\"cmd\": \"' + cmd + '\"}'", None, ("json-naive", {})),
        (BoundaryClass.SERIALIZED, "json.dumps({'cmd': cmd})", "json.dumps", ("json-correct", {})),
    ],
)
def test_class_and_sink_text_pick_the_transport(
    cls: BoundaryClass, text: str, sanitizer: str | None, spec: object
) -> None:
    assert transport_spec(finding(cls, sanitizer), text) == spec


def test_the_tokenizer_may_come_from_elsewhere_in_the_file() -> None:
    argv = finding(BoundaryClass.ARGV_DIRECT)
    assert transport_spec(argv, "spawn(argv[0], argv.slice(1))") == ("argv-shlex", {})
    assert transport_spec(
        argv, "spawn(argv[0], argv.slice(1))", 'import { parse } from "shell-quote";'
    ) == ("argv-shell-quote", {})


def test_confirmation_rule() -> None:
    hurt = Evidence("nested", "oracle", 56, 56, 20)
    same = Evidence("raw", "oracle", 56, 56, 56)
    assert confirms(finding(BoundaryClass.NESTED_STRING), hurt)
    assert not confirms(finding(BoundaryClass.NESTED_STRING), same)
    assert confirms(finding(BoundaryClass.SCRIPT_FILE), same)
    assert not confirms(finding(BoundaryClass.SCRIPT_FILE), hurt)
    assert confirms(finding(BoundaryClass.NESTED_STRING, "shlex.quote"), same)


def test_model_controlled_findings_carry_measured_damage(tmp_path: Path) -> None:
    path = tmp_path / "harness"
    make_repo(path, {"agent/tools.py": HARNESS})
    report = run_static(StaticOptions(target=str(path), jobs=1))
    by_class = {f.boundary_class: f for f in report.findings}
    assert set(by_class) == {BoundaryClass.SHELL_STRING, BoundaryClass.NESTED_STRING}
    settings = ProbeSettings(select="write-file", replies=("oracle", "naive"))
    out = probe_findings(report.findings, report.sink_text, settings)
    measured = {f.boundary_class: f for f in out.findings}
    assert out.transports == ("raw", "nested")  # bash -c R *is* the baseline: measured once
    nested = measured[BoundaryClass.NESTED_STRING]
    assert [(e.transport, e.reply_set, e.tasks, e.passed_raw) for e in nested.evidence] == [
        ("nested", "oracle", 4, 4),
        ("nested", "naive", 4, 1),
    ]
    assert nested.evidence[0].passed_boundary < 4 and nested.confidence is Confidence.HIGH
    shell = measured[BoundaryClass.SHELL_STRING]
    assert [(e.transport, e.passed_raw, e.passed_boundary) for e in shell.evidence] == [
        ("raw", 4, 4),
        ("raw", 1, 1),
    ]
    assert shell.confidence is Confidence.HIGH
