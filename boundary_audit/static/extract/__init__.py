"""Per-language IR extractors; `extractor_for(lang)` returns the class for a language."""

from __future__ import annotations

from boundary_audit.static.extract.base import Extractor


def extractor_for(lang: str) -> type[Extractor]:
    """The extractor class for `lang` (imported lazily)."""
    if lang == "python":
        from boundary_audit.static.extract.python import PythonExtractor

        return PythonExtractor
    if lang in ("javascript", "typescript", "tsx"):
        from boundary_audit.static.extract.javascript import JavaScriptExtractor

        return JavaScriptExtractor
    if lang == "rust":
        from boundary_audit.static.extract.rust import RustExtractor

        return RustExtractor
    if lang == "go":
        from boundary_audit.static.extract.go import GoExtractor

        return GoExtractor
    if lang == "shell":
        from boundary_audit.static.extract.shell import ShellExtractor

        return ShellExtractor
    raise ValueError(f"no extractor for {lang!r}")


__all__ = ["Extractor", "extractor_for"]
