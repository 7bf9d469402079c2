"""Option values coerced without pydantic where typer's own coercion is a pure function.

typer 0.29 coerces every option's value (a default `None` included) through a pydantic
`TypeAdapter` it builds for the option on first use: importing pydantic and building the
adapters was about 0.2 s of CPU, half of what a 2-file `scan` costs in-process (issue 15).
For the annotations whose adapter only wraps a pure typer function, or is the identity on
what the command line gives, the value is coerced here with the same result:

- an Enum or a Literal: typer's own `coerce_cli_choice` (the adapter is a before-validator
  of `Any` calling it);
- `str` given a `str`: the value (the adapter's `_parse_cli_str` and pydantic's lax `str`
  leave it as it is);
- `int` without `clamp`, given an `int` or a canonical decimal string within its `min` and
  `max` (the adapter's `Field(ge=min, le=max)` passes it unchanged);
- `Path` given a `Path` or a non-empty str: typer's own `coerce_cli_path` (the adapter is a
  before-validator of `Any` calling it) on `Path(value)`, which is what the pydantic
  `TypeAdapter(Path)` inside it makes of a str; its checks (exists, dir_okay...) are typer's,
  and a value they reject goes to typer for typer's message.

Anything else (lists, parsers, files, other types, a value of another type) and any
value the direct path does not accept goes through typer's own runtime parameter, built
lazily as typer builds it, so that every error and its message stays typer's. `install`
applies only to the typer line the package pins (`typer>=0.29,<0.30`), whose internals it
relies on; with another, typer's coercion is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from typer import _coercion, core
from typer._param_types import (
    choice_coercion_annotation,
    coerce_cli_choice,
    coerce_cli_path,
    routes_to_path,
)

_TYPERS = _coercion.build_runtime_param
"""typer's own: the runtime parameter with its pydantic adapter."""
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,17}")
_NO = object()
"""`direct`'s answer when it leaves the value to typer."""


def direct(descriptor: _coercion.TypeDescriptor, value: Any, ctx: Any, param: Any = None) -> Any:
    """`value` coerced as typer's adapter for `descriptor` would, or `_NO`."""
    info = descriptor.parameter_info
    annotation = descriptor.annotation
    if info.parser is not None or descriptor.file_annotation is not None:
        return _NO
    choice = choice_coercion_annotation(annotation, info)
    if choice is not None:
        choices, case_sensitive = choice
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError:
            return _NO
    if annotation is str and type(value) is str:
        return value
    if annotation is int and not info.clamp:
        number = (
            value
            if type(value) is int
            else int(value)
            if type(value) is str and _DECIMAL.fullmatch(value)
            else None
        )
        if number is None or info.min is not None and number < info.min:
            return _NO
        return _NO if info.max is not None and number > info.max else number
    if annotation is Path and info.path_type is None and routes_to_path(annotation, info):
        if isinstance(value, Path):
            given = value
        elif type(value) is str and value and "\0" not in value:
            given = Path(value)  # what pydantic's lax `Path` makes of a str
        else:
            return _NO
        try:
            return coerce_cli_path(given, info, path_type=Path, param=param, ctx=ctx)
        except (typer.BadParameter, OSError, ValueError):
            return _NO
    return _NO


@dataclass(frozen=True)
class DirectParam(_coercion.RuntimeParam):
    """A runtime parameter that coerces `direct`ly, else as typer's own would."""

    descriptor: _coercion.TypeDescriptor | None = None
    _typers: list[_coercion.RuntimeParam] = field(default_factory=list, compare=False)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        assert self.descriptor is not None
        done = direct(self.descriptor, value, ctx, param)
        if done is not _NO:
            return done
        if not self._typers:
            self._typers.append(_TYPERS(self.descriptor))
        return self._typers[0]._coerce_value(value, param=param, ctx=ctx)


def build_runtime_param(descriptor: _coercion.TypeDescriptor) -> _coercion.RuntimeParam:
    """typer's `build_runtime_param`, coercing `direct`ly where it can."""
    if descriptor.file_annotation is not None:
        return _TYPERS(descriptor)
    return DirectParam(descriptor.parameter_info, descriptor.annotation, descriptor)


def install() -> bool:
    """Make typer's parameters coerce through `build_runtime_param` (the pinned typer only)."""
    if not typer.__version__.startswith("0.29."):
        return False
    if core.build_runtime_param is _TYPERS:
        core.build_runtime_param = build_runtime_param
    return core.build_runtime_param is build_runtime_param


__all__ = ["DirectParam", "build_runtime_param", "direct", "install"]
