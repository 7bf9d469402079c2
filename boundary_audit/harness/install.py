"""Install each harness into its own pinned virtual environment, once, safely under concurrency.

Layout: `<cache>/harness/<system>-<version>/` is a venv built with a Python the spec accepts
(`pythons.find_python`), with every package of the spec's lock installed at its exact version.
`<cache>` is `$BOUNDARY_AUDIT_CACHE_DIR` or `platformdirs.user_cache_dir("boundary-audit")`.
A stamp file written last (`.boundary-audit-stamp.json`: lock digest, interpreter, time taken)
marks a finished install; a directory without a valid stamp is a broken install and is rebuilt.
An exclusive `flock` on `<cache>/harness/.locks/<dir>.lock` serialises installers of the same
system across processes, so two concurrent `harness install` calls build it once.
`offline=True` never installs: it returns a finished install or raises HarnessError.
A spec with an npm lock (`HarnessSpec.npm_lock`, the Codex CLI) also gets `npm ci` of that
lock in `<venv>/npm`, with the machine's node/npm (never a global install).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from boundary_audit import _subprocess
from boundary_audit.errors import BoundaryAuditError, HarnessError
from boundary_audit.harness.pythons import find_python
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.progress import Say

CACHE_ENV = "BOUNDARY_AUDIT_CACHE_DIR"
STAMP = ".boundary-audit-stamp.json"
STAMP_SCHEMA = 1
LOCK_WAIT_S = 1800.0
PIP_TIMEOUT_S = 1800.0


def _quiet(_: str) -> None:
    """The default progress callback: say nothing."""


def cache_root() -> Path:
    """The tool's cache directory (created on demand by the installer, not here)."""
    override = os.environ.get(CACHE_ENV)
    return Path(override) if override else Path(platformdirs.user_cache_dir("boundary-audit"))


def venv_dir(spec: HarnessSpec) -> Path:
    """Where `spec`'s virtual environment lives."""
    return cache_root() / "harness" / spec.dirname


@dataclass(frozen=True)
class Installation:
    """A finished, stamped harness environment."""

    system: str
    path: Path
    python: Path
    """The venv's own interpreter (`<path>/bin/python`): what drivers run under."""
    python_version: str
    base_python: str
    install_s: float
    """Seconds the install took when it was built (from the stamp)."""
    fresh: bool = False
    """True when this call built it."""


def installed(spec: HarnessSpec) -> Installation | None:
    """The finished install of `spec`, or None when absent, unstamped or built from another lock."""
    path = venv_dir(spec)
    try:
        stamp = json.loads((path / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    python = path / "bin" / "python"
    expected = {"schema": STAMP_SCHEMA, "system": spec.name, "lock_sha256": spec.lock_digest()}
    if any(stamp.get(k) != v for k, v in expected.items()) or not python.exists():
        return None
    return Installation(
        spec.name, path, python, stamp["python_version"], stamp["base_python"], stamp["install_s"]
    )


def require(spec: HarnessSpec) -> Installation:
    """The finished install, or HarnessError saying how to make it."""
    found = installed(spec)
    if found is None:
        raise HarnessError(
            f"the {spec.name} harness is not installed ({venv_dir(spec)})",
            hint=f"run `boundary-audit harness install {spec.name}`",
        )
    return found


@contextmanager
def _locked(spec: HarnessSpec, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    lock_dir = cache_root() / "harness" / ".locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{spec.dirname}.lock", "a+") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise HarnessError(
                        f"another process has been installing the {spec.name} harness "
                        f"for over {wait_s:g}s"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install(
    spec: HarnessSpec, *, offline: bool = False, force: bool = False, progress: Say = _quiet
) -> Installation:
    """Make sure `spec`'s environment exists and return it (built at most once across processes)."""
    if not force and (done := installed(spec)) is not None:
        return done
    if offline:
        raise HarnessError(
            f"the {spec.name} harness is not installed and --offline forbids installing it",
            hint=f"run `boundary-audit harness install {spec.name}` while online",
        )
    with _locked(spec):
        if not force and (done := installed(spec)) is not None:
            return done  # another process finished it while we waited
        return _build(spec, progress)


def _build(spec: HarnessSpec, progress: Say) -> Installation:
    path = venv_dir(spec)
    start = time.monotonic()
    base = find_python(spec.python, system=spec.name)
    shutil.rmtree(path, ignore_errors=True)
    progress(f"{spec.name}: creating a Python {base.version_text} environment in {path}")
    try:
        _step([base.executable, "-m", "venv", str(path)], f"{spec.name}: python -m venv", 300.0)
        (path / "requirements.lock.txt").write_text(spec.lock_text(), encoding="utf-8")
        progress(f"{spec.name}: installing {', '.join(spec.packages)} (exact pins from the lock)")
        pip = [str(path / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
        _step(
            [*pip, "--no-input", "-q", "-r", str(path / "requirements.lock.txt")],
            f"{spec.name}: pip install",
            PIP_TIMEOUT_S,
        )
        check = "; ".join(f"import {m}" for m in spec.imports)
        _step(
            [str(path / "bin" / "python"), "-I", "-c", check], f"{spec.name}: import check", 120.0
        )
        if spec.npm_lock is not None:
            _npm_install(spec, path, progress)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    took = round(time.monotonic() - start, 1)
    stamp = {
        "schema": STAMP_SCHEMA,
        "system": spec.name,
        "version": spec.version,
        "lock_sha256": spec.lock_digest(),
        "python_version": base.version_text,
        "base_python": base.executable,
        "install_s": took,
    }
    tmp = path / f"{STAMP}.tmp"
    tmp.write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path / STAMP)
    progress(f"{spec.name}: installed in {took:g}s")
    done = installed(spec)
    assert done is not None
    return Installation(**{**done.__dict__, "fresh": True})


def npm_dir(path: Path) -> Path:
    """Where a spec's npm lock is installed inside its environment."""
    return path / "npm"


def _npm_install(spec: HarnessSpec, path: Path, progress: Say) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise HarnessError(
            f"the {spec.name} harness needs npm, which is not installed",
            hint="install node and npm (Debian: apt-get install npm)",
        )
    target = npm_dir(path)
    target.mkdir()
    for name, text in spec.npm_files().items():
        (target / name).write_text(text, encoding="utf-8")
    progress(f"{spec.name}: npm ci of the pinned lock in {target}")
    argv = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
    _step(argv, f"{spec.name}: npm ci", PIP_TIMEOUT_S, cwd=target)


def _step(argv: list[str], what: str, timeout: float, cwd: Path | None = None) -> None:
    try:
        _subprocess.run(argv, timeout=timeout, check=True, error=HarnessError, what=what, cwd=cwd)
    except HarnessError:
        raise
    except BoundaryAuditError as exc:
        raise HarnessError(f"{what}: {exc.message}") from exc
