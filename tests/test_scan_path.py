"""The boundary path a scan derives from the analysis, field by field, and against the adapters.

Each specimen's derived path (contract, class, shell parses, every route's transport with its
parameters and pre-processors, the fixed routes, where each fact comes from) equals the path
expected of its code. Two small repositories built like SWE-agent@3ea751c and AutoGen@027ecf0
(the same calls, files and names, no mirror needed) derive the paths Table 8's adapters model,
and every field where they differ carries the note that explains it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from boundary_audit.adapters import load_adapters
from boundary_audit.finding import DerivedPath, Finding, Route
from boundary_audit.pipelines.demo import build_specimen_repo
from boundary_audit.pipelines.measure import match_adapter, route_label
from boundary_audit.pipelines.scan import StaticOptions, run_static
from boundary_audit.results.scan import compare_paths
from tests.support.gitrepos import make_repo


def _route(r: Route) -> dict[str, Any]:
    out: dict[str, Any] = {"transport": r.transport.name, "params": dict(r.transport.params)}
    if r.preprocess:
        out["preprocess"] = [(s.name, dict(s.params)) for s in r.preprocess]
    if r.assumes:
        out["assumes"] = r.assumes
    return out


def fields(p: DerivedPath) -> dict[str, Any]:
    """The comparable fields of a derived path."""
    return {
        "contract": p.contract.value,
        "class": p.boundary_class.value,
        "shell_parses": p.shell_parses,
        "routes": [_route(r) for r in p.routes],
        "fixed": [_route(r) for r in p.fixed],
    }


def sources(p: DerivedPath) -> dict[str, str]:
    """field -> source of every fact (the first one per field)."""
    out: dict[str, str] = {}
    for f in p.facts:
        out.setdefault(f.field, f.source)
    return out


NESTED_TEMPLATE = ("template.interpolate", {"prefix": 'sh -c "', "suffix": '"'})
NESTED_FIXED = ("template.interpolate", {"prefix": "bash -c ", "suffix": "", "quote": "shell"})

EXPECTED: dict[str, dict[str, Any]] = {
    "python_codeblocks/agent.py": {
        "contract": "raw",
        "class": "script-file",
        "shell_parses": 1,
        "routes": [{"transport": "script-sh", "params": {"prefix": "timeout 60"}}],
        "fixed": [{"transport": "script-bash", "params": {"prefix": "timeout 60"}}],
    },
    "python_json/agent.py": {
        "contract": "raw",
        "class": "serialized",
        "shell_parses": 0,
        "routes": [{"transport": "json-naive", "params": {}}],
        "fixed": [{"transport": "json-correct", "params": {}}],
    },
    "python_nested/agent.py": {
        "contract": "native",
        "class": "nested-string",
        "shell_parses": 2,
        "routes": [
            {
                "transport": "raw",
                "params": {"shell": "sh", "flags": "-c"},
                "preprocess": [NESTED_TEMPLATE],
            }
        ],
        "fixed": [
            {
                "transport": "raw",
                "params": {"shell": "sh", "flags": "-c"},
                "preprocess": [NESTED_FIXED],
            }
        ],
    },
    "python_remote/agent.py": {
        "contract": "native",
        "class": "remote-string",
        "shell_parses": 1,
        "routes": [{"transport": "ssh", "params": {"quoting": "argv"}}],
        "fixed": [],
    },
    "python_session/agent.py": {
        "contract": "raw",
        "class": "shell-session",
        "shell_parses": 1,
        "routes": [{"transport": "session", "params": {"shell": ["/bin/bash", "--norc"]}}],
        "fixed": [{"transport": "script-bash", "params": {}}],
    },
    "python_stdin/agent.py": {
        "contract": "raw",
        "class": "shell-stdin",
        "shell_parses": 1,
        "routes": [{"transport": "stdin", "params": {"shell": "sh", "flags": "-s"}}],
        "fixed": [{"transport": "raw", "params": {}}],
    },
    "python_tmux/agent.py": {
        "contract": "raw",
        "class": "tty-keystrokes",
        "shell_parses": 1,
        "routes": [{"transport": "tmux-keys", "params": {"width": 160, "height": 40, "shell": []}}],
        "fixed": [
            {"transport": "tmux-literal", "params": {"width": 160, "height": 40, "shell": []}}
        ],
    },
    "rust_exec/src/main.rs": {
        "contract": "native",
        "class": "shell-string",
        "shell_parses": 1,
        "routes": [{"transport": "raw", "params": {"shell": "bash", "flags": "-lc"}}],
        "fixed": [],
    },
    "typescript_launcher/src/launch.ts": {
        "contract": "native",
        "class": "argv-direct",
        "shell_parses": 0,
        "routes": [{"transport": "argv-shell-quote", "params": {}}],
        "fixed": [{"transport": "raw", "params": {}}],
    },
}

SOURCES = {
    "python_codeblocks/agent.py": {
        "contract": "code",
        "file": "code",
        "wrapper": "code",
        "interpreter": "code",
    },
    "python_json/agent.py": {"contract": "code", "serializer": "code"},
    "python_nested/agent.py": {
        "contract": "code",
        "program": "code",
        "template": "code",
        "hop": "code",
        "inner": "code",
        "quote": "code",
    },
    "python_remote/agent.py": {"contract": "code", "hop": "code", "program": "default"},
    "python_session/agent.py": {
        "contract": "code",
        "program": "code",
        "tty": "code",
        "interactive": "code",
        "echo": "code",
    },
    "python_stdin/agent.py": {
        "contract": "code",
        "stdin": "code",
        "flags": "code",
        "program": "code",
    },
    "python_tmux/agent.py": {
        "contract": "code",
        "keys": "code",
        "program": "code",
        "tty": "code",
        "interactive": "code",
    },
    "rust_exec/src/main.rs": {"contract": "code", "flags": "code", "program": "code"},
    "typescript_launcher/src/launch.ts": {
        "contract": "code",
        "tokenizer": "code",
        "program": "code",
    },
}


@pytest.fixture(scope="module")
def specimens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finding]:
    repo = tmp_path_factory.mktemp("specimens") / "specimens"
    build_specimen_repo(repo)
    report = run_static(StaticOptions(target=str(repo), jobs=1))
    return {f.primary.path: f for f in report.findings if f.model_controlled}


def test_every_specimen_has_its_derived_path(specimens: dict[str, Finding]) -> None:
    assert sorted(specimens) == sorted(EXPECTED)
    for path, want in EXPECTED.items():
        derived = specimens[path].boundary_path
        assert derived is not None, path
        assert fields(derived) == want, path
        assert sources(derived) == SOURCES[path], path
        assert not derived.hinted, path


def test_facts_name_the_code_that_says_so(specimens: dict[str, Finding]) -> None:
    nested = specimens["python_nested/agent.py"].boundary_path
    assert nested is not None
    got = [(f.field, f.value, f.where) for f in nested.facts]
    assert got == [
        (
            "contract",
            "native: a decoded tool-call argument, `….tool_calls`",
            "python_nested/agent.py:25",
        ),
        ("program", "sh (the system shell, /bin/sh)", "python_nested/agent.py:19"),
        ("template", 'docker exec agent-sandbox sh -c "R"', "python_nested/agent.py:18"),
        (
            "hop",
            "docker exec agent-sandbox (argv passed on unchanged: replayed here)",
            "python_nested/agent.py:18",
        ),
        ("inner", "sh", "python_nested/agent.py:18"),
        ("quote", "double quotes around R", "python_nested/agent.py:18"),
    ]
    assert nested.fix == (
        "shell-quote R at the interpolation point (shlex.quote); "
        "let bash parse R (the model writes bash), not sh"
    )
    codeblocks = specimens["python_codeblocks/agent.py"].boundary_path
    assert codeblocks is not None
    assert codeblocks.notes == (
        "interpreter may also be python3: not a shell, not replayed by the shell tasks",
    )


def test_the_specimens_readme_lists_each_derived_and_fixed_path(
    specimens: dict[str, Finding],
) -> None:
    import re

    readme = (Path(__file__).resolve().parent.parent / "specimens" / "README.md").read_text()
    row = re.compile(r"^\| `([a-z_]+)` \| `([^`]+)` \| (?:`([^`]+)`|none needed) \|$", re.M)
    listed = {m.group(1): (m.group(2), m.group(3)) for m in row.finditer(readme)}
    derived = {}
    for path, f in specimens.items():
        p = f.boundary_path
        assert p is not None
        fixed = route_label(p.fixed[0]) if p.fixed else None
        derived[path.split("/")[0]] = (route_label(p.routes[0]), fixed)
    assert listed == derived


# -- built like the audited systems ------------------------------------------------------------

SWE_ENV = b"""import asyncio

from swerex.runtime.abstract import BashAction


class SWEEnv:
    def __init__(self, deployment) -> None:
        self.deployment = deployment

    def communicate(self, input: str, timeout: float = 25, *, check: str = "ignore") -> str:
        rex_check = "silent" if check else "ignore"
        r = asyncio.run(
            self.deployment.runtime.run_in_session(BashAction(command=input, check=rex_check))
        )
        return r.output
"""
SWE_AGENT = b"""from sweagent.environment.swe_env import SWEEnv


class StepOutput:
    action: str = ""
    thought: str = ""
    observation: str = ""


class DefaultAgent:
    def __init__(self, env: SWEEnv, model, tools) -> None:
        self._env = env
        self.model = model
        self.tools = tools

    def handle_action(self, step: StepOutput) -> StepOutput:
        if self.tools.should_block_action(step.action):
            raise RuntimeError("blocked")
        if step.action.strip() == "exit":
            return step
        run_action: str = self.tools.guard_multiline_input(step.action).strip()
        step.observation = self._env.communicate(input=run_action, timeout=30)
        return step

    def forward(self, history: list[dict[str, str]]) -> StepOutput:
        output = self.model.query(history)
        step = StepOutput()
        step.thought, step.action = self.tools.parse_actions(output)
        return self.handle_action(step)
"""

AG_COMMON = b"""PYTHON_VARIANTS = ["python", "Python", "py"]


def silence_pip(code: str, lang: str) -> str:
    return code


def lang_to_cmd(lang: str) -> str:
    if lang in PYTHON_VARIANTS:
        return "python"
    if lang.startswith("python") or lang in ["bash", "sh"]:
        return lang
    if lang in ["shell"]:
        return "sh"
    raise ValueError(f"Unsupported language: {lang}")
"""
AG_DOCKER = b"""import asyncio
from hashlib import sha256
from pathlib import Path

from .._common import lang_to_cmd, silence_pip


class DockerCommandLineCodeExecutor:
    def __init__(self, work_dir: Path, timeout: int = 60) -> None:
        self.work_dir = work_dir
        self._timeout = timeout
        self._container = None

    async def _execute_command(self, command: list[str]) -> tuple[str, int]:
        result = await asyncio.to_thread(self._container.exec_run, command)
        return result.output.decode("utf-8"), result.exit_code

    async def execute_code_blocks(self, code_blocks) -> list[str]:
        outputs = []
        for code_block in code_blocks:
            lang = code_block.language.lower()
            code = silence_pip(code_block.code, lang)
            filename = f"tmp_code_{sha256(code.encode()).hexdigest()}.{lang}"
            code_path = self.work_dir / filename
            with code_path.open("w", encoding="utf-8") as fout:
                fout.write(code)
            command = ["timeout", str(self._timeout), lang_to_cmd(lang), filename]
            output, exit_code = await self._execute_command(command)
            outputs.append(output)
            if exit_code != 0:
                break
        return outputs
"""
AG_AGENT = b"""import re

from autogen_ext.code_executors.docker._docker_code_executor import DockerCommandLineCodeExecutor


class CodeBlock:
    def __init__(self, code: str, language: str) -> None:
        self.code = code
        self.language = language


class CodeExecutorAgent:
    def __init__(self, executor: DockerCommandLineCodeExecutor) -> None:
        self._code_executor = executor

    def _extract_markdown_code_blocks(self, markdown_text: str) -> list[CodeBlock]:
        pattern = re.compile(r"```(?:\\s*([\\w\\+\\-]+))?\\n([\\s\\S]*?)```")
        return [CodeBlock(code, lang or "") for lang, code in pattern.findall(markdown_text)]

    async def on_messages(self, messages) -> list[str]:
        code_blocks = self._extract_markdown_code_blocks(messages[-1].content)
        return await self._code_executor.execute_code_blocks(code_blocks)
"""


def _only(path: Path, files: dict[str, bytes]) -> Finding:
    make_repo(path, files)
    report = run_static(StaticOptions(target=str(path), jobs=1))
    (f,) = [f for f in report.findings if f.model_controlled]
    return f


def _checks(finding: Finding, system: str, path_id: str) -> list[tuple[str, str, str, bool]]:
    (adapter,) = load_adapters([system])
    assert finding.boundary_path is not None
    checks = compare_paths(finding.boundary_path, adapter.path(path_id), adapter.name)
    return [(c.field, c.scan, c.adapter, c.same) for c in checks]


def _notes(finding: Finding, system: str, path_id: str) -> dict[str, str]:
    (adapter,) = load_adapters([system])
    assert finding.boundary_path is not None
    checks = compare_paths(finding.boundary_path, adapter.path(path_id), adapter.name)
    return {c.field: c.note for c in checks if not c.same}


def test_a_harness_built_like_swe_agent_derives_the_adapters_session(tmp_path: Path) -> None:
    f = _only(
        tmp_path / "swe",
        {"sweagent/environment/swe_env.py": SWE_ENV, "sweagent/agent/agents.py": SWE_AGENT},
    )
    assert (f.code, f.primary.path, f.primary.start_line) == (
        "BA202",
        "sweagent/environment/swe_env.py",
        13,
    )
    assert f.boundary_path is not None
    assert fields(f.boundary_path) == {
        "contract": "raw",
        "class": "shell-session",
        "shell_parses": 1,
        "routes": [
            {
                "transport": "session",
                "params": {},
                "preprocess": [("swe-rex.syntax-check", {}), ("swe-rex.bashlex-split", {})],
            }
        ],
        "fixed": [{"transport": "script-bash", "params": {}}],
    }
    same = [c for c in _checks(f, "swe-agent", "default") if c[3]]
    differ = [c for c in _checks(f, "swe-agent", "default") if not c[3]]
    assert [c[0] for c in same] == [
        "class",
        "shell parses",
        "transport",
        "transport.cols",
        "transport.echo",
        "transport.exit_pattern",
        "transport.exit_probe",
        "transport.ps1",
        "transport.rows",
        "transport.setup",
        "transport.shell",
        "transport.timeout",
    ]
    assert differ == [
        ("contract", "raw", "native", False),
        (
            "preprocess",
            "swe-rex.syntax-check, swe-rex.bashlex-split",
            "swe-agent.handle-action, swe-rex.syntax-check, swe-rex.bashlex-split",
            False,
        ),
    ]
    notes = _notes(f, "swe-agent", "default")
    assert notes["contract"].startswith(
        "scan reads: contract raw: text parsed out of the reply (an action or a code block), "
        "`step.action` (code, sweagent/agent/agents.py:"
    )
    assert notes["contract"].endswith(
        "; the adapter: The study lists the contract as raw; at 3ea751c the default "
        "configuration (config/default.yaml, parse_function function_calling) makes it native; "
        "raw applies to the thought_action (backtick) configurations."
    )
    assert notes["preprocess"] == (
        "`swe-agent.handle-action` not derived: the analysis holds no fact of it (strip; "
        "refuse blocklisted commands; an exact `exit` ends the run)"
    )


def test_a_harness_built_like_autogen_derives_the_adapters_script_range(tmp_path: Path) -> None:
    f = _only(
        tmp_path / "ag",
        {
            "autogen_ext/code_executors/_common.py": AG_COMMON,
            "autogen_ext/code_executors/docker/_docker_code_executor.py": AG_DOCKER,
            "autogen_agentchat/agents/_code_executor_agent.py": AG_AGENT,
        },
    )
    assert (f.code, f.boundary_class.value, f.primary.start_line) == ("BA302", "script-file", 15)
    assert f.boundary_path is not None
    assert fields(f.boundary_path) == {
        "contract": "raw",
        "class": "script-file",
        "shell_parses": 1,
        "routes": [
            {"transport": "script-sh", "params": {}, "assumes": "interpreter sh"},
            {"transport": "script-bash", "params": {}, "assumes": "interpreter bash"},
        ],
        "fixed": [
            {"transport": "script-bash", "params": {}, "assumes": "interpreter sh"},
            {"transport": "script-bash", "params": {}, "assumes": "interpreter bash"},
        ],
    }
    assert sources(f.boundary_path)["interpreter"] == "range"
    assert _checks(f, "autogen", "docker-executor") == [
        ("contract", "raw", "raw", True),
        ("class", "script-file", "script-file", True),
        ("shell parses", "1", "1", True),
        ("transport", "script-sh", "script-sh", True),
        ("transport.prefix", "", "timeout 60", False),
        (
            "preprocess",
            "none",
            "autogen.markdown-blocks(fence=sh,run=sh), autogen.silence-pip(lang=sh)",
            False,
        ),
    ]
    notes = _notes(f, "autogen", "docker-executor")
    assert notes["transport.prefix"] == (
        "scan reads: wrapper timeout ? (code, "
        "autogen_ext/code_executors/docker/_docker_code_executor.py:27); wrapper `timeout ?` "
        "left out: an argument is not known statically; the run's own timeout applies"
    )
    assert notes["preprocess"].startswith(
        "`autogen.markdown-blocks(fence=sh,run=sh)` not derived: the analysis holds no fact of it"
    )


def test_an_adapter_is_matched_only_at_its_pin_and_on_its_sink_anchor(tmp_path: Path) -> None:
    f = _only(
        tmp_path / "swe",
        {"sweagent/environment/swe_env.py": SWE_ENV, "sweagent/agent/agents.py": SWE_AGENT},
    )
    adapters = load_adapters(["swe-agent"])
    pin = "3ea751c087f32b16e039a2233dd6eefecef325d5"
    # the anchor is swe_env.py:197-222 at the pin: line 13 is not on it
    assert match_adapter(f, pin, adapters) is None
    from dataclasses import replace

    moved = replace(f, primary=replace(f.primary, start_line=221, end_line=221))
    found = match_adapter(moved, pin, adapters)
    assert found is not None and (found[0].id, found[1].id) == ("swe-agent", "default")
    assert match_adapter(moved, "0" * 40, adapters) is None


LANGCHAIN_LIKE = b"""import json
import os
import subprocess


class ShellSession:
    def __init__(self) -> None:
        self._proc = subprocess.Popen(["/bin/bash"], stdin=subprocess.PIPE, env={}, text=True)

    def execute(self, command: str) -> str:
        self._proc.stdin.write(command + "\\n")
        self._proc.stdin.flush()
        return self._proc.stdout.readline()


def run_tool(tool_call):
    args = json.loads(tool_call.function.arguments)
    return ShellSession().execute(args["command"])


def run_user_shell(tool_call):
    cmd = json.loads(tool_call.function.arguments)["command"]
    return subprocess.run([os.environ.get("SHELL", "/bin/bash"), "-lc", cmd])
"""


def test_a_replaced_environment_and_an_open_shell_are_facts_of_the_path(tmp_path: Path) -> None:
    make_repo(tmp_path / "lc", {"shell_tool.py": LANGCHAIN_LIKE})
    report = run_static(StaticOptions(target=str(tmp_path / "lc"), jobs=1))
    by_line = {f.primary.start_line: f for f in report.findings if f.model_controlled}
    session = by_line[11].boundary_path
    assert session is not None
    assert fields(session)["routes"] == [
        {"transport": "session-pipe", "params": {"shell": ["/bin/bash"], "env": {}}}
    ]
    assert [(f.field, f.value) for f in session.facts[1:]] == [
        ("program", "/bin/bash"),
        ("tty", "pipes (no terminal)"),
        ("interactive", "no (the script is read from a pipe)"),
        ("environment", "replaced: empty"),
    ]
    user = by_line[23].boundary_path
    assert user is not None
    # `os.environ.get("SHELL", "/bin/bash")`: the code's default first, then the range.
    assert fields(user)["routes"] == [
        {
            "transport": "raw",
            "params": {"shell": "bash", "flags": "-lc"},
            "assumes": "program bash",
        },
        {"transport": "raw", "params": {"shell": "sh", "flags": "-lc"}, "assumes": "program sh"},
    ]
    assert user.fact("program") is not None and user.fact("program").source == "range"  # type: ignore[union-attr]


def test_a_disclosure_for_a_scan_finding_describes_its_derived_path(tmp_path: Path) -> None:
    from boundary_audit.llm.disclosure import boundary_for, describe
    from boundary_audit.report.scan.json_v1 import JsonV1Format
    from tests.support import sample_findings as sample

    report = tmp_path / "scan.json"
    report.write_text(JsonV1Format().render(sample.probed_report()), encoding="utf-8")
    index = [f.code for f in sample.probed_report().findings].index("BA102")
    b = boundary_for(f"{report}#{index}")
    assert (b.transport, dict(b.params)) == ("raw", {"shell": "sh", "flags": "-c"})
    assert [(s.name, dict(s.params)) for s in b.preprocess] == [
        ("template.interpolate", {"prefix": 'sh -c "', "suffix": '"'})
    ]
    text = describe(b)
    assert '`sh -c "<your command>"`' in text and text.startswith("Your command ")


def test_a_path_that_cannot_be_derived_falls_back_to_the_hint_and_keeps_the_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from boundary_audit.static import path as static_path
    from boundary_audit.taxonomy import BoundaryClass

    def broken(*_args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(static_path._BY_CLASS, BoundaryClass.SHELL_SESSION, broken)
    f = _only(
        tmp_path / "swe",
        {"sweagent/environment/swe_env.py": SWE_ENV, "sweagent/agent/agents.py": SWE_AGENT},
    )
    assert f.boundary_path is not None and f.boundary_path.hinted
    assert f.boundary_path.notes[0] == (
        "the path could not be derived (RecursionError: maximum recursion depth exceeded)"
    )
    assert f.boundary_path.transport.name == "session-pipe"  # the hint: no pexpect in the text


TIED = b"""import { SandboxInstance } from "@blaxel/core";
import { tool } from "ai";

export const move = tool({
  description: "move a file in the sandbox",
  execute: async ({ from, to }: { from: string; to: string }) => {
    const sandbox = await SandboxInstance.get("box");
    await sandbox.process.exec({ command: `mv -f -- ${quoteArg(from)} ${quoteArg(to)}` });
  },
});
"""


def test_the_report_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    # two tool-entry origins declared at one place (`{ from, to }`): the contract fact names
    # the same one whatever order the set of origins iterates in
    import json
    import os
    import subprocess
    import sys

    make_repo(tmp_path / "repo", {"move.ts": TIED})
    reports = []
    for seed in ("0", "1", "2", "3"):
        out = tmp_path / f"report-{seed}.json"
        argv = [sys.executable, "-m", "boundary_audit", "scan", str(tmp_path / "repo"),
                "--no-probe", "--offline", "--format", "json", "-o", str(out)]  # fmt: skip
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(argv, env=env, check=True, capture_output=True)
        reports.append(json.loads(out.read_text())["findings"])
    assert all(r == reports[0] for r in reports)
    facts = reports[0][0]["boundary_path"]["facts"]
    assert facts[0] == {
        "field": "contract",
        "value": "unknown: tool-entry, `parameter `from` of tool `execute` (given to tool())`",
        "source": "code",
        "where": "move.ts:6",
    }
