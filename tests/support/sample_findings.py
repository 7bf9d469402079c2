"""A hand-built, shared set of findings and the report around them, for renderer tests.

Covers what renderers must handle: several boundary classes and languages, related locations
(a code flow), a sanitizer, measured evidence, every suppression kind, two findings with the
same fingerprint key (occurrence numbering), hostile text (pipes, backticks, markup, non-ASCII)
and skipped inputs. Nothing here comes from the scanner: renderers are tested in isolation.
"""

from __future__ import annotations

from boundary_audit.finding import (
    Evidence,
    Finding,
    FindingBuilder,
    Location,
    Skipped,
    Suppression,
)
from boundary_audit.results.scan import CheckInfo, ScanReport
from boundary_audit.taxonomy import BoundaryClass, Confidence, Contract, Severity

SHA = "3ea751c0d9d2a1b4c5e6f708192a3b4c5d6e7f80"
URL = "https://github.com/example/agent-harness.git"
VERSION = "9.9.9"


def loc(
    path: str, start: int, end: int | None = None, col: int = 4, end_col: int = 40, note: str = ""
) -> Location:
    """A location at SHA."""
    return Location(path, start, end or start, col, end_col, 0, 0, SHA, note)


def build(
    code: str,
    name: str,
    klass: BoundaryClass,
    primary: Location,
    related: tuple[Location, ...] = (),
    **fields: object,
) -> Finding:
    """A finding through the real builder, as a check would make it."""
    language = str(fields.pop("language", "python"))
    b = FindingBuilder(code, name, language).set(boundary_class=klass, **fields).primary(primary)
    for r in related:
        b.related(r)
    return b.build()


CHECKS = (
    CheckInfo(
        "BA101",
        "shell-string-sink",
        "Model text reaches a shell as one -c string.",
        "https://boundary-audit.invalid/checks/BA101",
        "stable",
        ("shell-string",),
    ),
    CheckInfo(
        "BA102",
        "nested-shell-string",
        "Model text is quoted into a command a shell parses twice.",
        "https://boundary-audit.invalid/checks/BA102",
        "stable",
        ("nested-string",),
        help="Model text is quoted into a command a shell parses "
        "twice.\n\n## What it does\nFinds `f'ssh h \"{cmd}\"'` and friends.",
    ),
    CheckInfo(
        "BA201",
        "shell-session-write",
        "Model text is written into a persistent shell.",
        "https://boundary-audit.invalid/checks/BA201",
        "preview",
        ("shell-session",),
    ),
    CheckInfo(
        "BA202",
        "tmux-keystrokes",
        "Model text is typed into a terminal.",
        "https://boundary-audit.invalid/checks/BA202",
        "stable",
        ("tty-keystrokes",),
    ),
    CheckInfo(
        "BA301",
        "argv-split-spawn",
        "Model text is tokenized and spawned without a shell.",
        "https://boundary-audit.invalid/checks/BA301",
        "stable",
        ("argv-direct",),
        enabled=False,
    ),
    CheckInfo(
        "BA501",
        "hand-built-json",
        "Model text is concatenated into JSON.",
        "https://boundary-audit.invalid/checks/BA501",
        "stable",
        ("serialized",),
    ),
)


def findings() -> list[Finding]:
    """The shared findings, deliberately out of order."""
    enter = loc("agent/loop.py", 40, col=8, end_col=52, note="model reply enters here")
    return [
        build(
            "BA202",
            "tmux-keystrokes",
            BoundaryClass.TTY_KEYSTROKES,
            loc("term/tmux.ts", 88, 90, note="sink: tmux send-keys"),
            (loc("term/tmux.ts", 61, note="keystrokes parsed from the reply"),),
            language="typescript",
            message="Reply typed into tmux with send-keys (not -l).",
            sink="tmux send-keys",
            severity=Severity.HIGH,
            confidence=Confidence.MEDIUM,
            contract=Contract.RAW,
            model_controlled=True,
        ),
        build(
            "BA101",
            "shell-string-sink",
            BoundaryClass.SHELL_STRING,
            loc("agent/run.py", 120, note="sink: subprocess.run"),
            (enter,),
            message="`cmd` reaches subprocess.run(..., shell=True).",
            sink="subprocess.run",
            severity=Severity.MEDIUM,
            confidence=Confidence.HIGH,
            contract=Contract.NATIVE,
            model_controlled=True,
            evidence=(Evidence("raw", "oracle", 56, 56, 56),),
        ),
        build(
            "BA102",
            "nested-shell-string",
            BoundaryClass.NESTED_STRING,
            loc("agent/remote.py", 17, 19, note="sink: subprocess.run"),
            (enter, loc("agent/remote.py", 12, note='wrapped in ssh host "..."')),
            message="Reply | wrapped as f'ssh h \"{cmd}\"' and parsed twice <b>bold</b>.",
            sink="subprocess.run",
            severity=Severity.HIGH,
            confidence=Confidence.MEDIUM,
            contract=Contract.RAW,
            model_controlled=True,
            evidence=(Evidence("nested", "oracle", 56, 56, 21),),
        ),
        build(
            "BA101",
            "shell-string-sink",
            BoundaryClass.SHELL_STRING,
            loc("agent/run.py", 150),
            message="`cmd` reaches subprocess.run(..., shell=True).",
            sink="subprocess.run",
            severity=Severity.MEDIUM,
            confidence=Confidence.MEDIUM,
            model_controlled=True,
            suppressed=Suppression("baseline", "in baseline .boundary-audit-baseline.json"),
        ),
        build(
            "BA201",
            "shell-session-write",
            BoundaryClass.SHELL_SESSION,
            loc("tools/sessión.py", 33, col=0, end_col=0),
            (),
            sanitizer=None,
            message="Reply written to a long-lived bash's stdin.",
            sink="proc.stdin.write",
            severity=Severity.MEDIUM,
            confidence=Confidence.LOW,
            model_controlled=False,
            suppressed=Suppression("inline", "session is test-only"),
        ),
        build(
            "BA501",
            "hand-built-json",
            BoundaryClass.SERIALIZED,
            loc("agent/api.py", 9),
            message="Reply concatenated into a JSON string.",
            sink="requests.post",
            sanitizer="json.dumps",
            severity=Severity.LOW,
            confidence=Confidence.LOW,
            parse_layers=0,
            model_controlled=True,
            suppressed=Suppression("config", "checks.BA501.ignore: agent/api.py"),
        ),
        build(
            "BA101",
            "shell-string-sink",
            BoundaryClass.SHELL_STRING,
            loc("scripts/run|it.sh", 3, col=0, end_col=14),
            language="shell",
            message="eval of a variable.",
            sink="eval",
            severity=Severity.INFO,
            confidence=Confidence.LOW,
            model_controlled=False,
        ),
    ]


SINK_TEXT = {
    ("agent/run.py", 120): "subprocess.run(cmd,\n    shell=True)",
    ("agent/run.py", 150): "subprocess.run(cmd,   shell=True)",
    ("agent/remote.py", 17): "subprocess.run(['bash', '-c', f'ssh h \"{cmd}\"'])",
    ("term/tmux.ts", 88): "spawn('tmux', ['send-keys', '-t', pane, keys | x, 'Enter'])",
    ("scripts/run|it.sh", 3): 'eval "$REPLY" `x`',
}


def report(**overrides: object) -> ScanReport:
    """The shared report (fields overridable)."""
    fs = findings()
    sink_text = {
        f.primary: SINK_TEXT[(f.primary.path, f.primary.start_line)]
        for f in fs
        if (f.primary.path, f.primary.start_line) in SINK_TEXT
    }
    fields: dict[str, object] = {
        "tool_version": VERSION,
        "target": "example/agent-harness@main",
        "target_name": "example/agent-harness",
        "url": URL,
        "commit": SHA,
        "findings": tuple(fs),
        "skipped": (
            Skipped("assets/logo.png", "binary"),
            Skipped("data/huge.json", "too large (3.1 MB > 2 MB)"),
        ),
        "files_scanned": 14,
        "languages": {"typescript": 3, "python": 9, "shell": 2},
        "checks": CHECKS,
        "sink_text": sink_text,
        "filtered": 2,
        "command": f"boundary-audit scan example/agent-harness@{SHA} --format json",
    }
    fields.update(overrides)
    return ScanReport(**fields)  # type: ignore[arg-type]
