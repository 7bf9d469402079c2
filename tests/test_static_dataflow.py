"""Model-controlled tracing: within a function, across calls, across files, and what blocks it."""

from __future__ import annotations

from dataclasses import dataclass

from boundary_audit.static import ScanOptions, scan_files
from boundary_audit.taxonomy import BoundaryClass, Confidence, Contract, Severity

ONE = ScanOptions(jobs=1)


@dataclass(frozen=True)
class SourceFile:
    path: str
    data: bytes | None
    skipped: str | None = None


def scan(*files: tuple[str, str], include_constant: bool = False):  # type: ignore[no-untyped-def]
    sources = [SourceFile(p, t.encode()) for p, t in files]
    return scan_files(
        sources, commit=None, options=ScanOptions(jobs=1, include_constant=include_constant)
    ).findings


def brief(findings) -> list[tuple[str, int, str, bool, str]]:  # type: ignore[no-untyped-def]
    return [
        (f.primary.path, f.primary.start_line, f.code, f.model_controlled, f.confidence.value)
        for f in findings
    ]


def test_a_parameter_takes_the_values_of_its_callers_in_the_file() -> None:
    (f,) = scan(
        (
            "a.py",
            """import os
from openai import OpenAI

def ask(q):
    return OpenAI().chat.completions.create(model="m", messages=[q]).choices[0].message.content

def run(line):
    os.system(line)

def loop():
    reply = ask("go")
    run(reply)
    run("true")
""",
        )
    )
    assert brief([f]) == [("a.py", 8, "BA101", True, "medium")]
    assert f.contract == Contract.RAW
    assert [(r.start_line, r.annotation) for r in f.related] == [
        (5, "model output enters: ?.chat.completions.create(…)"),
        (11, "value returned by ask()"),
        (12, "passed as `line` to run()"),
    ]


def test_constant_callers_make_a_constant_command() -> None:
    src = "import os\n\ndef run(line):\n    os.system(line)\n\nrun('uptime')\nrun('date')\n"
    assert scan(("a.py", src)) == ()
    (f,) = scan(("a.py", src), include_constant=True)
    assert (f.severity, f.model_controlled) == (Severity.INFO, False)


def test_a_parameter_named_like_a_command_is_name_only_evidence() -> None:
    (f,) = scan(("a.py", "import os\n\ndef execute(cmd):\n    os.system(cmd)\n"))
    assert (f.model_controlled, f.model_evidence, f.confidence, f.contract) == (
        False,
        "name",
        Confidence.LOW,
        Contract.UNKNOWN,
    )
    assert [r.annotation for r in f.related] == ["named like a command: parameter `cmd`"]
    assert f.message.startswith("A value named like a command reaches a shell")


def test_a_parameter_of_unknown_origin_is_reported_as_not_model_controlled() -> None:
    (f,) = scan(("a.py", "import os\n\ndef configure(setting):\n    os.system(setting)\n"))
    assert (f.model_controlled, f.confidence, f.severity) == (False, Confidence.LOW, Severity.LOW)


def test_the_latest_dominating_definition_wins() -> None:
    src = """import json, os

def f(call, flag):
    cmd = json.loads(call.function.arguments)["command"]
    cmd = "ls -l"
    os.system(cmd)
    other = "pwd"
    if flag:
        other = json.loads(call.function.arguments)["command"]
    os.system(other)
"""
    assert brief(scan(("a.py", src))) == [("a.py", 10, "BA101", True, "medium")]


def test_self_attributes_join_the_assignments_in_the_class() -> None:
    src = """import subprocess

class Shell:
    def start(self):
        self.proc = subprocess.Popen(["bash"], stdin=subprocess.PIPE, text=True)

    def send(self, step):
        self.proc.stdin.write(step.action + "\\n")
"""
    (f,) = scan(("s.py", src))
    assert (f.code, f.boundary_class, f.contract) == (
        "BA202",
        BoundaryClass.SHELL_SESSION,
        Contract.RAW,
    )


def test_a_caller_in_another_file_that_imports_the_function() -> None:
    runner = "import os\n\ndef run_shell(line):\n    os.system(line)\n"
    agent = """import json
from tools.runner import run_shell

def on_tool_call(call):
    run_shell(json.loads(call.function.arguments)["command"])
"""
    other = "def run_shell(x):\n    return x\n\nrun_shell('unrelated')\n"
    (f,) = scan(("tools/runner.py", runner), ("agent.py", agent), ("zz/other.py", other))
    assert brief([f]) == [("tools/runner.py", 4, "BA101", True, "medium")]
    assert [(r.path, r.start_line) for r in f.related] == [("agent.py", 5), ("agent.py", 5)]


def test_a_method_called_from_another_file() -> None:
    env = """import asyncio

class Env:
    def communicate(self, input):
        return asyncio.run(self.runtime.run_in_session(Action(command=input)))
"""
    agent = """class Agent:
    def handle(self, step):
        return self.env.communicate(input=step.action.strip())
"""
    (f,) = scan(("env.py", env), ("agent.py", agent))
    assert (f.code, f.primary.start_line, f.model_controlled, f.contract) == (
        "BA202",
        5,
        True,
        Contract.RAW,
    )


def test_a_return_value_imported_from_another_file() -> None:
    llm = """import anthropic

def next_command(history):
    msg = anthropic.Anthropic().messages.create(model="m", messages=history, max_tokens=99)
    return msg.content[0].text
"""
    main = (
        "import subprocess\nfrom llm import next_command\n\n"
        "subprocess.run(next_command([]), shell=True)\n"
    )
    (f,) = scan(("llm.py", llm), ("main.py", main))
    assert brief([f]) == [("main.py", 4, "BA101", True, "medium")]
    assert ("llm.py", 4) in [(r.path, r.start_line) for r in f.related]


def test_a_javascript_caller_in_another_module() -> None:
    lib = (
        "import { exec } from 'child_process';\n"
        "export function runIt(commandLine) { exec(commandLine); }\n"
    )
    app = (
        "import { runIt } from './lib';\nexport function onCall(toolCall) {\n"
        "  runIt(JSON.parse(toolCall.function.arguments).command);\n}\n"
    )
    (f,) = scan(("src/lib.ts", lib), ("src/app.ts", app))
    assert brief([f]) == [("src/lib.ts", 2, "BA101", True, "medium")]


def test_sanitizer_at_the_interpolation_point_is_recorded() -> None:
    src = """import json, shlex, subprocess

def f(call):
    cmd = json.loads(call.function.arguments)["command"]
    subprocess.run("bash -c " + shlex.quote(cmd), shell=True)
    subprocess.run("cat " + shlex.quote(cmd), shell=True)
"""
    (f,) = scan(("a.py", src))
    assert (f.primary.start_line, f.code, f.sanitizer, f.parse_layers) == (
        5,
        "BA101",
        "shlex.quote",
        1,
    )


def test_a_serializer_before_a_process_is_an_informational_serialized_boundary() -> None:
    src = """import json, subprocess

def f(call):
    cmd = json.loads(call.function.arguments)["command"]
    server = subprocess.Popen(["node", "server.js"], stdin=subprocess.PIPE, text=True)
    server.stdin.write(json.dumps({"command": cmd}))
"""
    (f,) = scan(("a.py", src))
    assert (f.code, f.boundary_class, f.sanitizer, f.severity) == (
        "BA501",
        BoundaryClass.SERIALIZED,
        "json.dumps",
        Severity.INFO,
    )


def test_nested_wrapping_reports_two_parse_layers_and_the_wrapping_literal() -> None:
    src = """import json, subprocess

def f(call):
    cmd = json.loads(call.function.arguments)["command"]
    line = f'ssh build "{cmd}"'
    subprocess.run(line, shell=True)
"""
    (f,) = scan(("a.py", src))
    assert (f.code, f.parse_layers, f.severity) == ("BA102", 2, Severity.HIGH)
    assert [(r.start_line, r.annotation) for r in f.related] == [
        (4, "model output enters: call.function.arguments"),
        (5, "wrapped for a second parser: ssh"),
    ]


def test_shell_function_parameters_trace_to_callers() -> None:
    src = 'run() {\n  bash -c "$1"\n}\nreply=$(claude -p "$*")\nrun "$reply"\nrun "ls"\n'
    (f,) = scan(("r.sh", src))
    assert brief([f]) == [("r.sh", 2, "BA101", True, "medium")]


def test_a_cycle_cut_while_tracing_one_sink_does_not_poison_the_next() -> None:
    src = """SPECIALS = {"ENTER": "Enter"}

class Terminal:
    def send_keys(self, text):
        if text.upper() in SPECIALS:
            self.pane.send_keys(SPECIALS[text.upper()])
            return
        self.pane.send_keys(text, literal=True)

class Agent:
    def act(self, parsed):
        self.terminal.send_keys(parsed.keystrokes)
"""
    found = scan(("t.py", src))
    assert [(f.primary.start_line, f.code, f.model_controlled, f.contract) for f in found] == [
        (8, "BA203", True, Contract.RAW)
    ]
    (constant, traced) = scan(("t.py", src), include_constant=True)
    assert (constant.primary.start_line, constant.severity) == (6, Severity.INFO)
    assert "model output enters: parsed.keystrokes" in [r.annotation for r in traced.related]
