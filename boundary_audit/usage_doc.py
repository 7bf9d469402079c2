"""Generated parts of docs/usage.md: the exit-code table and the `scan` option table.

Both come from the code, so the documentation cannot drift: exit codes from the attribute
docstrings of `errors.ExitCode` (read with `ast`, since Python drops attribute docstrings at
runtime), options from the typer annotations of the `scan` function. `python -m
boundary_audit.usage_doc` rewrites the blocks between `<!-- begin generated: NAME -->` and
`<!-- end generated: NAME -->` in docs/usage.md; `--check` exits 1 if they are stale.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from typer.models import OptionInfo

from boundary_audit import errors
from boundary_audit.commands import checks, scan

USAGE_MD = Path(__file__).resolve().parent.parent / "docs" / "usage.md"


def exit_codes() -> list[tuple[int, str, str]]:
    """(value, NAME, docstring) for every ExitCode member, in declaration order."""
    tree = ast.parse(inspect.getsource(errors))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ExitCode")
    out: list[tuple[int, str, str]] = []
    body = cls.body
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = " ".join(str(after.value.value).split())
            out.append((int(errors.ExitCode[name]), name, doc))
    return out


def exit_code_table() -> str:
    """The Markdown table of exit codes."""
    rows = ["| code | name | meaning |", "|---:|---|---|"]
    rows += [f"| {value} | `{name}` | {doc} |" for value, name, doc in exit_codes()]
    return "\n".join(rows)


def _enum_of(annotation: object) -> type[Enum] | None:
    """The Enum inside `X`, `X | None` or `list[X] | None`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return annotation
    for arg in typing.get_args(annotation):
        found = _enum_of(arg)
        if found is not None:
            return found
    return None


def _options(command: Callable[..., object]) -> list[tuple[OptionInfo, object, object]]:
    """(OptionInfo, annotation, default) of every option of a typer command function."""
    hints = typing.get_type_hints(command, include_extras=True)
    out = []
    for name, param in inspect.signature(command).parameters.items():
        base, *meta = typing.get_args(hints[name]) or (hints[name],)
        info = next((m for m in meta if isinstance(m, OptionInfo)), None)
        if info is not None and not info.hidden:
            out.append((info, base, param.default))
    return out


def option_table(command: Callable[..., object] = scan.scan) -> str:
    """The Markdown table of a command's options (with their help panel and env alias)."""
    rows = ["| option | panel | environment | default | meaning |", "|---|---|---|---|---|"]
    for info, annotation, default in _options(command):
        # NOTE(report): inside Annotated, typer stores the first flag in `default`.
        first = [info.default] if isinstance(info.default, str) else []
        names = ", ".join(f"`{n}`" for n in [*first, *(info.param_decls or ())])
        enum = _enum_of(annotation)
        if enum is not None:
            names += " " + "\\|".join(str(m.value) for m in enum)
        env = f"`{info.envvar}`" if isinstance(info.envvar, str) else ""
        shown = "" if default in (None, False) else f"`{getattr(default, 'value', default)}`"
        help_text = " ".join((info.help or "").split()).replace("\\[", "[").replace("|", "\\|")
        rows.append(f"| {names} | {info.rich_help_panel or ''} | {env} | {shown} | {help_text} |")
    return "\n".join(rows)


BLOCKS: dict[str, Callable[[], str]] = {
    "exit-codes": exit_code_table,
    "scan-options": option_table,
    "checks-options": lambda: option_table(checks.checks),
}


def regenerate(text: str) -> str:
    """`text` with every generated block replaced by its current content."""
    for name, make in BLOCKS.items():
        pattern = re.compile(
            rf"(<!-- begin generated: {name} -->\n)(?:.*?\n)?(<!-- end generated: {name} -->)", re.S
        )
        if not pattern.search(text):
            raise ValueError(f"docs/usage.md has no generated block {name!r}")
        body = make()
        text = pattern.sub(lambda m: f"{m.group(1)}{body}\n{m.group(2)}", text)
    return text


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - thin wrapper
    """Rewrite docs/usage.md, or with --check report whether it is stale."""
    args = sys.argv[1:] if argv is None else argv
    current = USAGE_MD.read_text(encoding="utf-8")
    fresh = regenerate(current)
    if "--check" in args:
        if fresh != current:
            sys.stderr.write("docs/usage.md is stale: run python -m boundary_audit.usage_doc\n")
            return 1
        return 0
    USAGE_MD.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
