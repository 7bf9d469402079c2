"""The real-harness drivers, one module per audited system (registered in `harness.systems`).

A driver module holds the system's `HarnessSpec` (packages, pins, lock, sandbox-side script)
and its `HarnessTransport` subclass; `harness/systems.py` lists every part of a system.
"""
