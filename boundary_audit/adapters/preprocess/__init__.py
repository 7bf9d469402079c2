"""Pre-processors: named steps a harness applies to R before its transport, and their pipeline.

Register a new step with one line in `PREPROCESSORS`; adapter files name steps by `name`.
`run_pipeline` applies the steps in order to every part of the reply: a refusal, the end of
the episode or a step out of time stops the pipeline at once; otherwise the parts that come
out are what the transport runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from boundary_audit.adapters.preprocess.autogen import MarkdownBlocks, SilencePip
from boundary_audit.adapters.preprocess.codex import SnapshotWrapper
from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged
from boundary_audit.adapters.preprocess.openhands import (
    AcpParseCommand,
    EscapeSpecialChars,
    SplitCommands,
)
from boundary_audit.adapters.preprocess.swe_agent import BashlexSplit, HandleAction, SyntaxCheck
from boundary_audit.adapters.preprocess.template import Interpolate
from boundary_audit.adapters.preprocess.terminal_bench import Keystrokes
from boundary_audit.errors import AdapterError

PREPROCESSORS: dict[str, type[Preprocessor]] = {
    cls.name: cls
    for cls in (
        HandleAction,
        SyntaxCheck,
        BashlexSplit,
        SplitCommands,
        EscapeSpecialChars,
        AcpParseCommand,
        MarkdownBlocks,
        SilencePip,
        Keystrokes,
        SnapshotWrapper,
        Interpolate,
    )
}


def make_preprocessor(name: str, **params: Any) -> Preprocessor:
    """Instantiate pre-processor `name`; an unknown name is an AdapterError."""
    try:
        cls = PREPROCESSORS[name]
    except KeyError:
        known = ", ".join(sorted(PREPROCESSORS))
        raise AdapterError(f"unknown pre-processor {name!r} (known: {known})") from None
    return cls(**params)


def run_pipeline(steps: Sequence[Preprocessor], reply: str, ctx: Context | None) -> Staged:
    """Apply `steps` in order to every part; the first refusal or end stops everything."""
    parts: tuple[str, ...] = (reply,)
    notes: list[str] = []
    for step in steps:
        produced: list[str] = []
        for part in parts:
            staged = step.apply(part, ctx)
            notes.extend(f"{step.name}: {n}" for n in staged.notes)
            if staged.rejected or staged.ended or staged.timed_out:
                return Staged(
                    rejected=staged.rejected and f"{step.name}: {staged.rejected}",
                    ended=staged.ended and f"{step.name}: {staged.ended}",
                    notes=tuple(notes),
                    timed_out=staged.timed_out and f"{step.name}: {staged.timed_out}",
                )
            produced.extend(staged.parts)
        parts = tuple(produced)
    return Staged(parts=parts, notes=tuple(notes))


__all__ = [
    "PREPROCESSORS",
    "Context",
    "Preprocessor",
    "Staged",
    "make_preprocessor",
    "run_pipeline",
]
