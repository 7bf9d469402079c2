"""Option values coerced without pydantic (`commands/coercion.py`) are exactly what typer's
own, pydantic-backed coercion gives; whatever the direct path does not take is typer's."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Literal

import pytest
import typer
from typer import _coercion, core
from typer._click import Context
from typer.models import OptionInfo

from boundary_audit.commands import coercion
from boundary_audit.taxonomy import Confidence


class Fmt(str, Enum):
    TEXT = "text"
    JSON = "json"


def _descriptor(annotation: Any, **info: Any) -> _coercion.TypeDescriptor:
    return _coercion.resolve_type_descriptor(annotation, OptionInfo(**info))


CTX = Context(core.TyperCommand("x"))

DIRECT: list[tuple[Any, dict[str, Any], Any]] = [
    (Fmt, {}, "json"),
    (Fmt, {}, Fmt.TEXT),
    (Fmt, {"case_sensitive": False}, "JSON"),
    (Confidence, {}, "high"),
    (Literal["a", "b"], {}, "b"),
    (str, {}, "all"),
    (str, {}, ""),
    (int, {}, "2"),
    (int, {}, "0"),
    (int, {}, 7),
    (int, {"min": 1, "max": 64}, "64"),
    (int, {"min": 1}, 1),
    (Path, {}, "out.json"),
    (Path, {}, "a//b/../c"),
    (Path, {"file_okay": False}, "/nonexistent/cache"),
    (Path, {"exists": True, "dir_okay": True}, "/"),
    (Path, {"resolve_path": True}, "."),
    (Path, {}, Path("x")),
]
TYPERS: list[tuple[Any, dict[str, Any], Any]] = [
    (Fmt, {}, "JSON"),  # case-sensitive: typer's error
    (Fmt, {}, "yaml"),
    (int, {}, "02"),
    (int, {}, " 2"),
    (int, {}, "-1"),
    (int, {}, "2.0"),
    (int, {}, True),
    (int, {"min": 1}, "0"),
    (int, {"max": 3}, 4),
    (int, {"min": 1, "max": 3, "clamp": True}, "9"),
    (str, {}, b"bytes"),
    (Path, {}, ""),
    (Path, {"exists": True}, "/nonexistent/x"),
    (Path, {"dir_okay": False}, "/"),
    (Path, {"path_type": str}, "x"),
    (float, {}, "1.5"),
    (bool, {}, "true"),
    (str, {"parser": str.upper}, "x"),
]


@pytest.mark.parametrize(("annotation", "info", "value"), DIRECT)
def test_a_direct_coercion_is_typers(annotation: Any, info: dict[str, Any], value: Any) -> None:
    descriptor = _descriptor(annotation, **info)
    got = coercion.direct(descriptor, value, CTX)
    assert got is not coercion._NO
    want = coercion._TYPERS(descriptor)._coerce_value(value, param=None, ctx=CTX)  # type: ignore[arg-type]
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(("annotation", "info", "value"), TYPERS)
def test_anything_else_is_left_to_typer(annotation: Any, info: dict[str, Any], value: Any) -> None:
    descriptor = _descriptor(annotation, **info)
    assert coercion.direct(descriptor, value, CTX) is coercion._NO
    param = coercion.build_runtime_param(descriptor)
    try:
        want: Any = coercion._TYPERS(descriptor)._coerce_value(value, param=None, ctx=CTX)  # type: ignore[arg-type]
    except typer.BadParameter as exc:
        with pytest.raises(typer.BadParameter) as got:
            param._coerce_value(value, param=None, ctx=CTX)  # type: ignore[arg-type]
        assert got.value.format_message() == exc.format_message()
    else:
        assert param._coerce_value(value, param=None, ctx=CTX) == want  # type: ignore[arg-type]


def test_install_replaces_typers_builder_once() -> None:
    assert coercion.install()
    assert coercion.install()
    assert core.build_runtime_param is coercion.build_runtime_param
    descriptor = _descriptor(Fmt)
    param = coercion.build_runtime_param(descriptor)
    assert isinstance(param, coercion.DirectParam)
    assert (
        param.coerce(
            None, param=core.TyperOption(param_decls=["--f"], type_descriptor=descriptor), ctx=CTX
        )
        is None
    )
