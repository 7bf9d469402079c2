"""The fingerprint of an observed harness equals the fingerprint of the transport it is
classified as.

For each harness: observe it (two arrival canaries), take the transport the observation
derived (name and parameters, nothing from the test), run every probe a marker can carry
through the harness (fingerprint: the probes' replies with their printf replaced by the
marker, read back from the markers' records) and through that transport (probes/run.py: the
canary lines on stdout), and the two must agree probe by probe: tabs, control bytes, history
expansion, stdin sharing, `exit`, state, cwd, quoting, tty, login, interactivity, HOME.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.observe import (
    EnvReplies,
    FileReplies,
    Recorder,
    ReplySource,
    StdinReplies,
    observe,
)
from boundary_audit.observe import fingerprint as observe_fingerprint
from boundary_audit.probes.load import load_probes
from boundary_audit.probes.run import fingerprint as transport_fingerprint
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.transports import make_transport

FIX = Path(__file__).resolve().parent / "fixtures" / "observe"
LIMITS = Limits(timeout_s=5)
"""Probes whose reply eats the harness's own done marker hang it until here."""

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder(LIMITS)
    rec.expose([FIX])
    yield rec
    rec.close()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make_sandbox("bwrap", LIMITS)
    yield box
    box.close()


CASES = [
    pytest.param("py_bash_c.py", EnvReplies(), "raw", id="bash-c"),
    pytest.param("py_sh_stdin.py", FileReplies(), "stdin", id="sh-stdin"),
    pytest.param("py_pty_session.py", StdinReplies(), "session", id="pty-session"),
    pytest.param("node_tmux.js", EnvReplies(), "tmux-keys", id="tmux", marks=pytest.mark.tmux),
    pytest.param("py_argv_shlex.py", FileReplies(), "argv-shlex", id="argv-shlex"),
]


@pytest.mark.parametrize(("fixture", "source", "transport"), CASES)
def test_the_observed_fingerprint_is_the_derived_transports(
    fixture: str, source: ReplySource, transport: str, recorder: Recorder, sandbox: Sandbox
) -> None:
    harness = ["node" if fixture.endswith(".js") else sys.executable, str(FIX / fixture)]
    obs = observe(recorder, harness, source)
    assert obs.derived is not None
    derived = obs.derived.transport
    assert derived.name == transport
    probes = load_probes()
    observed, skipped, runs = observe_fingerprint(recorder, harness, source, probes)
    assert skipped == {
        "operators": "its canary line is processed further (piped on), which a marker cannot carry"
    }
    carried = [p for p in probes if p.id not in skipped]
    through = make_transport(derived.name, **derived.params)
    measured = transport_fingerprint(through, sandbox, carried)
    assert observed.as_dict() == measured.as_dict()
    assert [r.probe for r in runs] == [p.id for p in carried]
