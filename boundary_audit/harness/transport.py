"""A real-harness driver as a Transport: the system's own code carries R, inside the sandbox.

`HarnessTransport.drive` runs `[<venv>/bin/python, -I, -B, driver_main.py, SYSTEM, PARAMS]`
through `sandbox.run(ws, argv, stdin=R)`: cwd is the task's work dir, the environment is the
sandbox's scrubbed one, and the sandbox's timeout and teardown kill whatever the harness or the
reply left behind. The driver answers with one JSON document (see inside/driver_main.py),
parsed here into a `DriverOutcome`; `execute` turns that into the `ExecResult` every transport
returns, with the harness's *observation* (what the model would be shown) as stdout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from boundary_audit.errors import HarnessError, TransportError, UsageError
from boundary_audit.harness.install import installed, require
from boundary_audit.harness.spec import HarnessSpec
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.transports.interface import Transport, TransportResult

PROTOCOL = "boundary-audit-harness/1"
TIMEOUT_STATUSES = frozenset({"timeout", "driver-timeout"})
REFUSED_STATUSES = frozenset(
    {"blocked", "syntax-error", "no-code-blocks", "tool-error", "invalid-input"}
    | {"multiple-commands", "literal-argument", "rejected", "unsupported-call"}
)
"""Statuses where the harness refused the reply without running it (the run fails on that)."""


@dataclass(frozen=True)
class DriverOutcome:
    """What one reply did inside a real harness, as the harness itself reported it."""

    system: str
    status: str
    """The harness's verdict: `executed`, `timeout`, `blocked`, `exit-command`, `syntax-error`,
    `no-code-blocks`, ... (per driver), or `driver-timeout` / `driver-error` from our side."""
    observation: str
    """The text the harness hands back to the model."""
    exit_code: int | None
    notes: tuple[str, ...]
    timings: Mapping[str, float] = field(default_factory=dict)
    process: ExecResult | None = None
    """The sandbox's record of the driver process itself."""

    @property
    def detail(self) -> str:
        """`status: notes`, one line."""
        return f"{self.status}: {'; '.join(self.notes)}" if self.notes else self.status

    def to_exec_result(self) -> TransportResult:
        """The transport-level result: the observation as stdout, the driver's log as stderr,
        a refusal as `rejected`, the harness's status and notes as `note`."""
        proc = self.process or ExecResult(exit_code=None, stdout=b"", stderr=b"")
        refused = self.status in REFUSED_STATUSES
        return TransportResult(
            rejected=f"{self.system} {self.detail}" if refused else "",
            note=self.detail,
            exit_code=None if self.status in TIMEOUT_STATUSES else self.exit_code,
            stdout=self.observation.encode("utf-8", "surrogateescape"),
            stderr=proc.stderr,
            timed_out=self.status in TIMEOUT_STATUSES,
            truncated=proc.truncated,
            duration_s=proc.duration_s,
            escaped_killed=proc.escaped_killed,
        )


def inside_dir() -> Path:
    """The folder of the sandbox-side driver scripts (`harness/inside/`), as a real path the
    sandbox can see."""
    folder = resources.files("boundary_audit.harness").joinpath("inside")
    if not isinstance(folder, Path):
        raise HarnessError("the harness driver scripts are not on a file system (zip install?)")
    return folder


def parse_driver_output(system: str, proc: ExecResult) -> DriverOutcome:
    """Read the driver's JSON document; a missing or malformed one is a `driver-error` outcome."""
    if proc.timed_out:
        return DriverOutcome(
            system,
            "driver-timeout",
            "",
            None,
            ("the sandbox killed the driver at its time limit",),
            process=proc,
        )
    text = proc.stdout.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text.splitlines()[-1]) if text else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("protocol") != PROTOCOL:
        lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        why = lines[-1].strip() if lines else f"no result, exit {proc.exit_code}"
        return DriverOutcome(system, "driver-error", "", None, (why,), process=proc)
    code = doc.get("exit_code")
    return DriverOutcome(
        system=system,
        status=str(doc.get("status")),
        observation=str(doc.get("observation") or ""),
        exit_code=code if isinstance(code, int) else None,
        notes=tuple(str(n) for n in doc.get("notes") or ()),
        timings={k: float(v) for k, v in (doc.get("timings") or {}).items()},
        process=proc,
    )


class HarnessTransport(Transport):
    """Base of the per-system driver transports (`harness:<system>`)."""

    spec: ClassVar[HarnessSpec]
    choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Allowed values of the string parameters that have a fixed set."""
    teardown_budget_s: ClassVar[float] = 5.0
    """Seconds the harness may take to stop its session after the command timeout."""

    def __init__(self, **params: Any) -> None:
        # Values may arrive as text (`--param timeout=5`): coerce before the base checks types.
        super().__init__(
            **{k: self._coerce(k, v) if k in self.defaults else v for k, v in params.items()}
        )

    def _coerce(self, key: str, given: Any) -> Any:
        default = self.defaults[key]
        value: Any
        try:
            if isinstance(default, bool):
                value = given if isinstance(given, bool) else _parse_bool(str(given))
            elif isinstance(default, (int, float)):
                value = type(default)(given)
                if value <= 0:
                    raise ValueError("must be positive")
            else:
                value = str(given)
        except ValueError as exc:
            raise UsageError(f"transport {self.name}: parameter {key}={given!r}: {exc}") from None
        allowed = self.choices.get(key)
        if allowed and value not in allowed:
            raise UsageError(
                f"transport {self.name}: parameter {key}={given!r} "
                f"is not one of {', '.join(allowed)}"
            )
        return value

    def supports(self, sandbox: Sandbox) -> str | None:
        """Needs host programs inside the sandbox (the venv's Python) and a finished install."""
        if not sandbox.host_programs:
            return f"{self.name} runs the harness venv's Python, which sandbox {sandbox.name} lacks"
        if installed(self.spec) is None:
            return f"the {self.spec.name} harness is not installed"
        return None

    def preflight_reply(self) -> str:
        """A reply that must come back `executed` with `boundary-audit-preflight` as output."""
        return "echo boundary-audit-preflight"

    def adapter_path(self) -> str:
        """The boundary path of the system's adapter that this configuration reproduces."""
        return self.spec.adapter_path

    def driver_params(self, ws: Workspace) -> dict[str, Any]:
        """The parameters handed to the in-sandbox driver (subclasses add per-run values)."""
        return dict(self.params)

    def driver_env(self, ws: Workspace) -> dict[str, str]:
        """Variables the driver needs on top of the sandbox environment (none by default)."""
        return {}

    def exposed_paths(self) -> list[Path]:
        """Host paths the driver must see inside the sandbox: the venv and its interpreter."""
        found = require(self.spec)
        return [found.path, Path(found.base_python).parent.parent]

    def granted_sockets(self) -> list[Path]:
        """Host unix sockets the driver must connect to from inside (none by default)."""
        return []

    def sandbox_timeout(self) -> float:
        """The wall-clock limit of one driver run: start-up + command timeout + teardown."""
        return self.spec.startup_budget_s + float(self.params["timeout"]) + self.teardown_budget_s

    def drive(self, reply: str, ws: Workspace, sandbox: Sandbox) -> DriverOutcome:
        """Run `reply` through the real harness in `ws` and return what the harness reported."""
        found = require(self.spec)
        sandbox.expose(self.exposed_paths())
        sandbox.grant(self.granted_sockets())
        script = inside_dir() / "driver_main.py"
        params = json.dumps(self.driver_params(ws), sort_keys=True)
        argv = [str(found.python), "-I", "-B", str(script), self.spec.name, params]
        try:
            proc = sandbox.run(
                ws,
                argv,
                stdin=reply.encode("utf-8", "surrogateescape"),
                timeout=self.sandbox_timeout(),
                env=self.driver_env(ws),
            )
        finally:
            self.after_run(ws)
        return parse_driver_output(self.spec.name, proc)

    def after_run(self, ws: Workspace) -> None:
        """Clean up anything the harness started outside the sandbox (a container)."""

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        outcome = self.drive(reply, ws, sandbox)
        if outcome.status == "driver-error":
            raise TransportError(f"{self.name}: driver failed: {'; '.join(outcome.notes)}")
        return outcome.to_exec_result()


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false")
