"""The one import of gitpython, made safe for a machine without git, and made on first use.

gitpython runs `git version` when it is imported and raises ImportError if that fails, which
would break every command (the CLI imports this package) rather than the one that needs git.
`GIT_PYTHON_REFRESH=quiet` defers the failure: our own git calls then raise
`EnvironmentUnavailable` ("git: program not found", exit code 5). The import itself costs
about 80 ms, and only a fresh mirror's configuration uses gitpython (`load`), so a scan of a
local repository or a cached mirror never pays it; `errors` names gitpython's error class
for handlers only once something has loaded it (nothing else raises it).
"""

from __future__ import annotations

import os
import sys
from types import ModuleType


def load() -> ModuleType:
    """The `git` package of gitpython (imported on the first call)."""
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    import git

    return git


def errors() -> tuple[type[Exception], ...]:
    """gitpython's `GitError` once gitpython is loaded, else nothing (for an `except`)."""
    git = sys.modules.get("git")
    error = getattr(git, "GitError", None) if git is not None else None
    return (error,) if isinstance(error, type) and issubclass(error, Exception) else ()


__all__ = ["errors", "load"]
