"""The one import of gitpython, made safe for a machine without git.

gitpython runs `git version` when it is imported and raises ImportError if that fails, which
would break every command (the CLI imports this package) rather than the one that needs git.
`GIT_PYTHON_REFRESH=quiet` defers the failure: our own git calls then raise
`EnvironmentUnavailable` ("git: program not found", exit code 5).
"""

from __future__ import annotations

import os

os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")

import git  # noqa: E402

__all__ = ["git"]
