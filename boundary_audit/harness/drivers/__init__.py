"""The real-harness drivers, one module per audited system; DRIVERS lists them in report order.

Add a system by writing `drivers/<system>.py` (a `HarnessSpec` and a `HarnessTransport`
subclass), its lock under `locks/` and its script under `inside/`, and one line here.
"""

from __future__ import annotations

from boundary_audit.harness.drivers.autogen import AutoGenHarness
from boundary_audit.harness.drivers.codex import CodexHarness
from boundary_audit.harness.drivers.langchain import LangChainHarness
from boundary_audit.harness.drivers.openhands import OpenHandsHarness
from boundary_audit.harness.drivers.swe_agent import SweAgentHarness
from boundary_audit.harness.drivers.terminal_bench import TerminalBenchHarness
from boundary_audit.harness.transport import HarnessTransport

DRIVERS: tuple[type[HarnessTransport], ...] = (
    SweAgentHarness,
    LangChainHarness,
    AutoGenHarness,
    OpenHandsHarness,
    TerminalBenchHarness,
    CodexHarness,
)

__all__ = ["DRIVERS"]
