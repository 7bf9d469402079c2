"""Sandboxes: where a reply runs. One module per backend; `interface` defines the contract."""

from __future__ import annotations

from boundary_audit.sandbox.interface import ExecResult, Limits, Sandbox, Workspace

__all__ = ["ExecResult", "Limits", "Sandbox", "Workspace"]
