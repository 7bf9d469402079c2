"""Start-up: a command imports what it runs and nothing else (what, not how fast).

Each case starts a fresh `python -m boundary_audit ...` (through runpy, as `-m` does) and
reads the modules it imported from `sys.modules` at exit: `--version` stops at the version
line (no typer, none of our units below the CLI); `--help` lists every command from
`commands.COMMANDS` without importing one; a static scan imports the scanner but not the
dynamic machinery (sandbox backends, transports, tasks, adapters, the probe pipeline),
bashlex, Docker, gitpython, the other report formats or the other commands. The summaries
the root help shows for unloaded commands are the real commands' own (byte-identical help
once every command is loaded).
Timings are `benchmarks/bench_startup.py`'s business.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer import main as typer_main
from typer.models import DefaultPlaceholder

from boundary_audit import __version__, cli
from boundary_audit.commands import COMMANDS, LazyGroup, load
from tests.support.gitrepos import make_repo

HEAVY_THIRD_PARTY = ("bashlex", "tree_sitter", "docker", "git", "pydantic", "matplotlib", "openai")


RUN_CLI = (
    "import atexit, os, runpy, sys\n"
    "def dump():\n"
    "    with open(os.environ['BA_TEST_MODULES'], 'w') as out:\n"
    "        out.write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(dump)\n"
    "sys.argv[0] = 'boundary-audit'\n"
    "runpy.run_module('boundary_audit', run_name='__main__', alter_sys=True)\n"
)
"""`python -m boundary_audit ARGS` that writes `sys.modules` at exit to $BA_TEST_MODULES."""


def _imports(
    *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the CLI in a fresh interpreter; its result and every module it imported."""
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "modules"
        done = subprocess.run(
            [sys.executable, "-c", RUN_CLI, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "100", "BA_TEST_MODULES": str(listing), **(env or {})},
            check=False,
        )
        modules = set(listing.read_text().split("\n"))
    return done, modules


def _ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "boundary_audit" or m.startswith("boundary_audit.")}


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_version_imports_only_the_cli_and_its_exit_codes() -> None:
    done, modules = _imports("--version")
    assert (done.returncode, done.stdout) == (0, f"boundary-audit {__version__}\n")
    assert _ours(modules) == {"boundary_audit", "boundary_audit.cli", "boundary_audit.errors"}
    assert _top(modules).isdisjoint({"typer", "rich", *HEAVY_THIRD_PARTY})


def test_help_lists_every_command_without_importing_one() -> None:
    done, modules = _imports("--help")
    assert done.returncode == 0
    for entry in COMMANDS:
        assert f" {entry.name} " in done.stdout
    assert _ours(modules) == {
        "boundary_audit",
        "boundary_audit.cli",
        "boundary_audit.commands",
        "boundary_audit.commands.coercion",
        "boundary_audit.errors",
        "boundary_audit.supervisor",
    }
    assert _top(modules).isdisjoint(HEAVY_THIRD_PARTY)


@pytest.fixture(scope="module")
def two_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("startup") / "repo"
    make_repo(
        repo,
        {
            "tool.py": b"import subprocess\n\n\ndef status():\n"
            b"    return subprocess.run(['git', 'status'], check=False)\n",
            "run.sh": b"#!/bin/sh\nmake -C build all\n",
        },
    )
    return repo


DYNAMIC = (
    "boundary_audit.pipelines.measure",
    "boundary_audit.pipelines.runner",
    "boundary_audit.sandbox.",
    "boundary_audit.transports",
    "boundary_audit.tasks",
    "boundary_audit.adapters",
    "boundary_audit.harness",
)


@pytest.mark.parametrize("probe", [False, True], ids=["no-probe", "probe-with-nothing-to-probe"])
def test_static_scan_imports_no_dynamic_machinery(
    two_files: Path, tmp_path: Path, probe: bool
) -> None:
    args = ["scan", str(two_files), "--format", "json"] + ([] if probe else ["--no-probe"])
    done, modules = _imports(*args, env={"BOUNDARY_AUDIT_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"findings": []' in done.stdout
    ours = _ours(modules)
    assert {"boundary_audit.commands.scan", "boundary_audit.static.engine"} <= ours
    # the sandbox package's root only: the CLI hands it the stderr announcer
    assert sorted(m for m in ours if m.startswith(DYNAMIC)) == ["boundary_audit.sandbox.interface"]
    other_commands = {f"boundary_audit.commands.{e.module}" for e in COMMANDS} - {
        "boundary_audit.commands.scan"
    }
    assert ours.isdisjoint(other_commands)
    # only the JSON renderer; gitpython only configures a fresh mirror (not a local scan's)
    renderers = {f"boundary_audit.report.scan.{m}" for m in ("json_v1", "sarif", "markdown")}
    assert ours & (renderers | {"boundary_audit.report.scan.terminal"}) == {
        "boundary_audit.report.scan.json_v1"
    }
    # nor pydantic: its options are coerced without typer's TypeAdapters (commands/coercion.py)
    assert _top(modules).isdisjoint(
        {"bashlex", "docker", "git", "matplotlib", "openai", "pydantic"}
    )


def test_root_help_summaries_are_the_commands_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lazy listing, then the same listing with every real command loaded: same bytes."""
    monkeypatch.setenv("COLUMNS", "100")
    group = typer_main.get_group(cli.build_app())
    assert isinstance(group, LazyGroup)
    ctx = group.make_context("boundary-audit", ["scan"], resilient_parsing=True)
    group.format_help(ctx, ctx.make_formatter())
    lazy = capsys.readouterr().out
    for entry in COMMANDS:
        real = group.get_command(ctx, entry.name)
        assert real is not None and real is group.commands[entry.name]
        assert (real.callback or getattr(real, "commands", None)) is not None  # not a stub
    group.format_help(ctx, ctx.make_formatter())
    assert capsys.readouterr().out == lazy
    assert lazy.count("\n") > len(COMMANDS)


def test_each_entry_loads_the_command_it_names() -> None:
    for entry in COMMANDS:
        command = load(entry)
        assert command.name == entry.name
        panel = getattr(command, "rich_help_panel", None)
        assert (panel.value if isinstance(panel, DefaultPlaceholder) else panel) == entry.panel


def test_a_typo_is_still_answered_with_the_nearest_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["scna"]) == 2
    assert "Error: No such command 'scna'. Did you mean 'scan'?" in capsys.readouterr().err
