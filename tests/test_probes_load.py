"""Probe files: the loader's checks, and every packaged probe's canary through bash -c."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.errors import ExitCode, ProbeError
from boundary_audit.probes import (
    MISSING,
    UNEXPECTED,
    load_probes,
    parse_probe,
    read_fact,
    run_probe,
)
from boundary_audit.sandbox import make_sandbox
from boundary_audit.sandbox.interface import ExecResult
from boundary_audit.transports import make_transport

GOOD = """\
id = "toy"
title = "toy probe"
canary = "toy"
replies = ["printf 'ba-%s=%s\\\\n' toy yes"]
missing = "did not run"

[outcomes]
yes = "it ran"
"""

BASH_C = {
    "control": "inert",
    "cwd": "lost",
    "exit": "alive",
    "history": "off",
    "home": "set",
    "interactive": "no",
    "login": "no",
    "operators": "active",
    "quoting": "intact",
    "shell": "bash",
    "state": "lost",
    "stdin": "separate",
    "tab": "kept",
    "tty": "no",
}


def test_packaged_probes() -> None:
    probes = load_probes()
    assert [p.id for p in probes] == sorted(BASH_C)
    assert all(p.source_file == f"probes/{p.id}.toml" for p in probes)
    assert load_probes(["tty", "shell"])[0].id == "shell"


def test_every_probe_answers_through_bash_c() -> None:
    """Each canary is printed by a reply that really ran: bash -c gives a declared value."""
    with make_sandbox("auto") as sandbox:
        raw = make_transport("raw")
        facts = {p.id: run_probe(p, raw, sandbox) for p in load_probes()}
    assert {k: f.outcome for k, f in facts.items()} == BASH_C
    assert facts["tty"].meaning == "stdin is not a terminal"


def test_canary_is_read_at_a_line_start_only() -> None:
    (probe,) = load_probes(["tty"])
    typed = b"$ printf 'ba-%s=%s\\n' tty yes\r\n"  # the command as a tmux pane shows it
    assert read_fact(probe, [ExecResult(0, typed, b"")]).outcome == MISSING
    fact = read_fact(probe, [ExecResult(0, typed + b"ba-tty=yes\r\n", b"")])
    assert (fact.outcome, fact.value) == ("yes", "yes")
    odd = read_fact(probe, [ExecResult(0, b"ba-tty=maybe\n", b"")])
    assert (odd.outcome, odd.value, odd.meaning) == (
        UNEXPECTED,
        "maybe",
        "a value no outcome declares",
    )
    silent = read_fact(probe, [ExecResult(1, b"", b"first\nbash: x: not found\n")])
    assert (silent.outcome, silent.detail) == (MISSING, "bash: x: not found")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace('id = "toy"', 'id = "Toy"'), "toy.toml: id: 'Toy' must equal the file name"),
        (
            GOOD.replace("[outcomes]\nyes", "[outcomes]\nmissing"),
            "toy.toml: outcomes.missing: is reserved",
        ),
        (
            GOOD.replace('[outcomes]\nyes = "it ran"', "[outcomes]"),
            "toy.toml: outcomes: must declare",
        ),
        (
            GOOD.replace('replies = ["', 'replies = ["", "'),
            "toy.toml: replies: must be a non-empty",
        ),
        (GOOD.replace('canary = "toy"', 'canary = "t y"'), "toy.toml: canary: 't y' must match"),
        (GOOD + "extra = 1\n", "toy.toml: outcomes.extra: must be string"),
        (GOOD.replace('missing = "did not run"\n', ""), "toy.toml: missing: missing"),
        ("id = 'toy'\ntitle = \x01", "toy.toml: invalid TOML"),
    ],
)
def test_bad_probe_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "toy.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProbeError) as err:
        load_probes(extra=[path])
    assert err.value.message.startswith(f"{tmp_path}/{message}")
    assert err.value.exit_code == ExitCode.INPUT


def test_a_user_probe_and_an_unknown_selection(tmp_path: Path) -> None:
    path = tmp_path / "toy.toml"
    path.write_text(GOOD, encoding="utf-8")
    (toy,) = load_probes(["toy"], [path])
    assert parse_probe(GOOD.encode(), "x/toy.toml", "toy") == toy.__class__(
        **{**toy.__dict__, "source_file": "x/toy.toml"}
    )
    with pytest.raises(ProbeError, match="unknown probe 'nope'"):
        load_probes(["nope"])
