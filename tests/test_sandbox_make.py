"""`make_sandbox`: the choice enum is exhaustive, bad names and unusable backends fail cleanly,
`auto` falls back to tempdir with a notice, and the notices say what a backend cannot do."""

from __future__ import annotations

import pytest

from boundary_audit.errors import EnvironmentUnavailable, ExitCode, SandboxError, UsageError
from boundary_audit.sandbox import SandboxChoice, make_sandbox
from boundary_audit.sandbox import bwrap as bwrap_module
from boundary_audit.sandbox.bwrap import BwrapSandbox
from boundary_audit.sandbox.tempdir import WARNING


def test_every_choice_has_a_factory() -> None:
    import boundary_audit.sandbox as package

    assert set(package._FACTORIES) == set(SandboxChoice)
    assert [c.value for c in SandboxChoice] == ["auto", "bwrap", "tempdir", "docker"]


def test_unknown_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as err:
        make_sandbox("firejail")
    assert err.value.exit_code == ExitCode.USAGE
    assert err.value.message == "unknown sandbox 'firejail' (known: auto, bwrap, tempdir, docker)"


@pytest.mark.bwrap
def test_auto_is_bwrap_where_it_runs() -> None:
    with make_sandbox("auto") as box:
        assert isinstance(box, BwrapSandbox) and box.isolated
        assert box.describe().startswith("bubblewrap ")


def test_auto_never_falls_back_to_no_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap_module, "unusable_reason", lambda: "bwrap cannot start: nope")
    with pytest.raises(EnvironmentUnavailable) as err:
        make_sandbox("auto")
    assert err.value.exit_code == ExitCode.ENVIRONMENT
    assert err.value.message == "sandbox 'auto': bwrap cannot start: nope"
    assert err.value.hint == (
        "use --sandbox docker, or --sandbox tempdir to run replies with no isolation"
    )


def test_bwrap_unusable_is_an_environment_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap_module, "unusable_reason", lambda: "bwrap is not installed")
    with pytest.raises(EnvironmentUnavailable) as err:
        make_sandbox("bwrap")
    assert err.value.exit_code == ExitCode.ENVIRONMENT
    assert err.value.message == "bwrap is not installed"
    assert err.value.hint == "use --sandbox docker, or --sandbox tempdir (no isolation)"


def test_tempdir_always_warns_loudly() -> None:
    with make_sandbox("tempdir") as box:
        assert WARNING in box.notices()
    assert "NO isolation" in WARNING


@pytest.mark.bwrap
def test_bwrap_has_nothing_to_warn_about_here() -> None:
    with make_sandbox("bwrap") as box:
        assert box.notices() == ()


def test_missing_bwrap_program_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    bwrap_module.unusable_reason.cache_clear()
    monkeypatch.setattr(bwrap_module.shutil, "which", lambda _: None)
    try:
        assert bwrap_module.unusable_reason() == (
            "bwrap is not installed (apt-get install bubblewrap)"
        )
    finally:
        bwrap_module.unusable_reason.cache_clear()


@pytest.mark.bwrap
def test_bwrap_set_up_failures_are_retried_then_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    real = BwrapSandbox.bwrap_argv
    calls: list[int] = []
    fail_on: set[int] = set()

    def flaky(self: BwrapSandbox, ws, *rest):  # type: ignore[no-untyped-def]
        calls.append(1)
        argv = real(self, ws, *rest)
        if len(calls) in fail_on:
            argv[1:1] = ["--ro-bind", "/ba-vanished-mount", "/ba-vanished-mount"]
        return argv

    with make_sandbox("bwrap") as box, box.workspace() as ws:
        monkeypatch.setattr(BwrapSandbox, "bwrap_argv", flaky)
        fail_on.add(1)
        r = box.run(ws, ["/bin/sh", "-c", "echo second try"])
        assert (r.exit_code, r.stdout, len(calls)) == (0, b"second try\n", 2)
        calls.clear()
        fail_on.update({2, 3})
        with pytest.raises(SandboxError) as err:
            box.run(ws, ["/bin/sh", "-c", "echo never"])
    assert len(calls) == 3
    assert err.value.message == (
        "bwrap could not set up the sandbox (3 tries): bwrap: Can't find source path "
        "/ba-vanished-mount: No such file or directory"
    )
