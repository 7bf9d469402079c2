"""The one renderer protocol: a report family's renderer turns its result into text, only.

Renderers are pure (no I/O, no clock, no environment): the same result renders to the same
bytes. Each report family is a folder of `report/` (`scan`, `probe`, `table8`, `harness`,
`tasks`, `crossover`; `html` holds the crossover's HTML page and its figures) with one module
per format and, in its `__init__`, the family's format enum and
`renderer_for(fmt, ...)`, the single mapping from a CLI `--format` choice to a renderer (a
test checks that it covers every member).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

R = TypeVar("R", contravariant=True)


class Renderer(Protocol[R]):
    """Anything that turns a result of type R into text ending with a newline."""

    def render(self, report: R) -> str:
        """The whole report as text."""
        ...
