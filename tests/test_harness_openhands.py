"""OpenHands: the released `terminal` tool on tmux, in bwrap, on replies only it decides.

Each case is one `TerminalAction(command=R)`; it asserts OpenHands' verdict, the observation
text it hands the model and the exact bytes left in the work dir. Importing openhands.sdk costs
~13 s of CPU, so the cases are few and each checks several things of one run. The test
command installs every driver but this one (18 minutes); these cases run wherever it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from boundary_audit.harness import DriverOutcome, make_harness_transport
from boundary_audit.harness.install import Installation
from boundary_audit.sandbox import Sandbox

pytestmark = [pytest.mark.harness, pytest.mark.bwrap, pytest.mark.tmux, pytest.mark.slow]

Run = Callable[..., tuple[DriverOutcome, dict[str, bytes]]]


@pytest.fixture
def openhands(harness_env: Callable[[str], Installation], harness_box: Sandbox) -> Run:
    # NOTE(h10): the one driver scripts/test does not install (~18 min, 191 packages); where it
    # is installed (`boundary-audit harness install openhands`) these cases run in CI too.
    harness_env("openhands", optional=True)

    def go(reply: str, **params: Any) -> tuple[DriverOutcome, dict[str, bytes]]:
        transport = make_harness_transport("openhands", **params)
        with harness_box.workspace() as ws:
            outcome = transport.drive(reply, ws, harness_box)
            left = {
                p.relative_to(ws.work).as_posix(): p.read_bytes()
                for p in sorted(ws.work.rglob("*"))
                if p.is_file()
            }
        return outcome, left

    return go


def test_backslash_semicolon_is_doubled_and_a_typed_tab_is_eaten(openhands: Run) -> None:
    reply = "printf '%s\\n' 'a\tb' > t.txt; printf '%s\\n' x\\;y > e.txt"
    outcome, left = openhands(reply, timeout=10)
    assert (outcome.status, outcome.exit_code) == ("executed", 127)
    assert outcome.notes == ("[The command completed with exit code 127.]",)
    # The typed line is the escaped one, so OpenHands cannot strip its echo from the output.
    assert outcome.observation == (
        "printf '%s\\n' 'ab' > t.txt; printf '%s\\n' x\\\\;y > e.txt\n"
        "x\\\nbash: y: command not found"
    )
    assert left == {"t.txt": b"ab\n", "e.txt": b""}


def test_two_statements_are_refused_before_anything_is_typed(openhands: Run) -> None:
    outcome, left = openhands("echo one > 1.txt\necho two > 2.txt", timeout=5, mode="session")
    assert (outcome.status, outcome.exit_code, left) == ("multiple-commands", None, {})
    assert outcome.observation == (
        "Cannot execute multiple commands at once.\n"
        "Please run each command separately OR chain them into a single command via && or ;\n"
        "Provided commands:\n(1) echo one > 1.txt\n(2) echo two > 2.txt"
    )


def test_the_executor_refuses_a_json_list_and_a_stdin_reader_hits_the_no_change_timeout(
    openhands: Run,
) -> None:
    refused, nothing = openhands('["touch", "x.txt"]', timeout=5)
    assert (refused.status, nothing) == ("literal-argument", {})
    assert refused.observation.startswith(
        "[Tool-argument error] The `command` argument looks like a Python/JSON list literal"
    )
    waiting, left = openhands('read x; echo "got:$x" > r.txt', timeout=2)
    assert (waiting.status, waiting.exit_code, left) == ("timeout", None, {})
    assert waiting.notes[0].startswith("[The command has no new output after 2 seconds.")
