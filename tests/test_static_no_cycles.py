"""A scan makes no reference cycles: every file's engine, memo, extractor and tree are freed
when the file is done, by reference counting, not when the cyclic collector next runs.

The CLI runs the collector rarely (`cli.GC_THRESHOLDS`), so a cycle through a file's engine
or extractor would hold that file's tree-sitter tree (about 36 bytes per source byte) until
then. An engine's evaluator and an extractor's tool entries pointed back at their owners: at
those thresholds a single-process scan of openai-agents-python@7f7a44f peaked at 216 MiB
with both back references, 188 MiB with the tool entries' alone, 121 MiB with neither.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.static.engine import ScanOptions, scan_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    """`gc.garbage` filled with what the collector finds unreachable, instead of freeing it."""
    gc.collect()
    gc.garbage.clear()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("folder", ["specimens", "tests/fixtures/checks"])
def test_scanning_leaves_nothing_for_the_cycle_collector(
    folder: str, saved_garbage: list[object]
) -> None:
    result = scan_path(ROOT / folder, options=ScanOptions(jobs=1, scope=False))
    assert result.files_scanned > 5 and result.findings  # the analysis ran, sinks and all
    gc.collect()
    kinds = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in saved_garbage)
    assert kinds == Counter()


def test_the_canary_sees_a_cycle(saved_garbage: list[object]) -> None:
    """The check above can fail: a cycle made on purpose is found."""
    from boundary_audit.static.calls import CallEvaluator
    from boundary_audit.static.dataflow import Engine

    scan_path(ROOT / "specimens", options=ScanOptions(jobs=1, scope=False))
    gc.collect()
    assert saved_garbage == []
    original = CallEvaluator.__init__

    def strong(self: CallEvaluator, engine: Engine) -> None:
        original(self, engine)
        self.engine = engine  # the back reference the proxy replaced

    try:
        CallEvaluator.__init__ = strong  # type: ignore[method-assign]
        scan_path(ROOT / "specimens", options=ScanOptions(jobs=1, scope=False))
    finally:
        CallEvaluator.__init__ = original  # type: ignore[method-assign]
    gc.collect()
    assert any(isinstance(o, Engine) for o in saved_garbage)
