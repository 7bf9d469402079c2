"""`boundary-audit observe -- HARNESS...` end to end, the harness talking HTTP to the mock model.

- Every fixture harness (tests/fixtures/observe/, Python and Node, one per boundary class),
  observed through the CLI with the mock as its model (chat completions with a `bash` tool in
  Python, the Responses API in Node, fenced blocks for py_script and node_tmux): the exact hop
  chain of each canary (the same hops as with the plain reply sources, the first one `model`:
  the harness asked the model over HTTP), the derived class, parses, transport and contract,
  and the turns of the conversation.
- The damage run through the real harness equals, task by task, the matching transport's
  (`raw`, `nested`, `script-bash`, `argv-split`) on the same tasks and replies.
- The in-sandbox relay to the model holds nothing the harness lacks: non-dumpable, under the
  default filter too.
- Bad input is one line and exit 2; a harness that never asks its model, or never runs the
  canary, is exit 6.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from boundary_audit.observe import Recorder, observe
from boundary_audit.observe.canary import Canary
from boundary_audit.observe.replies import MockReplies
from boundary_audit.pipelines.matrix import measure, run_matrix
from boundary_audit.sandbox import Limits
from boundary_audit.sandbox.bwrap import BwrapSandbox
from boundary_audit.tasks import load_reply_set, load_tasks
from boundary_audit.transports import make_transport
from tests.test_observe_harnesses import CASES, Case, marks, matches

FIX = Path(__file__).resolve().parent / "fixtures" / "observe"
FENCED = {"py_script.py", "node_tmux.js"}
"""The fixtures that read their command out of a ```bash block (the raw contract)."""

pytestmark = pytest.mark.bwrap


def harness(name: str) -> list[str]:
    return ["node" if name.endswith(".js") else sys.executable, str(FIX / name)]


def readable(tmp_path: Path, name: str, text: str) -> Path:
    """A script in `tmp_path` that the sandbox's own uid can read."""
    for d in (tmp_path, *tmp_path.parents[:3]):
        d.chmod(d.stat().st_mode | 0o755)
    script = tmp_path / name
    script.write_text(text)
    script.chmod(0o644)
    return script


def run(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, Any, str]:
    out = tmp_path / "report.json"
    code = cli.main(["observe", "--format", "json", "-o", str(out), *args])
    _, err = capsys.readouterr()
    return code, json.loads(out.read_text()) if out.exists() else None, err


@pytest.mark.parametrize("case", [pytest.param(c, id=c.fixture, marks=marks(c)) for c in CASES])
def test_a_fixture_harness_asking_the_mock_over_http_is_observed_through_the_cli(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    ssh = "ssh" in case.fixture
    if ssh:
        request.getfixturevalue("ssh_service")
    args = ["--no-damage", "--no-fingerprint", "--expose", str(FIX), "--timeout", "30"]
    code, doc, err = run([*args, *(["--ssh"] if ssh else []), "--", *harness(case.fixture)],
                         tmp_path, capsys)  # fmt: skip
    assert code == 0, err
    fenced = case.fixture in FENCED
    assert (doc["source"], doc["contract"]) == ("mock", "raw" if fenced else "native")
    api = "chat" if case.fixture.startswith("py_") or fenced else "responses"
    assert [(t["request"], t["api"], t["shape"], t["reply"]) for t in doc["turns"]] == [
        (0, api, "fenced" if fenced else "tool", 0),
        (1, api, "fenced" if fenced else "tool", 1),
        (2, api, "final", None),
    ]
    assert (doc["harness"]["exit_code"], doc["harness"]["complete"]) == (0, True)
    for chain in doc["chains"]:
        assert (chain["arrived"], chain["complete"], chain["outcome"]) == (
            True, True, case.outcome)  # fmt: skip
        canary = Canary(chain["token"], chain["label"], chain["reply"])
        first = SimpleNamespace(hops=[SimpleNamespace(pid=chain["hops"][0]["pid"])])
        want = case.hops(case.fixture, canary, first)  # type: ignore[arg-type]
        want[0] = (want[0][0], want[0][1], "model", False)  # it asked its model over HTTP
        got = [(h["trace"], h["argv"], h["via"], h["parses"]) for h in chain["hops"]]
        assert len(got) == len(want), got
        for g, w in zip(got, want, strict=True):
            assert (g[0], g[2], g[3]) == (w[0], w[2], w[3]), g
            assert matches(g[1], w[1]), (g[1], w[1])
        assert chain["hops"][0]["detail"] == "HTTP to the model at 127.0.0.1:8765 (TCP)"
    path = doc["path"]
    assert (path["class"], path["shell_parses"], path["transport"]["name"]) == (
        case.cls.value, case.parses, case.transport)  # fmt: skip
    params = {
        k: tuple(v) if isinstance(v, list) else v for k, v in path["transport"]["params"].items()
    }
    assert params == case.params
    assert path["notes"] == []
    layers = path["parse_layers"]
    assert (layers[0] == "JSON decode of the tool call's arguments") is (not fenced)
    assert err.splitlines()[-1].startswith(f"observe {case.fixture}: {case.cls.value}, ")


DAMAGE = [
    ("py_bash_c.py", "raw", {"shell": "/bin/bash"}, "mock"),  # the baseline, another label
    ("node_nested.js", "nested", {}, "mock"),
    ("py_script.py", "script-bash", {}, "mock"),
    ("node_argv_split.js", "argv-split", {}, "mock"),
    ("py_nested.py", "nested", {}, "env"),  # a plain source: replies in BA_REPLIES
]
SELECT = "write-file,heredoc-write,env-pass"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fixture", "transport", "params", "source"), DAMAGE, ids=[f"{d[0]}-{d[3]}" for d in DAMAGE]
)
def test_the_damage_through_the_real_harness_equals_the_matching_transports(
    fixture: str,
    transport: str,
    params: dict[str, Any],
    source: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--no-fingerprint", "--expose", str(FIX), "--select", SELECT, "--timeout", "30"]
    args += ["--source", source]
    code, doc, err = run([*args, "--", *harness(fixture)], tmp_path, capsys)
    assert doc["source"] == source
    assert code == 0, err
    assert doc["path"]["transport"]["name"] == transport
    row = doc["table8"]["rows"][0]
    assert (row["system"], row["path"], row["class"]) == (fixture, "observed", doc["path"]["class"])
    observed = {m["reply_set"]: m for m in row["measures"]}
    tasks = load_tasks(SELECT)
    suite = load_tasks()
    sets = [load_reply_set(s, suite).restricted(tasks) for s in ("oracle", "naive")]
    reference = make_transport(transport, **params)
    with BwrapSandbox(Limits(timeout_s=30)) as sandbox:
        matrix = run_matrix(tasks, sets, [reference], sandbox)
    for s in sets:
        want = measure(matrix.records, reference.label, s.name)
        got = observed[s.name]
        assert (got["passed_raw"], got["passed_boundary"], got["damage_pp"]) == (
            want.passed_raw, want.passed_boundary, want.damage_pp)  # fmt: skip
        assert (got["broken"], got["fixed"], got["errors"]) == (
            list(want.broken), list(want.fixed), 0)  # fmt: skip
    if transport == "nested":  # the study's wrapper destroys what the other three keep
        assert observed["oracle"]["damage_pp"] < 0


RELAY_PROBE = r"""
import os
for pid in os.listdir("/proc"):
    if not pid.isdigit() or pid == "1":  # the reaper: its argv ends with ours (docs/observe.md)
        continue
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if any(w.endswith(b"netrelay.py") for w in cmd):
        status = open(f"/proc/{pid}/status").read()
        filters = [l.split()[1] for l in status.splitlines() if l.startswith("Seccomp_filters:")]
        mine = [l.split()[1] for l in open("/proc/self/status").read().splitlines()
                if l.startswith("Seccomp_filters:")]
        try:
            open(f"/proc/{pid}/mem", "rb")
            mem = "opened"
        except OSError as exc:
            mem = exc.strerror
        print("relay", *filters, *mine, mem, flush=True)
"""


def test_a_harness_that_never_asks_its_model_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = readable(tmp_path, "quiet.py", "print('no model needed')\n")
    code = cli.main(["observe", "--no-damage", "--no-fingerprint", "--expose", str(tmp_path),
                     "--", sys.executable, str(script)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == ExitCode.RUN
    assert err.strip().splitlines()[-1] == (
        "boundary-audit: error: observe: the harness made no model request (exited 0)"
    )
    assert out == ""


def test_the_relay_to_the_model_is_sealed_and_not_dumpable(tmp_path: Path) -> None:
    script = readable(tmp_path, "probe_relay.py", RELAY_PROBE)
    with Recorder(Limits(timeout_s=20)) as rec:
        rec.expose([tmp_path])
        obs = observe(rec, [sys.executable, str(script)], MockReplies())
    line = obs.result.stdout.decode().strip()
    found = re.fullmatch(r"relay (\d+) (\d+) (.+)", line)
    assert found is not None, line
    relay, harness_filters, mem = int(found.group(1)), int(found.group(2)), found.group(3)
    assert relay == harness_filters >= 2  # the outer filter and the default one, like the harness
    assert mem == "Permission denied"


def test_a_harness_that_asks_but_never_runs_the_command_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = readable(
        tmp_path,
        "talker.py",
        f"import sys\nsys.path.insert(0, {str(FIX)!r})\nfrom _replies import replies\n"
        "for r in replies():\n    pass\n",
    )
    code = cli.main(["observe", "--no-damage", "--no-fingerprint", "--expose", str(FIX),
                     "--expose", str(tmp_path), "--", sys.executable, str(script)])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == ExitCode.RUN
    assert err.strip().splitlines()[-1] == (
        "boundary-audit: error: observe: no canary ran (3 model requests, 2 replies sent; "
        "the harness exited 0)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "observe: give the harness command after `--`"),
        (["--compare", "codex", "--", "true"], "--compare 'codex': expected SYSTEM:PATH"),
        (
            ["--compare", "codex:nope", "--", "true"],
            "--compare: codex has no path 'nope' (shell-command, snapshot)",
        ),
        (
            ["--config-template", "x.toml", "--", "true"],
            "--config-template 'x.toml': expected FILE:DEST (DEST under HOME)",
        ),
        (
            ["--config-template", "/nonexistent:.x", "--", "true"],
            "--config-template '/nonexistent:.x': cannot read /nonexistent: "
            "No such file or directory",
        ),
        (["--shape", "json", "--", "true"], "--shape 'json': one of auto, tool, fenced"),
        (
            ["--", "true", "{{api_key}}"],
            "the harness's argv holds {{api_key}}: known are base_url, model, home, work",
        ),
        (
            ["--no-damage", "--no-fingerprint", "--", "/nonexistent/agent"],
            "cannot execute the harness: /nonexistent/agent: No such file or directory",
        ),
    ],  # fmt: skip
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["observe", *args])
    _, err = capsys.readouterr()
    assert code == ExitCode.USAGE
    assert err.strip().splitlines()[-1] == f"boundary-audit: error: {message}"


def test_a_config_template_with_an_unknown_placeholder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "c.toml"
    template.write_text('url = "{{base_url}}"\nkey = "{{secret}}"\n')
    code = cli.main(["observe", "--config-template", f"{template}:.c.toml", "--", "true"])
    _, err = capsys.readouterr()
    assert code == ExitCode.USAGE
    assert err.strip().endswith(
        "unknown placeholder {{secret}} (known: base_url, api_key, model, home, work)"
    )


def test_the_path_as_adapter_toml_and_the_markdown_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["observe", "--no-fingerprint", "--expose", str(FIX), "--select", "write-file-t1"]
    harness_argv = ["--", *harness("py_script.py")]
    toml_out, md_out = tmp_path / "path.toml", tmp_path / "report.md"
    assert cli.main([*base, "--no-damage", "-f", "toml", "-o", str(toml_out), *harness_argv]) == 0
    assert toml_out.read_text() == (
        "[[paths]]\n"
        'id = "observed"\n'
        'title = "observed from the harness\'s behaviour"\n'
        "extra = true\n"
        'contract = "raw"\n'
        'boundary_class = "script-file"\n'
        "shell_parses = 1\n"
        'parse_layers = ["file -> bash FILE (shell parse)"]\n'
        'observed = "R reaches file -> bash FILE (shell parse) (1 shell parse)"\n'
        'fix = "none needed for quoting; run it with the shell the model wrote for '
        '(bash, not sh)"\n'
        'transport = { name = "script-bash" }\n'
    )
    why = "transport.name=AutoGen's executor runs sh FILE, this harness bash FILE"
    assert cli.main([*base, "--compare", "autogen:docker-executor", "--explain", why,
                     "-f", "markdown", "-o", str(md_out), *harness_argv]) == 0  # fmt: skip
    _, err = capsys.readouterr()
    md = md_out.read_text()
    assert "- request 0 (chat): fenced, reply 0\n" in md
    assert "## Compared with `autogen:docker-executor`\n" in md
    assert (
        "- `transport.name`: observed `script-bash`, adapter `script-sh`: AutoGen's executor "
        "runs sh FILE, this harness bash FILE\n"
    ) in md
    assert "| py_script.py (observed path, extra row) | raw |" in md
    assert "oracle 0.0 pp (1/1 → 1/1); naive 0.0 pp (0/1 → 0/1)" in md
    assert err.splitlines()[-1] == (
        "observe py_script.py: script-file, raw script-bash, 1 shell parse; damage (pp): "
        "oracle +0.0, naive +0.0; 1 difference from autogen:docker-executor"
    )
