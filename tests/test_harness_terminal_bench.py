"""Terminal-Bench: the released `TmuxSession`, through the local stand-in container, in bwrap.

Each case sends one reply the way Terminus-1 sends a blocking command and asserts what
Terminal-Bench reported (its status, the visible screen it hands the model, the exact keys it
passed to `tmux send-keys`) and the exact bytes left in the work dir. The pane's prompt comes
from Debian's /etc/bash.bashrc and bubblewrap's hostname (`sandbox`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from boundary_audit.harness import DriverOutcome, make_harness_transport
from boundary_audit.harness.install import Installation
from boundary_audit.sandbox import Sandbox

pytestmark = [pytest.mark.harness, pytest.mark.bwrap, pytest.mark.tmux]
PROMPT = "root@sandbox:/tmp/work#"

Run = Callable[..., tuple[DriverOutcome, dict[str, bytes]]]


@pytest.fixture
def tb(harness_env: Callable[[str], Installation], harness_box: Sandbox) -> Run:
    harness_env("terminal-bench")

    def go(reply: str, **params: Any) -> tuple[DriverOutcome, dict[str, bytes]]:
        transport = make_harness_transport("terminal-bench", **params)
        with harness_box.workspace() as ws:
            outcome = transport.drive(reply, ws, harness_box)
            left = {
                p.relative_to(ws.work).as_posix(): p.read_bytes()
                for p in sorted(ws.work.rglob("*"))
                if p.is_file()
            }
        return outcome, left

    return go


def screen(outcome: DriverOutcome) -> list[str]:
    return outcome.observation.rstrip("\n").split("\n")


def test_the_completion_command_is_appended_and_the_screen_is_the_observation(tb: Run) -> None:
    outcome, left = tb("echo out > o.txt; echo shown\n\n", timeout=10)
    assert (outcome.status, outcome.exit_code) == ("executed", None)
    assert outcome.notes == (
        "send-keys argv: ['echo out > o.txt; echo shown', '; tmux wait -S done', 'Enter']",
    )
    # NOTE: Terminal-Bench captures the pane as soon as `tmux wait` returns; whether bash has
    # drawn its next prompt by then is a race in the harness itself (seen both ways under load).
    assert screen(outcome) in (
        [f"{PROMPT} echo out > o.txt; echo shown; tmux wait -S done", "shown", PROMPT],
        [f"{PROMPT} echo out > o.txt; echo shown; tmux wait -S done", "shown"],
    )
    assert len(outcome.observation.split("\n")) == 41  # the 160x40 pane, plus the final newline
    assert left == {"o.txt": b"out\n"}


def test_a_reply_ending_in_a_semicolon_makes_tmux_drop_every_key(tb: Run) -> None:
    outcome, left = tb("echo hi > a.txt;", timeout=2)
    assert outcome.status == "timeout"
    assert outcome.notes[0] == "TmuxSession: Command timed out after 2.0 seconds"
    assert screen(outcome) == [PROMPT] and left == {}


def test_readline_completion_eats_a_tab_inside_quotes(tb: Run) -> None:
    outcome, left = tb("printf '%s\\n' 'a\tb' > t.txt", timeout=10)
    assert outcome.status == "executed"
    assert left == {"t.txt": b"ab\n"}


def test_a_stdin_reader_swallows_the_rest_and_the_wait_times_out(tb: Run) -> None:
    outcome, left = tb('read x; echo "got:$x" > r.txt\necho two > two.txt', timeout=2)
    assert outcome.status == "timeout"
    assert screen(outcome) == [f'{PROMPT} read x; echo "got:$x" > r.txt']
    assert left == {}
