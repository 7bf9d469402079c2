"""Sandboxes: where a reply runs. One module per backend; `interface` defines the contract.

`make_sandbox(name, limits)` is the one way to get a backend:

| name      | isolation                                                         |
|-----------|-------------------------------------------------------------------|
| `auto`    | `bwrap`; an error where it cannot run (never a silent fallback)   |
| `bwrap`   | namespaces, read-only root, no network, fixed paths under /tmp    |
| `tempdir` | none: a fresh directory, limits and a thorough kill; loud notice  |
| `docker`  | a container per run on a private engine, image built locally      |
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from boundary_audit.errors import EnvironmentUnavailable, UsageError
from boundary_audit.sandbox.interface import ExecResult, Limits, Sandbox, Workspace


class SandboxChoice(StrEnum):
    """The values of `--sandbox`."""

    AUTO = "auto"
    BWRAP = "bwrap"
    TEMPDIR = "tempdir"
    DOCKER = "docker"


def make_sandbox(
    name: str | SandboxChoice = "auto", limits: Limits | None = None, **options: Any
) -> Sandbox:
    """A ready backend: bwrap is probed once per process, docker's engine and image are up.

    Unknown names are a UsageError; a backend that cannot run here is EnvironmentUnavailable.
    `options` go to the backend (docker: `engine=DockerEngine(...)`).
    """
    try:
        choice = SandboxChoice(name)
    except ValueError:
        known = ", ".join(c.value for c in SandboxChoice)
        raise UsageError(f"unknown sandbox {name!r} (known: {known})") from None
    sandbox = _FACTORIES[choice](limits, options)
    if _ANNOUNCE is not None:
        _ANNOUNCE(f"replies run in: {sandbox.confinement()}")
        for notice in sandbox.notices():
            _ANNOUNCE(f"warning: {notice}")
    return sandbox


_ANNOUNCE: Callable[[str], None] | None = None


def announce_with(say: Callable[[str], None] | None) -> None:
    """Have every `make_sandbox` say which sandbox replies run in, and its notices, through
    `say` (the CLI sets a stderr writer once; library callers get nothing unless they ask)."""
    global _ANNOUNCE
    _ANNOUNCE = say


def _bwrap(limits: Limits | None, options: dict[str, Any]) -> Sandbox:
    from boundary_audit.sandbox.bwrap import BwrapSandbox, unusable_reason

    why = unusable_reason()
    if why is not None:
        raise EnvironmentUnavailable(
            why, hint="use --sandbox docker, or --sandbox tempdir (no isolation)"
        )
    return BwrapSandbox(limits, **options)


def _tempdir(limits: Limits | None, options: dict[str, Any]) -> Sandbox:
    from boundary_audit.sandbox.tempdir import TempdirSandbox

    return TempdirSandbox(limits, **options)


def _auto(limits: Limits | None, options: dict[str, Any]) -> Sandbox:
    # NOTE(sandbox): never a silent fallback to no isolation: where bwrap cannot run, `auto`
    # is an error that names the alternatives; `tempdir` must be asked for by name.
    from boundary_audit.sandbox.bwrap import unusable_reason

    why = unusable_reason()
    if why is not None:
        raise EnvironmentUnavailable(
            f"sandbox 'auto': {why}",
            hint="use --sandbox docker, or --sandbox tempdir to run replies with no isolation",
        )
    return _bwrap(limits, options)


def _docker(limits: Limits | None, options: dict[str, Any]) -> Sandbox:
    from boundary_audit.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox(limits, **options)
    try:
        sandbox.start()
    except BaseException:
        sandbox.close()
        raise
    return sandbox


_FACTORIES = {
    SandboxChoice.AUTO: _auto,
    SandboxChoice.BWRAP: _bwrap,
    SandboxChoice.TEMPDIR: _tempdir,
    SandboxChoice.DOCKER: _docker,
}

__all__ = [
    "ExecResult",
    "Limits",
    "Sandbox",
    "SandboxChoice",
    "Workspace",
    "announce_with",
    "make_sandbox",
]
