"""A hand-built, shared set of findings and the report around them, for renderer tests.

Covers what renderers must handle: several boundary classes and languages, related locations
(a code flow), a sanitizer, measured evidence, every suppression kind, two findings with the
same fingerprint key (occurrence numbering), hostile text (pipes, backticks, markup, non-ASCII)
and skipped inputs. Nothing here comes from the scanner: renderers are tested in isolation.
"""

from __future__ import annotations

from boundary_audit.finding import (
    DerivedPath,
    Evidence,
    Finding,
    FindingBuilder,
    Location,
    Mechanism,
    PathFact,
    Route,
    Skipped,
    Suppression,
)
from boundary_audit.probes.model import ProbeFact, ProbeId
from boundary_audit.results.scan import (
    AdapterMatch,
    CheckInfo,
    FieldCheck,
    ProbeInfo,
    RunErrors,
    ScanReport,
)
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


# -- a probed report: derived paths, routes, fixes, an adapter match, error runs --------------

LONG = "python/packages/autogen-ext/src/autogen_ext/code_executors/docker/_docker_code_executor.py"


def _path(
    cls: BoundaryClass,
    contract: Contract,
    routes: tuple[Route, ...],
    fixed: tuple[Route, ...],
    fix: str,
    facts: tuple[PathFact, ...] = (),
    notes: tuple[str, ...] = (),
    parses: int = 1,
) -> DerivedPath:
    return DerivedPath(
        contract=contract,
        boundary_class=cls,
        shell_parses=parses,
        parse_layers=("JSON decode of the tool call", "the shell parses R"),
        routes=routes,
        facts=facts,
        fix=fix,
        fixed=fixed,
        notes=notes,
    )


def _ev(
    transport: str,
    reply_set: str,
    passed: int,
    role: str = "path",
    route: str = "",
    raw: int = 56,
    families: tuple[tuple[str, float], ...] = (),
    broken: tuple[str, ...] = (),
    errors: int = 0,
    error: str = "",
    tasks: int = 56,
) -> Evidence:
    measured = tasks > 0
    return Evidence(
        transport,
        reply_set,
        tasks,
        raw,
        passed,
        role=role,
        route=route,
        points=round(100.0 * (passed - raw) / tasks, 1) if measured else None,
        errors=errors,
        error=error,
        families=families,
        boundary_tasks=18 if measured else 0,
        boundary_broken=broken,
    )


NESTED_ROUTE = Route(
    Mechanism("raw", {"shell": "sh", "flags": "-c"}),
    (Mechanism("template.interpolate", {"prefix": 'sh -c "', "suffix": '"'}),),
)
NESTED_FIXED = Route(
    Mechanism("raw", {"shell": "sh", "flags": "-c"}),
    (Mechanism("template.interpolate", {"prefix": "bash -c ", "suffix": "", "quote": "shell"}),),
)
NESTED_LABEL = 'raw(shell=sh)[template.interpolate(prefix=sh -c ",suffix=")]'
FIXED_LABEL = "raw(shell=sh)[template.interpolate(prefix=bash -c ,quote=shell,suffix=)]"
SCRIPT_SH = Route(Mechanism("script-sh"), (), "interpreter sh")
SCRIPT_BASH = Route(Mechanism("script-bash"), (), "interpreter bash")
SESSION = Route(
    Mechanism("session"), (Mechanism("swe-rex.syntax-check"), Mechanism("swe-rex.bashlex-split"))
)
SESSION_LABEL = "session[swe-rex.syntax-check; swe-rex.bashlex-split]"


def probed_findings() -> list[Finding]:
    """Findings as a probed scan leaves them (derived paths and measured evidence)."""
    enter = loc("agent/loop.py", 40, col=8, end_col=52, note="model output enters: call.arguments")
    nested = build(
        "BA102",
        "nested-shell-string",
        BoundaryClass.NESTED_STRING,
        loc("agent/remote.py", 19, note="sink: subprocess.run"),
        (enter,),
        message="Model output reaches a command string that a second shell parses again via "
        "`subprocess.run` (docker exec … sh -c); inside double quotes; 2 shell parses before "
        "execve.",
        sink="subprocess.run",
        severity=Severity.HIGH,
        confidence=Confidence.HIGH,
        contract=Contract.NATIVE,
        parse_layers=2,
        model_controlled=True,
        boundary_path=_path(
            BoundaryClass.NESTED_STRING,
            Contract.NATIVE,
            (NESTED_ROUTE,),
            (NESTED_FIXED,),
            "shell-quote R at the interpolation point (shlex.quote); let bash parse R (the "
            "model writes bash), not sh",
            (
                PathFact(
                    "contract", "native: a decoded tool-call argument", "code", "agent/loop.py:40"
                ),
                PathFact("template", 'docker exec box sh -c "R"', "code", "agent/remote.py:18"),
                PathFact(
                    "hop",
                    "docker exec box (argv passed on unchanged)",
                    "code",
                    "agent/remote.py:18",
                ),
            ),
            parses=2,
        ),
        evidence=(
            _ev(
                NESTED_LABEL, "oracle", 19, families=(("write-file", -75.0), ("json-write", -100.0))
            ),
            _ev(FIXED_LABEL, "oracle", 56, role="fix"),
            _ev(NESTED_LABEL, "naive", 1, raw=8),
            _ev(FIXED_LABEL, "naive", 8, role="fix", raw=8),
        ),
    )
    script = build(
        "BA302",
        "script-file-exec",
        BoundaryClass.SCRIPT_FILE,
        loc(LONG, 296, note="sink: asyncio.to_thread"),
        (enter,),
        message="Model output reaches a file that an interpreter runs via `asyncio.to_thread`.",
        sink="asyncio.to_thread",
        severity=Severity.LOW,
        confidence=Confidence.MEDIUM,
        contract=Contract.RAW,
        model_controlled=True,
        boundary_path=_path(
            BoundaryClass.SCRIPT_FILE,
            Contract.RAW,
            (SCRIPT_SH, SCRIPT_BASH),
            (Route(Mechanism("script-bash"), (), "interpreter sh"), SCRIPT_BASH),
            "let bash parse R (the model writes bash), not sh",
            (
                PathFact(
                    "interpreter",
                    "sh, open (chosen by the model's reply)",
                    "range",
                    "_common.py:157",
                ),
            ),
        ),
        evidence=(
            _ev(
                "script-sh", "oracle", 52, route="interpreter sh", families=(("argv-pass", -25.0),)
            ),
            _ev("script-bash", "oracle", 56, route="interpreter bash"),
            _ev("script-bash", "oracle", 56, role="fix", route="interpreter sh"),
            _ev("script-bash", "oracle", 56, role="fix", route="interpreter bash"),
            _ev("autogen:docker-executor", "oracle", 52, role="adapter"),
        ),
    )
    session = build(
        "BA202",
        "shell-session-input",
        BoundaryClass.SHELL_SESSION,
        loc("sweagent/environment/swe_env.py", 221, note="sink: run_in_session"),
        (enter,),
        message="Model output reaches a persistent shell session via `run_in_session`.",
        sink="self.deployment.runtime.run_in_session",
        severity=Severity.MEDIUM,
        confidence=Confidence.MEDIUM,
        contract=Contract.RAW,
        model_controlled=True,
        boundary_path=_path(
            BoundaryClass.SHELL_SESSION,
            Contract.RAW,
            (SESSION,),
            (Route(Mechanism("script-bash")),),
            "write R to a script file and run `bash FILE`, stdin at /dev/null",
            (PathFact("tty", "pty (pexpect)", "api", "sweagent/environment/swe_env.py:221"),),
            ("the session's machinery is swe-rex BashSession's, not in the scanned code",),
        ),
        evidence=(
            _ev(
                SESSION_LABEL,
                "oracle",
                0,
                tasks=0,
                raw=0,
                errors=112,
                error=f"{SESSION_LABEL}: error: pty_session driver failed (exit 127): env: "
                "‘/tmp/clone/.venv/bin/python’: No such file or directory",
            ),
            _ev("script-bash", "oracle", 56, role="fix"),
        ),
    )
    tmux = build(
        "BA203",
        "tty-keystrokes",
        BoundaryClass.TTY_KEYSTROKES,
        loc("term/tmux.ts", 88, 90, note="sink: tmux send-keys"),
        (),
        language="typescript",
        message="Model output reaches an interactive terminal as keystrokes.",
        sink="tmux send-keys",
        severity=Severity.MEDIUM,
        confidence=Confidence.MEDIUM,
        contract=Contract.UNKNOWN,
        model_controlled=True,
        boundary_path=_path(
            BoundaryClass.TTY_KEYSTROKES,
            Contract.UNKNOWN,
            (Route(Mechanism("tmux-keys")),),
            (Route(Mechanism("tmux-literal")),),
            "send R with `send-keys -l`, Enter apart",
            (PathFact("transport", "tmux-keys", "hint"),),
            (
                "the analysis holds no fact that fixes the transport here: it was picked by the "
                "tty-keystrokes check's hint over the sink's source text",
            ),
        ),
        evidence=(
            _ev(
                "tmux-keys",
                "oracle",
                49,
                families=(("heredoc-write", -75.0),),
                broken=("long-payload-t1", "session-exit-t1", "tty-keys-t2"),
            ),
            _ev("tmux-literal", "oracle", 55, role="fix"),
        ),
    )
    launcher = build(
        "BA301",
        "argv-spawn",
        BoundaryClass.ARGV_DIRECT,
        loc("src/utils/acp-command.ts", 140),
        (),
        language="typescript",
        message="A value of unknown origin reaches a process spawned without a shell via `spawn`.",
        sink="spawn",
        severity=Severity.INFO,
        confidence=Confidence.LOW,
        model_controlled=False,
    )
    return [tmux, launcher, session, script, nested]


def probed_report(**overrides: object) -> ScanReport:
    """The shared report after a probe: error runs, a range, a fix, an adapter comparison."""
    fs = probed_findings()
    script = next(f for f in fs if f.code == "BA302")
    match = AdapterMatch(
        "autogen",
        "docker-executor",
        "autogen:docker-executor",
        (
            FieldCheck("contract", "raw", "raw"),
            FieldCheck("class", "script-file", "script-file"),
            FieldCheck("transport", "script-sh", "script-sh"),
            FieldCheck(
                "transport.prefix",
                "",
                "timeout 60",
                "scan reads: wrapper timeout ? (code); left out: an argument is not known",
            ),
        ),
    )
    info = ProbeInfo(
        select="all",
        tasks=74,
        core=56,
        reply_sets=("oracle", "naive"),
        transports=("raw", "script-bash", "script-sh", SESSION_LABEL, "tmux-keys"),
        errors=(
            RunErrors(
                SESSION_LABEL,
                112,
                "error: pty_session driver failed (exit 127): env: "
                "‘/tmp/clone/.venv/bin/python’: No such file or directory",
            ),
        ),
        not_measured=(("docker(shell=bash)", "needs a Docker engine: none is running"),),
    )
    fields: dict[str, object] = {
        "findings": tuple(fs),
        "sink_text": {},
        "filtered": 0,
        "sandbox": "bubblewrap 0.8.0 (namespaces, read-only root, no network)",
        "probe": info,
        "adapters": {script.primary: match},
        "probe_facts": {
            "raw": (ProbeFact(ProbeId("tty"), "no", "no terminal"),),
            "tmux-keys": (ProbeFact(ProbeId("tty"), "yes", "a terminal"),),
        },
        "skipped": tuple(Skipped(f"assets/{i:02d}.png", "binary") for i in range(25))
        + (Skipped("docs/config/index.md", "symlink"),),
    }
    fields.update(overrides)
    return report(**fields)
