"""The system registry is complete both ways: every entry has all its parts, every part an entry."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import boundary_audit
from boundary_audit import _data
from boundary_audit.adapters.preprocess import PREPROCESSORS
from boundary_audit.harness import SYSTEMS
from boundary_audit.harness.systems import REGISTRY, SHARED_SCRIPTS, System

PKG = Path(boundary_audit.__file__).parent
HARNESS = PKG / "harness"
PREPROCESS = PKG / "adapters" / "preprocess"
PREPROCESS_FRAMEWORK = {"__init__", "interface", "template"}
"""Not a system's: the interface, and `template` (the text a derived path puts around R)."""


def _adapter(system: System) -> dict[str, object]:
    files = dict(_data.iter_files("system_adapters", ".toml"))
    return tomllib.loads(files[system.adapter].read_text())


@pytest.mark.parametrize("system", REGISTRY, ids=lambda s: s.name)
def test_every_system_has_all_its_parts(system: System) -> None:
    spec = system.driver.spec
    assert system.name == spec.name and SYSTEMS[system.name] is system.driver
    assert _adapter(system)["id"] == system.name
    assert (HARNESS / "inside" / spec.script).is_file()
    for helper in system.helpers:
        assert (HARNESS / "inside" / helper).is_file()
    assert (HARNESS / "locks" / spec.lock).is_file()
    if spec.npm_lock is not None:
        assert (HARNESS / "locks" / spec.npm_lock / "package-lock.json").is_file()
    assert (HARNESS / "explanations" / system.explanations).is_file()
    steps = {
        step if isinstance(step, str) else step["name"]
        for path in _adapter(system)["paths"]  # type: ignore[attr-defined]
        for step in path.get("preprocess", [])
    }
    assert steps <= set(PREPROCESSORS)
    modules = {PREPROCESSORS[s].__module__.rsplit(".", 1)[1] for s in steps}
    assert modules == ({system.preprocess} if system.preprocess else set())


def _owned(pick) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(name for s in REGISTRY for name in pick(s))


def test_every_part_belongs_to_exactly_one_system() -> None:
    adapters = sorted(name for name, _ in _data.iter_files("system_adapters", ".toml"))
    assert _owned(lambda s: [s.adapter]) == adapters
    scripts = sorted(p.name for p in (HARNESS / "inside").glob("*.py"))
    owned = _owned(lambda s: [s.driver.spec.script, *s.helpers])
    assert sorted([*owned, *SHARED_SCRIPTS]) == scripts
    locks = sorted(p.name for p in (HARNESS / "locks").iterdir())
    assert _owned(lambda s: [s.driver.spec.lock, *filter(None, [s.driver.spec.npm_lock])]) == locks
    explanations = sorted(p.name for p in (HARNESS / "explanations").glob("*.toml"))
    assert _owned(lambda s: [s.explanations]) == explanations
    modules = sorted(p.stem for p in PREPROCESS.glob("*.py") if p.stem not in PREPROCESS_FRAMEWORK)
    assert _owned(lambda s: [*filter(None, [s.preprocess]), *s.preprocess_helpers]) == modules
