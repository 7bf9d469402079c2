"""Black-box observation of small harnesses, one per boundary class, in Python and in Node.

Each harness (tests/fixtures/observe/) is run for real in the sandbox under strace, with two
arrival canaries from one of the three reply sources (env, file, stdin, rotated over the
cases), and must come out with:

- the exact hop chain of each canary, harness first and marker last: every hop's argv and how
  the canary's token reached it (argv, stdin, pty, socket, file, remote), and which hops are
  shells that parsed it;
- the derived class, shell-parse count, transport name and parameters, and persistence (one
  shell for both canaries);
- what the marker recorded: one lossless parse (`intact`), a tokenizer's split (`unparsed`) or
  the study's nested damage (`altered`).

Nothing here knows the harnesses' code: the expectations are what their behaviour must look
like from outside.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from boundary_audit.observe import (
    EnvReplies,
    FileReplies,
    Recorder,
    ReplySource,
    StdinReplies,
    observe,
)
from boundary_audit.observe.canary import Canary
from boundary_audit.observe.chain import Chain
from boundary_audit.sandbox import Limits
from boundary_audit.services import sshd
from boundary_audit.taxonomy import BoundaryClass

FIX = Path(__file__).resolve().parent / "fixtures" / "observe"
SOURCES: dict[str, ReplySource] = {
    "env": EnvReplies(),
    "file": FileReplies(),
    "stdin": StdinReplies(),
}
ONCE = ["a b", "c d", "42"]
"""The arrival canary's words after one lossless shell parse (canaries.toml)."""

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder(Limits(timeout_s=20))
    rec.expose([FIX])
    yield rec
    rec.close()


Word = str | re.Pattern[str]
ExpectedHop = tuple[str, list[Word], str, bool]
"""(trace, argv, via, parses)."""


def harness(name: str) -> list[str]:
    interpreter = "node" if name.endswith(".js") else sys.executable
    return [interpreter, str(FIX / name)]


def marker(c: Canary, *words: str) -> list[Word]:
    return [c.token, c.label, *words]


def root(name: str) -> ExpectedHop:
    return ("local", list(harness(name)), "source", False)


def one_shell(argv: Callable[[Canary], list[Word]], via: str) -> Callable[..., list[ExpectedHop]]:
    def hops(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
        return [
            root(name),
            ("local", argv(c), via, True),
            ("local", marker(c, *ONCE), "spawned", False),
        ]

    return hops


def tmux_hops(literal: bool) -> Callable[..., list[ExpectedHop]]:
    def hops(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
        sock = f"/tmp/ba-tmux-{chain.hops[0].pid}"
        base = ["tmux", "-S", sock, "-f", "/dev/null"]
        keys = ["-l", c.reply] if literal else [c.reply, f"; tmux -S {sock} wait -S done", "Enter"]
        server = [*base, "new-session", "-d", "-s", "ba", "bash --norc --noprofile"]
        return [
            root(name),
            ("local", [*base, "send-keys", "-t", "ba", *keys], "argv", False),
            ("local", server, "socket", False),
            ("local", ["bash", "--norc", "--noprofile"], "pty", True),
            ("local", marker(c, *ONCE), "spawned", False),
        ]

    return hops


def pty_via_script(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
    return [
        root(name),
        ("local", ["script", "-qfec", "bash --norc --noprofile -i", "/dev/null"], "stdin", False),
        ("local", ["bash", "--norc", "--noprofile", "-i"], "pty", True),
        ("local", marker(c, *ONCE), "spawned", False),
    ]


def argv_direct(*words: str) -> Callable[..., list[ExpectedHop]]:
    def hops(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
        return [root(name), ("local", marker(c, *words), "spawned", False)]

    return hops


def ssh_hops(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
    config = re.compile(r"/tmp/ba-ssh-[0-9a-f]{8}/ssh_config")
    remote = f"remote-{int(c.label[1:]) + 1}"  # one remote command per reply, in order
    return [
        root(name),
        ("local", ["ssh", "-F", config, "localhost", c.reply], "argv", False),
        (remote, ["/bin/bash", "-c", c.reply], "remote", True),
        (remote, marker(c, *ONCE), "spawned", False),
    ]


def nested_hops(name: str, c: Canary, chain: Chain) -> list[ExpectedHop]:
    return [
        root(name),
        ("local", ["bash", "-c", f'bash -c "{c.reply}"'], "argv", True),
        # the outer bash ended the double quotes at R's own: `"c d"` split, $((6*7)) its own
        ("local", ["bash", "-c", f"{c.token} {c.label} 'a b' c", "d 42"], "argv", True),
        ("local", marker(c, "a b", "c"), "spawned", False),
    ]


@dataclass(frozen=True)
class Case:
    fixture: str
    source: str
    hops: Callable[[str, Canary, Chain], list[ExpectedHop]]
    cls: BoundaryClass
    parses: int
    transport: str
    params: dict[str, Any] = field(default_factory=dict)
    persistent: bool = False
    outcome: str = "intact"


CASES = [
    Case("py_bash_c.py", "env", one_shell(lambda c: ["bash", "-c", c.reply], "argv"),
         BoundaryClass.SHELL_STRING, 1, "raw", {"shell": "bash", "flags": "-c"}),
    Case("node_bash_c.js", "file", one_shell(lambda c: ["bash", "-c", c.reply], "argv"),
         BoundaryClass.SHELL_STRING, 1, "raw", {"shell": "bash", "flags": "-c"}),
    Case("py_sh_stdin.py", "stdin", one_shell(lambda c: ["sh"], "stdin"),
         BoundaryClass.SHELL_STDIN, 1, "stdin", {"shell": "sh", "flags": ""}),
    Case("node_sh_stdin.js", "env", one_shell(lambda c: ["sh"], "stdin"),
         BoundaryClass.SHELL_STDIN, 1, "stdin", {"shell": "sh", "flags": ""}),
    Case("py_session_pipe.py", "file", one_shell(lambda c: ["bash"], "stdin"),
         BoundaryClass.SHELL_SESSION, 1, "session-pipe", {"shell": ("bash",)}, True),
    Case("node_session_pipe.js", "stdin", one_shell(lambda c: ["bash"], "stdin"),
         BoundaryClass.SHELL_SESSION, 1, "session-pipe", {"shell": ("bash",)}, True),
    Case("py_pty_session.py", "env",
         one_shell(lambda c: ["bash", "--norc", "--noprofile", "-i"], "pty"),
         BoundaryClass.SHELL_SESSION, 1, "session",
         {"shell": ("bash", "--norc", "--noprofile", "-i")}, True),
    Case("node_pty_session.js", "file", pty_via_script,
         BoundaryClass.SHELL_SESSION, 1, "session",
         {"shell": ("bash", "--norc", "--noprofile", "-i")}, True),
    Case("py_tmux.py", "stdin", tmux_hops(literal=True),
         BoundaryClass.TTY_KEYSTROKES, 1, "tmux-literal",
         {"shell": ("bash", "--norc", "--noprofile")}, True),
    Case("node_tmux.js", "env", tmux_hops(literal=False),
         BoundaryClass.TTY_KEYSTROKES, 1, "tmux-keys",
         {"shell": ("bash", "--norc", "--noprofile")}, True),
    Case("py_argv_shlex.py", "file", argv_direct("a b", "c d", "$((6*7))"),
         BoundaryClass.ARGV_DIRECT, 0, "argv-shlex", outcome="unparsed"),
    Case("node_argv_split.js", "stdin", argv_direct("'a", "b'", '"c', 'd"', "$((6*7))"),
         BoundaryClass.ARGV_DIRECT, 0, "argv-split", outcome="unparsed"),
    Case("py_script.py", "env",
         one_shell(lambda c: ["bash", re.compile(r"/tmp/tmp\w+\.sh")], "file"),
         BoundaryClass.SCRIPT_FILE, 1, "script-bash"),
    Case("node_script.js", "file",
         one_shell(lambda c: ["sh", re.compile(r"/tmp/ba-script-\w{6}/command\.sh")], "file"),
         BoundaryClass.SCRIPT_FILE, 1, "script-sh"),
    Case("py_ssh.py", "stdin", ssh_hops,
         BoundaryClass.REMOTE_STRING, 1, "ssh", {"quoting": "argv"}),
    Case("node_ssh.js", "env", ssh_hops,
         BoundaryClass.REMOTE_STRING, 1, "ssh", {"quoting": "argv"}),
    Case("py_nested.py", "file", nested_hops,
         BoundaryClass.NESTED_STRING, 2, "nested", outcome="altered"),
    Case("node_nested.js", "stdin", nested_hops,
         BoundaryClass.NESTED_STRING, 2, "nested", outcome="altered"),
]  # fmt: skip


def marks(case: Case) -> list[pytest.MarkDecorator]:
    found = []
    if "tmux" in case.fixture:
        found.append(pytest.mark.tmux)
    if "ssh" in case.fixture:
        found.append(pytest.mark.sshd)
    return found


def matches(got: list[str], want: list[Word]) -> bool:
    return len(got) == len(want) and all(
        w.fullmatch(g) is not None if isinstance(w, re.Pattern) else g == w
        for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("case", [pytest.param(c, id=c.fixture, marks=marks(c)) for c in CASES])
def test_a_harness_is_observed_and_classified_from_its_behaviour(
    case: Case, recorder: Recorder, request: pytest.FixtureRequest
) -> None:
    ssh = "ssh" in case.fixture
    if ssh:
        service: sshd.SshService = request.getfixturevalue("ssh_service")
        assert service.port > 0
    obs = observe(recorder, harness(case.fixture), SOURCES[case.source], ssh=ssh)
    assert (obs.result.exit_code, obs.result.timed_out, obs.complete) == (0, False, True), (
        obs.result
    )
    assert obs.result.stderr == b""
    for canary, chain in zip(obs.canaries, obs.chains, strict=True):
        assert (chain.arrived, chain.complete) == (True, True), [
            (h.via, h.argv[:6], h.detail) for h in chain.hops
        ]
        got = [(h.trace, list(h.argv), h.via, h.parses) for h in chain.hops]
        want = case.hops(case.fixture, canary, chain)
        assert len(got) == len(want), got
        for g, w in zip(got, want, strict=True):
            assert (g[0], g[2], g[3]) == (w[0], w[2], w[3]), g
            assert matches(g[1], w[1]), (g[1], w[1])
        assert chain.shell_parses == case.parses
    assert dict(obs.outcomes) == {"r0": case.outcome, "r1": case.outcome}
    d = obs.derived
    assert d is not None
    assert (d.boundary_class, d.shell_parses, d.transport.name) == (
        case.cls,
        case.parses,
        case.transport,
    )
    assert dict(d.transport.params) == case.params
    assert d.persistent is case.persistent
    assert d.notes == ()
    path = obs.path()
    assert (path.boundary_class, path.shell_parses, path.transport) == (
        case.cls,
        case.parses,
        d.transport,
    )
    assert path.contract.value == "raw"
