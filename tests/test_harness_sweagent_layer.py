"""SWE-agent 3ea751c's action pre-processing, as reimplemented in scripts/sweagent_layer.py.

The module is stdlib-only, so it is imported here straight from the scripts folder; the cases
pin the upstream behaviour, quirks included (prefix blocklist, the `None` end name, the slice
by the match offset in `_guard_multiline_input`).
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from boundary_audit.harness.transport import inside_dir


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "sweagent_layer", inside_dir() / "sweagent_layer.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layer = _load()


@pytest.mark.parametrize(
    ("action", "blocked"),
    [
        ("vim notes.txt", True),
        ("visible=1; echo ok > v.txt", True),  # prefix `vi`
        ("makefile=x; echo $makefile", True),  # prefix `make`
        ("lessons=3", True),  # prefix `less`
        ("tail -f app.log", True),
        ("tail -n1 app.log", False),
        ("python", True),  # exact
        ("python script.py", False),
        ("  sh  ", True),  # stripped, then exact
        ("r2 -c 'px' bin", True),  # the radare2-only regex never matches `r2`
        ("radare2 -q -c 'px' bin", False),
        ("echo vim", False),
        ("", False),
    ],
)
def test_blocklist(action: str, blocked: bool) -> None:
    assert layer.is_blocked(action) is blocked


@pytest.mark.parametrize(
    ("reply", "verdict", "command"),
    [
        ("exit", "exit-command", "exit"),
        ("  exit \n", "exit-command", "exit"),
        ("exit 0", "run", "exit 0"),
        ("\n  ls -la  \n\n", "run", "ls -la"),
        ("vim x", "blocked", "vim x"),
    ],
)
def test_preprocess(reply: str, verdict: str, command: str) -> None:
    assert layer.preprocess(reply) == (verdict, command)


def test_guard_appends_the_literal_none_end_name_to_a_leading_submit_line() -> None:
    assert layer.guard_multiline_input("submit() { :; }\nNone") == "submit() { :; } << 'None'\nNone"
    assert layer.guard_multiline_input("submit\nNone\necho after") == (
        "submit << 'None'\nNone\n\necho after"
    )


def test_guard_slices_a_later_submit_block_by_its_offset_as_upstream_does() -> None:
    assert layer.guard_multiline_input("echo hi\nsubmit now\nNone") == (
        "echo hi\n\now << 'None'\nNone"
    )


def test_guard_leaves_an_already_guarded_block_and_plain_text_alone() -> None:
    guarded = "echo a\nsubmit x << 'None'\nNone"
    assert layer.guard_multiline_input(guarded) == "echo a\n\nsubmit x << 'None'\nNone"
    plain = "cat <<'EOF' > f\nsubmit\nEOF"
    assert layer.guard_multiline_input(plain) == plain
