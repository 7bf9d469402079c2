"""Bounds that keep the dataflow engine's work per sink small and predictable."""

from __future__ import annotations

MAX_STEPS = 4000
"""Evaluation steps per sink before the engine gives up (the value becomes unknown)."""
MAX_CALL_DEPTH = 12
"""How many function boundaries (returns or parameters) one trace may cross within a file."""
SITE_STEPS = 400
"""Steps for re-evaluating one helper's return at one call site (`calls.at_call_site`); past
them the join over the helper's callers stands."""
PARAM_SHARE = (3, 4)
"""The share of the steps left that one parameter's lookup (its callers, and theirs) may
spend: a chase through configuration cannot leave the sibling holes of a command unread."""
PARAM_FLOOR = 16
"""Steps a parameter's lookup may always spend (when that many are left), whatever its share."""
