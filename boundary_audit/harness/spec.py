"""What a real-harness driver is made of: the pinned packages, the Python it needs, its script.

A `HarnessSpec` is pure data. The installer (`install.py`) turns it into a virtual environment,
the transport (`transport.py`) runs its standalone script under that environment's Python
inside the sandbox, and the reports cite its upstream anchors. One spec per audited system lives
in `boundary_audit/harness/drivers/<system>.py`; `drivers/__init__.py` lists them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from importlib import resources

from boundary_audit.taxonomy import BoundaryClass, Contract

NPM_LOCK_FILES = ("package.json", "package-lock.json")
"""The files of an npm lock folder (`HarnessSpec.npm_lock`), installed with `npm ci`."""


@dataclass(frozen=True)
class PythonRange:
    """The interpreter versions a harness package accepts, and the one we prefer."""

    minimum: tuple[int, int]
    """Lowest acceptable (major, minor), inclusive."""
    below: tuple[int, int] | None = None
    """First unacceptable (major, minor), or None for no upper bound."""
    prefer: tuple[int, int] | None = None
    """The minor version to pick when several qualify (reproducibility)."""

    def accepts(self, version: tuple[int, int]) -> bool:
        """True when (major, minor) lies in the range."""
        return version >= self.minimum and (self.below is None or version < self.below)

    def __str__(self) -> str:
        text = f">={self.minimum[0]}.{self.minimum[1]}"
        if self.below is not None:
            text += f",<{self.below[0]}.{self.below[1]}"
        return text


@dataclass(frozen=True)
class Anchor:
    """A place in the audited system's own source that the driver reproduces or calls."""

    where: str
    """`repo-or-package path:lines`, e.g. `swe-rex 1.4.0 swerex/runtime/local.py:273-350`."""
    what: str
    """What happens there, in one line."""


@dataclass(frozen=True)
class HarnessSpec:
    """One audited system's real execution path, as a driver installs and runs it."""

    name: str
    """Registry name used on the command line: `swe-agent`, `langchain`, `autogen`."""
    title: str
    """Display name: `SWE-agent`."""
    version: str
    """Version of the pinned primary package; names the cache directory `<name>-<version>`."""
    packages: tuple[str, ...]
    """The top-level pins a user would type (`swe-rex==1.4.0`); the lock pins the rest."""
    lock: str
    """File name under `boundary_audit/harness/locks/` with every package pinned exactly."""
    python: PythonRange
    script: str
    """File name under `boundary_audit/harness/inside/` (stdlib + the harness package only)."""
    imports: tuple[str, ...]
    """Modules the driver imports; the installer checks they import before stamping."""
    boundary_class: BoundaryClass
    contract: Contract
    adapter_path: str
    """The id of the boundary path in `system_adapters/<name>.toml` this driver reproduces."""
    startup_budget_s: float
    """Seconds the driver may take to import and start the harness, beyond the command timeout."""
    anchors: tuple[Anchor, ...] = field(default=())
    npm_lock: str | None = None
    """Folder under `locks/` with the `package.json` and `package-lock.json` of npm packages the
    driver runs (installed by `npm ci` into `<venv>/npm`), or None for a pure-Python driver."""

    @property
    def dirname(self) -> str:
        """Directory of the virtual environment below the harness cache."""
        return f"{self.name}-{self.version}"

    def lock_text(self) -> str:
        """The requirements lock shipped in the package."""
        return (
            resources.files("boundary_audit.harness")
            .joinpath("locks", self.lock)
            .read_text(encoding="utf-8")
        )

    def npm_files(self) -> dict[str, str]:
        """The npm lock folder's files (name -> text); empty for a pure-Python driver."""
        if self.npm_lock is None:
            return {}
        folder = resources.files("boundary_audit.harness").joinpath("locks", self.npm_lock)
        return {name: folder.joinpath(name).read_text(encoding="utf-8") for name in NPM_LOCK_FILES}

    def lock_digest(self) -> str:
        """sha256 of the lock(s), recorded in the install stamp (a new lock means a reinstall)."""
        digest = hashlib.sha256(self.lock_text().encode("utf-8"))
        for name, text in self.npm_files().items():
            digest.update(f"\0{name}\0{text}".encode())
        return digest.hexdigest()

    def requirements(self) -> list[str]:
        """The lock's requirement lines, comments and blanks dropped."""
        lines = (ln.split("#", 1)[0].strip() for ln in self.lock_text().splitlines())
        return [ln for ln in lines if ln]
