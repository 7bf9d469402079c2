"""Access to the data folders that ship inside the wheel.

The folders are tasks/, probes/, system_adapters/, specimens/ and contracts/.

In the repository these are top-level folders; `boundary_audit/_bundled/` holds symlinks to
them, which the wheel build resolves into real files. Code reads them only through here.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

_FOLDERS = ("tasks", "probes", "system_adapters", "specimens", "contracts")


def data_root(folder: str) -> Traversable:
    """The packaged folder `folder` (one of `_FOLDERS`)."""
    if folder not in _FOLDERS:
        raise ValueError(f"unknown data folder {folder!r}")
    return resources.files("boundary_audit").joinpath("_bundled", folder)


def iter_files(folder: str, suffix: str = "") -> list[tuple[str, Traversable]]:
    """(relative path, file) for every file below `folder` ending in `suffix`, sorted by path."""
    found: list[tuple[str, Traversable]] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, rel + "/")
            elif child.name.endswith(suffix):
                found.append((rel, child))

    root = data_root(folder)
    if root.is_dir():
        walk(root, "")
    return sorted(found, key=lambda p: p[0])
