"""source stage: resolve `repo@rev` to a commit and read its files from the object store.

Public API (everything else in this package is internal):

    parse_spec(text) -> RepoSpec                      the target grammar (see spec.py)
    open_checkout(spec, *, offline=False, refresh=False, cache_dir=None, timeout=120.0,
                  progress=None) -> Checkout         clone/fetch a cached mirror, resolve the sha
    Checkout.files(*, max_bytes=2 MiB, paths=None, want=None) -> Iterator[SourceFile]
    Checkout.read(path) -> bytes
    materialize(checkout, dest) -> Path               a plain directory with the commit's files

Only this package imports `git` (gitpython); its errors leave it as `SourceError`.
"""

from __future__ import annotations

from boundary_audit.source.cache import ENV_CACHE_DIR, cache_root
from boundary_audit.source.checkout import (
    DEFAULT_MAX_BYTES,
    SKIP_BINARY,
    SKIP_MISSING,
    SKIP_NO_SUCH_PATH,
    SKIP_SUBMODULE,
    SKIP_SYMLINK,
    Checkout,
    SourceFile,
    materialize,
    open_checkout,
    too_large,
)
from boundary_audit.source.spec import RepoSpec, parse_spec

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENV_CACHE_DIR",
    "SKIP_BINARY",
    "SKIP_MISSING",
    "SKIP_NO_SUCH_PATH",
    "SKIP_SUBMODULE",
    "SKIP_SYMLINK",
    "Checkout",
    "RepoSpec",
    "SourceFile",
    "cache_root",
    "materialize",
    "open_checkout",
    "parse_spec",
    "too_large",
]
