"""Find a Python interpreter whose version a harness package accepts.

Candidates, in order: `BOUNDARY_AUDIT_HARNESS_PYTHON` (an explicit choice, which must qualify),
the interpreter running boundary-audit, `python3.X` on PATH and in /usr/bin, and every pyenv
installation (`$PYENV_ROOT`, `~/.pyenv`, `/root/.pyenv`). Each candidate is asked for its own
version and real path (`sys.executable`), so a pyenv shim resolves to the binary it runs and
the virtual environment never points at a shim. Among qualifying interpreters the spec's
preferred minor version wins, then the lowest version (the one most packages are tested on).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.errors import BoundaryAuditError, HarnessError
from boundary_audit.harness.spec import PythonRange

ENV_PYTHON = "BOUNDARY_AUDIT_HARNESS_PYTHON"
_PROBE = (
    "import sys, venv, ensurepip; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)"
)


@dataclass(frozen=True)
class Interpreter:
    """A Python that answered the probe: its version and its real executable."""

    version: tuple[int, int, int]
    executable: str

    @property
    def minor(self) -> tuple[int, int]:
        """(major, minor)."""
        return self.version[:2]

    @property
    def version_text(self) -> str:
        """`3.11.7`."""
        return ".".join(map(str, self.version))


def probe(path: str) -> Interpreter | None:
    """Ask `path` for its version and real path; None if it is not a usable Python with venv."""
    try:
        res = _subprocess.run([path, "-I", "-c", _PROBE], timeout=20, what="python probe")
    except BoundaryAuditError:
        return None
    lines = res.stdout.decode("utf-8", "replace").split()
    if res.returncode != 0 or len(lines) != 2:
        return None
    try:
        major, minor, micro = (int(p) for p in lines[0].split("."))
    except ValueError:
        return None
    return Interpreter((major, minor, micro), os.path.realpath(lines[1]))


def _pyenv_roots() -> list[Path]:
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv"), "/root/.pyenv"]
    return [Path(r) for r in dict.fromkeys(r for r in roots if r)]


def candidates(wanted: PythonRange) -> Iterator[str]:
    """Paths worth probing, most preferred first, without duplicates."""
    seen: set[str] = set()
    minors = [m for m in range(wanted.minimum[1], 20) if wanted.accepts((3, m))]
    if wanted.prefer is not None and wanted.prefer[1] in minors:
        minors.remove(wanted.prefer[1])
        minors.insert(0, wanted.prefer[1])
    found = [getattr(sys, "_base_executable", None) or sys.executable]
    for m in minors:
        found += [shutil.which(f"python3.{m}") or "", f"/usr/bin/python3.{m}"]
        for root in _pyenv_roots():
            found += sorted(str(p) for p in root.glob(f"versions/3.{m}.*/bin/python3.{m}"))
    for path in found:
        if path and path not in seen and os.access(path, os.X_OK):
            seen.add(path)
            yield path


def find_python(wanted: PythonRange, *, system: str) -> Interpreter:
    """The interpreter to build `system`'s environment with; HarnessError if none qualifies."""
    explicit = os.environ.get(ENV_PYTHON)
    if explicit:
        found = probe(explicit)
        if found is None or not wanted.accepts(found.minor):
            got = found.version_text if found else "not a Python with venv"
            raise HarnessError(
                f"{ENV_PYTHON}={explicit} cannot build the {system} harness: "
                f"needs Python {wanted}, got {got}"
            )
        return found
    qualifying: list[Interpreter] = []
    for path in candidates(wanted):
        found = probe(path)
        if found and wanted.accepts(found.minor):
            if found.minor == wanted.prefer:
                return found
            qualifying.append(found)
    if not qualifying:
        raise HarnessError(
            f"no Python {wanted} with the venv module found for the {system} harness",
            hint=f"install one (e.g. `pyenv install 3.12`) or set {ENV_PYTHON}",
        )
    qualifying.sort(key=lambda i: (i.minor != wanted.prefer, i.version))
    return qualifying[0]
