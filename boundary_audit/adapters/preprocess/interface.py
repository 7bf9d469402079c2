"""The pre-processor interface: what a harness does to a reply R before its transport runs it.

Real harnesses do not hand R to the process unchanged. SWE-agent strips it, checks a
blocklist, intercepts `exit`, syntax-checks it through `/bin/sh` and rewrites it with bashlex;
OpenHands rejects several top-level statements and doubles some backslashes; AutoGen pulls
fenced blocks out of the model's markdown. Each such step is a `Preprocessor`, reimplemented
from the system's source (cited in its docstring as path:lines@sha), that maps one text to a
`Staged` result: the texts to run (usually one, AutoGen may yield several), or a refusal, or
the end of the episode. A pre-processor may also clean what the harness would strip from the
output (`clean_stdout`). Pre-processors that must run a program (SWE-ReX's `bash -n` check
runs through `/bin/sh`) do it through the sandbox given in `Context`, never on the host.

Pre-processing is part of the run: its time counts against the run's timeout (the
`Context.deadline`), and a step that cannot finish by then leaves the reply timed out
(`Staged.timed_out`) instead of holding the run past its limit.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boundary_audit.errors import AdapterError
from boundary_audit.sandbox.interface import Sandbox, Workspace


@dataclass(frozen=True)
class Context:
    """Where a pre-processor that runs a program may run it: the reply's own workspace."""

    ws: Workspace
    sandbox: Sandbox
    deadline: float | None = None
    """Monotonic time by which the run must be over (None: no limit, e.g. in unit tests)."""

    def left(self) -> float | None:
        """Seconds until `deadline` (possibly negative), or None without one."""
        return None if self.deadline is None else self.deadline - time.monotonic()


@dataclass(frozen=True)
class Staged:
    """What one pre-processing step made of a text."""

    parts: tuple[str, ...] = ()
    """Texts handed on, in order (run one after another, stopping at the first failure)."""
    rejected: str = ""
    """Why the harness refused the text (it never runs); "" when accepted."""
    ended: str = ""
    """Why the harness ended the episode instead of running the text (SWE-agent's `exit`);
    replies after this one are not run either."""
    notes: tuple[str, ...] = ()
    """What the step changed, for the record (e.g. "bashlex failed: sentinel appended")."""
    timed_out: str = ""
    """Why the step ran out of the run's time (the reply is not run and the run timed out);
    "" when it finished in time."""

    @classmethod
    def one(cls, text: str, *notes: str) -> Staged:
        """The text handed on as a single part."""
        return cls(parts=(text,), notes=tuple(notes))

    @classmethod
    def refuse(cls, why: str) -> Staged:
        """The harness refused the text."""
        return cls(rejected=why)

    @classmethod
    def end(cls, why: str) -> Staged:
        """The harness ended the episode at this text."""
        return cls(ended=why)

    @classmethod
    def late(cls, why: str) -> Staged:
        """The step did not finish within the run's timeout."""
        return cls(timed_out=why)


class Preprocessor(ABC):
    """One named step a harness applies to R before its transport."""

    name: ClassVar[str]
    """Registry name used in adapter files, e.g. `swe-rex.bashlex-split`."""
    cite: ClassVar[str]
    """Where the behaviour was read: `path:lines@sha` (or `package==version path:lines`)."""
    summary: ClassVar[str]
    """One line for reports: what the step does to R."""
    defaults: ClassVar[Mapping[str, Any]] = {}
    """Parameter names and defaults; anything else given in an adapter file is an error."""
    needs_sandbox: ClassVar[bool] = False
    """True when `apply` runs a program (it then requires a Context)."""

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise AdapterError(
                f"pre-processor {self.name}: unknown parameter(s) {', '.join(unknown)} "
                f"(known: {known})"
            )
        for key, value in params.items():
            default = self.defaults[key]
            if default is not None and not isinstance(value, type(default)):
                raise AdapterError(
                    f"pre-processor {self.name}: parameter {key} must be "
                    f"{type(default).__name__}, got {type(value).__name__}"
                )
        self.params: dict[str, Any] = {**self.defaults, **params}

    @abstractmethod
    def apply(self, text: str, ctx: Context | None) -> Staged:
        """What the harness makes of `text` (one part of the reply)."""

    def clean_stdout(self, stdout: bytes) -> bytes:
        """Output as the harness shows it after this step's own markers are removed."""
        return stdout
