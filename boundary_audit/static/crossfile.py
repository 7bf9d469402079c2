"""Cross-file tracing (second pass). Placeholder until implemented."""

from __future__ import annotations


def resolve(work, results, commit, options):  # type: ignore[no-untyped-def]
    """Return results unchanged."""
    return results
