"""The transport interface: carry a reply R through one boundary mechanism, for real.

A transport is built from its name and parameters (e.g. `tmux` with `literal=False`), and
`execute` runs R inside a workspace of a sandbox the way that boundary does. Preparing the
fixture and validating the final state are the runner's job, not the transport's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass


class Transport(ABC):
    """One way a reply reaches a process."""

    name: ClassVar[str]
    """Registry name used on the command line (`--transport NAME`)."""
    boundary_class: ClassVar[BoundaryClass]
    """The taxonomy class this transport reproduces."""
    defaults: ClassVar[Mapping[str, Any]] = {}
    """Parameter names and default values; anything else passed to __init__ is an error."""

    def __init__(self, **params: Any) -> None:
        from boundary_audit.errors import UsageError

        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise UsageError(f"transport {self.name}: unknown parameter(s) {', '.join(unknown)}")
        self.params: dict[str, Any] = {**self.defaults, **params}

    @property
    def label(self) -> str:
        """Name plus the parameters that differ from the defaults, e.g. `tmux(literal=false)`."""
        diff = {k: v for k, v in self.params.items() if self.defaults.get(k) != v}
        if not diff:
            return self.name
        inner = ",".join(f"{k}={_fmt(v)}" for k, v in sorted(diff.items()))
        return f"{self.name}({inner})"

    def supports(self, sandbox: Sandbox) -> str | None:
        """None if this transport can run in `sandbox`, else the reason it cannot."""
        return None

    @abstractmethod
    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        """Run `reply` through this boundary in `ws`; the final state is left in ws.work."""

    def close(self) -> None:
        """Stop anything shared across runs (an sshd, a tmux server). Idempotent."""


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
