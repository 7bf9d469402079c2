"""The scan compiles, before forking its workers, only the query bundles the prefilters ask for."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from boundary_audit.static import analyze
from boundary_audit.static.analyze import AUX_NAMES, SINK_NAMES, bundles_for
from boundary_audit.static.extract.python import PythonExtractor
from boundary_audit.static.queries import QueryBundle, bundle

SINK_PASS = (*SINK_NAMES, *AUX_NAMES, PythonExtractor.FUNCTION_QUERY)
"""The sink pass's bundle: the sink and auxiliary checks, and the extractor's functions."""


def compiled(monkeypatch: pytest.MonkeyPatch, texts: list[bytes] | None) -> list[tuple[str, ...]]:
    asked: list[tuple[str, ...]] = []

    def recording(
        lang: str,
        names: Sequence[str],
        functions: str = "",
        keep: frozenset[int] | None = None,
    ) -> QueryBundle:
        asked.append((*names, functions) if functions else tuple(names))
        return bundle(lang, tuple(names), functions, keep)

    monkeypatch.setattr(analyze, "bundle", recording)
    bundles_for("python", texts)
    return asked


SERIALIZED = ("serialized-command",)
SUPPRESSION = ("suppression-without-reason",)


def test_a_text_without_sinks_or_guards_compiles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert compiled(monkeypatch, [b"x = 1\n", b"def f(a):\n    return a\n"]) == []


def test_a_possible_sink_compiles_the_sink_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    assert compiled(monkeypatch, [b"x = 1\n", b"subprocess.run(cmd)\n"]) == [SINK_PASS]


def test_a_guard_match_compiles_its_check_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [b"x = 1  # boundary-audit: ignore[BA101]\n", b"T = '{\"cmd\": 1}'\n"]
    assert compiled(monkeypatch, texts) == [SERIALIZED, SUPPRESSION]


def test_without_texts_every_bundle_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    assert compiled(monkeypatch, None) == [SINK_PASS, AUX_NAMES, SERIALIZED, SUPPRESSION]
