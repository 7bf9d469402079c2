"""The taxonomy's class names where a boundary is; its route says how R is parsed there.

Two conventions of DESIGN.md's taxonomy (and ../shared/LABELLING.md) report a class whose
mechanics are another class's: every container and sandbox exec API is `remote-string`, also
when what it is given is an argv no shell parses (replayed as that argv), and R spliced only
inside the quotes of a command string is `nested-string` (replayed through that string's own
shell, R inside the quotes). The class, the check code and the message follow the taxonomy;
the route, the severity and the shell-parse count follow the mechanics.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from boundary_audit.finding import Finding
from boundary_audit.pipelines.measure import route_label
from boundary_audit.static.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "checks"


def _findings(tmp_path: Path, fixture: str) -> dict[int, Finding]:
    shutil.copy(FIXTURES / fixture, tmp_path / Path(fixture).name)
    result = scan_path(tmp_path, options=ScanOptions(jobs=1))
    return {f.primary.start_line: f for f in result.findings}


def _row(f: Finding) -> tuple[str, str, int, list[str], str]:
    assert f.boundary_path is not None
    routes = [route_label(r) for r in f.boundary_path.routes]
    return (f.code, f.boundary_class.value, f.parse_layers, routes, f.message)


@pytest.mark.parametrize(
    ("fixture", "line", "want"),
    [
        pytest.param(
            "BA102/positive_quoted.py",
            12,
            (
                "BA102",
                "nested-string",
                1,
                ["raw(shell=sh)[template.interpolate(prefix=rg --color never ',suffix=' .)]"],
                "Model output reaches the quotes of a command string that a shell parses via "
                "`subprocess.run` (inside single quotes of the command); 1 shell parse before "
                "execve.",
            ),
            id="python-single-quotes",
        ),
        pytest.param(
            "BA102/positive_quoted.py",
            15,
            (
                "BA101",
                "shell-string",
                1,
                ["raw(shell=sh)"],
                "Model output reaches a shell that parses it as a command string via "
                "`subprocess.run`; 1 shell parse before execve.",
            ),
            id="python-unquoted-hole-decides",
        ),
        pytest.param(
            "BA102/positive_quoted.rs",
            13,
            (
                "BA102",
                "nested-string",
                1,
                ["ssh"],
                "Model output reaches the quotes of a command string a remote shell parses via "
                "`context.executor(…).exec_cmd` (inside single quotes of the command); 1 shell "
                "parse before execve.",
            ),
            id="rust-remote-single-quotes",
        ),
        pytest.param(
            "BA102/positive_quoted.ts",
            14,
            (
                "BA102",
                "nested-string",
                1,
                ["raw(shell=sh)"],
                "Model output reaches the quotes of a command string that a shell parses via "
                "`exec` (inside double quotes of the command); 1 shell parse before execve.",
            ),
            id="typescript-double-quotes",
        ),
        pytest.param(
            "BA401/positive_docker_string.py",
            10,
            (
                "BA401",
                "remote-string",
                0,
                ["argv-shlex"],
                "A value named like a command reaches a container or sandbox exec API (no shell "
                "there) via `container.exec_run` (docker SDK splits the string with shlex); 0 "
                "shell parses before execve.",
            ),
            id="docker-sdk-string",
        ),
    ],
)
def test_class_follows_the_taxonomy_and_the_route_the_mechanics(
    tmp_path: Path, fixture: str, line: int, want: tuple[str, str, int, list[str], str]
) -> None:
    assert _row(_findings(tmp_path, fixture)[line]) == want


def test_the_mechanics_keep_the_severity_of_the_parse(tmp_path: Path) -> None:
    """A docker SDK string is spawned without a shell: its severity is argv-direct's, not the
    remote shell's, although its class is remote-string."""
    docker = _findings(tmp_path, "BA401/positive_container_argv.py")[14]
    other = tmp_path / "other"
    other.mkdir()
    remote = _findings(other, "BA102/positive_quoted.rs")[20]
    assert (docker.boundary_class.value, remote.boundary_class.value) == (
        "remote-string",
        "remote-string",
    )
    assert (docker.severity.value, remote.severity.value) == ("low", "medium")
