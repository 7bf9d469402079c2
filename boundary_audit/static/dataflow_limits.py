"""Bounds that keep the dataflow engine's work per sink small and predictable."""

from __future__ import annotations

MAX_STEPS = 4000
"""Evaluation steps per sink before the engine gives up (the value becomes unknown)."""
MAX_CALL_DEPTH = 12
"""How many function boundaries (returns or parameters) one trace may cross within a file."""
