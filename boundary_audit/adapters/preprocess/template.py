"""The string template a harness pastes R into, as `scan` derives it from the code.

Not one system's step: the static analysis reads the literal text around the model's value
in a command string (`f'docker exec c sh -c "{cmd}"'` gives the prefix `sh -c "` and the
suffix `"` once the argv-transparent hop is set aside) and the derived path replays it as
`template.interpolate` followed by the shell that parses the whole line (`raw`). With
`quote = "shell"` R is shell-quoted first (`shlex.quote`), which is the fix of a
nested-string boundary: the outer parse then hands R to the inner shell unchanged.
"""

from __future__ import annotations

import shlex
from typing import Any, ClassVar

from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged
from boundary_audit.errors import AdapterError

QUOTES = ("none", "shell")


class Interpolate(Preprocessor):
    """R pasted between the template's literal prefix and suffix (optionally shell-quoted)."""

    name = "template.interpolate"
    cite = "the scanned code's own string template (boundary_audit/static/path.py derives it)"
    summary = "R pasted into the harness's command template: prefix + R + suffix"
    defaults: ClassVar[dict[str, Any]] = {"prefix": "", "suffix": "", "quote": "none"}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.params["quote"] not in QUOTES:
            raise AdapterError(
                f"pre-processor {self.name}: quote must be one of {', '.join(QUOTES)}"
            )

    def apply(self, text: str, ctx: Context | None) -> Staged:
        value = shlex.quote(text) if self.params["quote"] == "shell" else text
        return Staged.one(f"{self.params['prefix']}{value}{self.params['suffix']}")
