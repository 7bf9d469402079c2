"""The registry of audited systems: one entry names every part of a system, in report order.

A system is its adapter (`system_adapters/<adapter>`, our model of its boundary paths, with
the pre-processing steps of `adapters/preprocess/<preprocess>.py`), its driver (a
`HarnessTransport` subclass in `harness/drivers/`, whose `HarnessSpec` names its pinned lock
under `harness/locks/` and its sandbox-side script under `harness/inside/`), any more scripts
that script imports, and the written explanations of where the real harness and the adapter
differ (`harness/explanations/<name>.toml`). Adding a system is those files plus one entry
here; `tests/test_harness_systems.py` checks that every entry has all its parts and that every
part belongs to exactly one entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from boundary_audit.harness.drivers.autogen import AutoGenHarness
from boundary_audit.harness.drivers.codex import CodexHarness
from boundary_audit.harness.drivers.langchain import LangChainHarness
from boundary_audit.harness.drivers.openhands import OpenHandsHarness
from boundary_audit.harness.drivers.swe_agent import SweAgentHarness
from boundary_audit.harness.drivers.terminal_bench import TerminalBenchHarness
from boundary_audit.harness.transport import HarnessTransport


@dataclass(frozen=True)
class System:
    """Every part of one audited system."""

    driver: type[HarnessTransport]
    adapter: str
    """The adapter's file name in `system_adapters/`."""
    preprocess: str | None = None
    """The module of `adapters/preprocess/` holding its pre-processing steps, if any."""
    helpers: tuple[str, ...] = ()
    """More files its sandbox-side script imports from `harness/inside/`."""
    preprocess_helpers: tuple[str, ...] = ()
    """More modules of `adapters/preprocess/` its steps import."""

    @property
    def name(self) -> str:
        """The system's name (`swe-agent`): its driver spec's, `harness:<name>` on the CLI."""
        return self.driver.spec.name

    @property
    def explanations(self) -> str:
        """The file name of its explanations in `harness/explanations/`."""
        return f"{self.name}.toml"


REGISTRY: tuple[System, ...] = (
    System(SweAgentHarness, "swe-agent.toml", "swe_agent", ("sweagent_layer.py",),
           ("_bashlex_split",)),
    System(LangChainHarness, "langchain.toml"),
    System(AutoGenHarness, "autogen.toml", "autogen"),
    System(OpenHandsHarness, "openhands.toml", "openhands"),
    System(TerminalBenchHarness, "terminal-bench.toml", "terminal_bench"),
    System(CodexHarness, "codex.toml", "codex", ("mock_responses.py",)),
)  # fmt: skip

SHARED_SCRIPTS = ("driver_main.py",)
"""Sandbox-side scripts every driver uses."""
