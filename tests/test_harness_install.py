"""The harness installer: interpreter choice, the stamp, offline refusal, one build under a lock.

Real venvs are built from fake specs whose locks need no network (an empty lock; a lock naming
a wheel file that does not exist), in a private cache dir.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from boundary_audit.errors import ExitCode, HarnessError
from boundary_audit.harness import SYSTEMS
from boundary_audit.harness.install import (
    STAMP,
    Installation,
    install,
    installed,
    require,
    venv_dir,
)
from boundary_audit.harness.pythons import ENV_PYTHON, find_python, probe
from boundary_audit.harness.spec import HarnessSpec, PythonRange
from boundary_audit.taxonomy import BoundaryClass, Contract

HERE = (sys.version_info.major, sys.version_info.minor)
MISSING_WHEEL = "/nonexistent/boundary-audit-test/pkg-1.0-py3-none-any.whl"


@dataclass(frozen=True)
class FakeSpec(HarnessSpec):
    """A spec whose lock is given inline instead of shipped in the package."""

    text: str = ""

    def lock_text(self) -> str:
        return self.text


def fake(lock: str = "# nothing to install\n", name: str = "fake") -> FakeSpec:
    return FakeSpec(
        name=name, title="Fake", version="1.0", packages=("nothing",), lock="-",
        python=PythonRange(minimum=HERE, prefer=HERE), script="-", imports=("json",),
        boundary_class=BoundaryClass.SHELL_STRING, contract=Contract.RAW, adapter_path="-",
        startup_budget_s=1.0, text=lock,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BOUNDARY_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_PYTHON, raising=False)
    return tmp_path / "cache"


@dataclass(frozen=True)
class Built:
    """Three concurrent installs of one fake spec into one cache (a venv build is slow)."""

    cache: Path
    results: list[Installation]
    messages: list[str]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    cache = tmp_path_factory.mktemp("shared") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BOUNDARY_AUDIT_CACHE_DIR", str(cache))
        mp.delenv(ENV_PYTHON, raising=False)
        messages: list[str] = []
        results: list[Installation] = []

        def worker() -> None:
            results.append(install(fake(), progress=messages.append))

        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        yield Built(cache, results, messages)


@pytest.fixture
def in_built(built: Built, monkeypatch: pytest.MonkeyPatch) -> Built:
    monkeypatch.setenv("BOUNDARY_AUDIT_CACHE_DIR", str(built.cache))
    return built


def test_python_range_bounds() -> None:
    r = PythonRange(minimum=(3, 11), below=(3, 13))
    assert [r.accepts((3, m)) for m in (10, 11, 12, 13)] == [False, True, True, False]
    assert str(r) == ">=3.11,<3.13"
    assert str(PythonRange(minimum=(3, 12))) == ">=3.12"


def test_find_python_takes_the_preferred_minor_and_resolves_the_real_binary() -> None:
    found = find_python(PythonRange(minimum=(3, 10), prefer=HERE), system="fake")
    assert found.minor == HERE
    assert found == probe(found.executable)
    assert "/shims/" not in found.executable


def test_an_unqualified_explicit_python_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_PYTHON, sys.executable)
    with pytest.raises(HarnessError) as err:
        find_python(PythonRange(minimum=(3, 99)), system="fake")
    version = ".".join(map(str, sys.version_info[:3]))
    assert err.value.message == (
        f"{ENV_PYTHON}={sys.executable} cannot build the fake harness: "
        f"needs Python >=3.99, got {version}"
    )


def test_no_qualifying_python_is_an_environment_error() -> None:
    with pytest.raises(HarnessError) as err:
        find_python(PythonRange(minimum=(3, 99)), system="fake")
    assert err.value.message == "no Python >=3.99 with the venv module found for the fake harness"
    assert err.value.exit_code == ExitCode.ENVIRONMENT


def test_offline_refuses_to_install_and_creates_nothing(private_cache: Path) -> None:
    spec = SYSTEMS["langchain"].spec
    with pytest.raises(HarnessError) as err:
        install(spec, offline=True)
    assert err.value.message == (
        "the langchain harness is not installed and --offline forbids installing it"
    )
    assert err.value.hint == "run `boundary-audit harness install langchain` while online"
    assert not private_cache.exists()
    with pytest.raises(HarnessError, match=r"^the langchain harness is not installed \("):
        require(spec)


def test_concurrent_installs_build_once(in_built: Built) -> None:
    assert len(in_built.results) == 3 and sum(r.fresh for r in in_built.results) == 1
    assert sum(m.startswith("fake: creating a Python") for m in in_built.messages) == 1
    assert len({r.path for r in in_built.results}) == 1


def test_install_stamps_and_is_reused(in_built: Built) -> None:
    spec = fake()
    first = next(r for r in in_built.results if r.fresh)
    assert first.path == in_built.cache / "harness" / "fake-1.0"
    stamp = json.loads((first.path / STAMP).read_text())
    assert stamp["system"] == "fake" and stamp["lock_sha256"] == spec.lock_digest()
    assert stamp["python_version"] == first.python_version and first.python.is_file()
    again = install(spec)
    assert not again.fresh and again.path == first.path
    assert install(spec, offline=True).path == first.path  # offline is fine once installed


def test_a_changed_lock_or_a_missing_stamp_is_not_an_install(in_built: Built) -> None:
    found = installed(fake())
    assert found is not None
    assert installed(fake("# another lock\n")) is None
    stamp = found.path / STAMP
    saved = stamp.read_bytes()
    stamp.unlink()
    try:
        assert installed(fake()) is None
        with pytest.raises(HarnessError, match="forbids installing"):
            install(fake(), offline=True)
    finally:
        stamp.write_bytes(saved)


def test_a_failed_install_is_one_line_and_leaves_no_directory(private_cache: Path) -> None:
    spec = fake(f"{MISSING_WHEEL}\n", name="broken")
    with pytest.raises(HarnessError) as err:
        install(spec)
    assert err.value.message == (
        "broken: pip install failed (exit 1): ERROR: Could not install packages due to an "
        f"OSError: [Errno 2] No such file or directory: '{MISSING_WHEEL}'"
    )
    assert not venv_dir(spec).exists()
    assert installed(spec) is None


def test_every_shipped_pip_lock_pins_exact_versions_including_the_primary_package() -> None:
    for cls in SYSTEMS.values():
        if cls.spec.npm_lock is not None:  # an npm driver: its pins are a package-lock
            continue
        reqs = cls.spec.requirements()
        assert reqs and all("==" in r and " " not in r for r in reqs), cls.spec.name
        for pin in cls.spec.packages:
            name = pin.split("[")[0].split("==")[0]
            version = pin.split("==")[1]
            assert f"{name}=={version}" in reqs, (cls.spec.name, pin)
