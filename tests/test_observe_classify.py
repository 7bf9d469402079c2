"""Derived paths in the adapters' model, compared with the adapters; and what an observation
says when the harness does not play along.

The harnesses here are one-liners (`python -c`), each the exact mechanism of an audited
system or of a variant: Codex's `bash -lc R`, AutoGen's Docker executor `timeout 60 sh FILE`,
LangChain's bash on pipes, the escaped nested wrapper. An observed path must equal the
adapter's path in every compared field but those where the one-liner differs on purpose (the
contract: these get raw text, the systems decode a tool call), and say so field by field.
Then: one canary cannot show persistence; a harness that ignores its replies gives no path; a
harness that outlives the run or kills its tracer gives an observation marked incomplete,
never a complete one that is wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.adapters.load import load_adapters
from boundary_audit.adapters.model import BoundaryPath
from boundary_audit.observe import EnvReplies, Recorder, compare, observe
from boundary_audit.observe.canary import arrival_canaries
from boundary_audit.observe.chain import Chain, Hop
from boundary_audit.observe.classify import Difference, ObserveError, classify, to_path
from boundary_audit.sandbox import Limits
from boundary_audit.taxonomy import BoundaryClass, Contract

FIX = Path(__file__).resolve().parent / "fixtures" / "observe"
PRELUDE = (
    "import json, os, shlex, subprocess, sys, time\nR = json.loads(os.environ['BA_REPLIES'])\n"
)

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder(Limits(timeout_s=20))
    rec.expose([FIX])
    yield rec
    rec.close()


def inline(code: str) -> list[str]:
    return [sys.executable, "-c", PRELUDE + code]


def adapter_path(system: str, path_id: str) -> BoundaryPath:
    return next(a for a in load_adapters() if a.id == system).path(path_id)


def test_a_codex_like_harness_differs_from_codex_only_in_its_contract(recorder: Recorder) -> None:
    obs = observe(recorder, inline("for r in R: subprocess.run(['bash', '-lc', r])"), EnvReplies())
    path = obs.path()
    assert (path.boundary_class, path.shell_parses, path.transport.name) == (
        BoundaryClass.SHELL_STRING,
        1,
        "raw",
    )
    assert dict(path.transport.params) == {"shell": "bash", "flags": "-lc"}
    assert path.parse_layers == ("argv -> bash -lc (shell parse)",)
    assert path.observed == "R reaches argv -> bash -lc (shell parse) (1 shell parse)"
    assert compare(path, adapter_path("codex", "shell-command")) == (
        Difference("contract", Contract.RAW, Contract.NATIVE),
    )
    assert obs.outcomes == {"r0": "intact", "r1": "intact"}


def test_autogens_docker_executor_shape_keeps_its_timeout_prefix(recorder: Recorder) -> None:
    code = (
        "for i, r in enumerate(R):\n"
        "    f = f'/tmp/tmp_code_{i}.sh'\n"
        "    open(f, 'w').write(r)\n"
        "    subprocess.run(['timeout', '60', 'sh', f])\n"
    )
    obs = observe(recorder, inline(code), EnvReplies())
    path = obs.path()
    assert (path.boundary_class, path.transport.name, dict(path.transport.params)) == (
        BoundaryClass.SCRIPT_FILE,
        "script-sh",
        {"prefix": "timeout 60"},
    )
    assert [h.argv for h in obs.chains[0].hops[1:-1]] == [("sh", "/tmp/tmp_code_0.sh")]
    assert obs.chains[0].hops[1].wrapper == ("timeout", "60")
    assert compare(path, adapter_path("autogen", "docker-executor")) == ()


def test_a_session_on_pipes_compares_with_langchains_shell_tool(recorder: Recorder) -> None:
    obs = observe(recorder, [sys.executable, str(FIX / "py_session_pipe.py")], EnvReplies())
    observed = obs.path(expect={"shell": "bash", "state": "kept", "home": "set"})
    assert compare(observed, adapter_path("langchain", "shell-tool")) == (
        Difference("contract", Contract.RAW, Contract.NATIVE),
        Difference("transport.params.shell", ("bash",), ["/bin/bash"]),
        Difference("expect.home", "set", "unset"),  # LangChain empties the environment
    )


def test_an_escaped_wrapper_parses_twice_and_loses_nothing(recorder: Recorder) -> None:
    code = "for r in R: subprocess.run(['bash', '-c', 'bash -c ' + shlex.quote(r)])"
    obs = observe(recorder, inline(code), EnvReplies())
    path = obs.path()
    assert (path.boundary_class, path.shell_parses, path.transport.name) == (
        BoundaryClass.NESTED_STRING,
        2,
        "nested-escaped",
    )
    c = obs.canaries[0]
    assert [h.argv for h in obs.chains[0].hops[1:-1]] == [
        ("bash", "-c", "bash -c " + "'" + c.reply.replace("'", "'\"'\"'") + "'"),
        ("bash", "-c", c.reply),
    ]
    assert obs.outcomes == {"r0": "intact", "r1": "intact"}


def test_one_canary_cannot_tell_a_session_from_a_one_shot(recorder: Recorder) -> None:
    harness = [sys.executable, str(FIX / "py_session_pipe.py")]
    obs = observe(recorder, harness, EnvReplies(), count=1)
    assert obs.derived is not None
    assert (obs.derived.boundary_class, obs.derived.persistent) == (BoundaryClass.SHELL_STDIN, None)
    assert obs.derived.notes == (
        "one canary only: a persistent session cannot be told from a one-shot",
    )


def test_a_harness_that_ignores_its_replies_gives_no_path(recorder: Recorder) -> None:
    obs = observe(recorder, inline("print(len(R))"), EnvReplies())
    assert obs.result.stdout == b"2\n" and obs.complete
    assert [c.arrived for c in obs.chains] == [False, False]
    assert obs.outcomes == {"r0": "missing", "r1": "missing"}
    with pytest.raises(ObserveError) as caught:
        obs.path()
    assert caught.value.message == (
        "no boundary could be derived: no canary ran: the harness never started a marker"
    )


def test_a_harness_that_outlives_the_run_is_marked_incomplete(recorder: Recorder) -> None:
    code = "for r in R: subprocess.run(['bash', '-c', r])\ntime.sleep(60)"
    obs = observe(recorder, inline(code), EnvReplies(), timeout=4)
    assert (obs.result.timed_out, obs.complete) == (True, False)
    assert [c.arrived for c in obs.chains] == [True, True]
    assert obs.derived is not None and obs.derived.boundary_class is BoundaryClass.SHELL_STRING


def test_a_harness_that_kills_its_tracer_is_marked_incomplete(recorder: Recorder) -> None:
    code = (
        "subprocess.run(['bash', '-c', R[0]])\n"
        "for p in os.listdir('/proc'):\n"
        "    if p.isdigit() and open(f'/proc/{p}/comm').read() == 'ba-strace\\n':\n"
        "        os.kill(int(p), 9)\n"
        "time.sleep(1)\n"
        "subprocess.run(['bash', '-c', R[1]])\n"
    )
    obs = observe(recorder, inline(code), EnvReplies())
    assert obs.result.exit_code == 137  # the tracer's death is the run's status
    assert not obs.complete
    assert [c.arrived for c in obs.chains] == [True, False]
    assert obs.derived is not None
    assert obs.derived.notes == ("canaries r1: no marker in the trace (never ran, or untraced)",)


def test_a_container_hop_is_inferred_from_the_clients_argv() -> None:
    (c,) = arrival_canaries(1)
    client = ("docker", "exec", "box", "sh", "-c", c.reply)
    hops = (
        Hop("local", 5, "python3", ("python3", "h.py"), "source", "", None, False),
        Hop("local", 6, "docker", client, "argv", "", None, False),
    )
    derived = classify([Chain(c, hops, arrived=False, complete=True)])
    path = to_path(derived)
    assert (path.boundary_class, path.shell_parses, path.transport.name) == (
        BoundaryClass.REMOTE_STRING,
        1,
        "docker",
    )
    assert path.parse_layers == ("argv -> docker exec box sh -c R",)
    assert derived.notes == (
        "inferred from the docker client's argv: the container's side is not traced, "
        "so its shell parse is assumed, not seen",
    )


def test_a_script_exec_d_by_its_own_path_is_read_by_its_shebang(recorder: Recorder) -> None:
    code = (
        "for i, r in enumerate(R):\n"
        "    f = f'/tmp/step{i}.sh'\n"
        "    open(f, 'w').write('#!/bin/sh -e\\n' + r + '\\n')\n"
        "    os.chmod(f, 0o755)\n"
        "    subprocess.run([f])\n"
    )
    obs = observe(recorder, inline(code), EnvReplies())
    hop = obs.chains[0].hops[1]
    assert (hop.argv, hop.via, hop.parses) == (("/tmp/step0.sh",), "file", True)
    assert hop.shell is not None and (hop.shell.shell, hop.shell.script) == ("sh", "/tmp/step0.sh")
    path = obs.path()
    assert (path.boundary_class, path.transport.name, path.parse_layers) == (
        BoundaryClass.SCRIPT_FILE,
        "script-sh",
        ("file -> sh FILE (shell parse)",),
    )
    assert obs.outcomes == {"r0": "intact", "r1": "intact"}
