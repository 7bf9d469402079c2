"""`argv-shlex` / `argv-split` / `argv-shell-quote`: R tokenized and spawned without a shell.

No shell parses R: pipes, redirects, `$()`, globs, `;` and `&&` are inert text (or, with
shell-quote, silently dropped). The tokenizer is the variant:

- `argv-shlex`: Python's `shlex.split(R)` (POSIX rules, no comments), the common harness idiom
  `subprocess.run(shlex.split(cmd))`; an unbalanced quote is a rejection. Tokenized by
  `_shlex.split`, which gives exactly shlex's tokens and errors in linear time (shlex itself
  is quadratic in a token's length).
- `argv-split`: `R.split()` on whitespace, the naive idiom.
- `argv-shell-quote`: npm `shell-quote` 1.x `parse(R)` keeping only the string entries, as
  OpenHands' launcher does (`transports/shell_quote.py`): operators, globs and comments are
  dropped, `$VAR` expands against an empty environment.

NOTE(h6): the tokens are executed as `sh -c 'exec "$@"' argv TOKENS...`. The shell does not
parse the tokens (they arrive as positional parameters); it only performs the PATH search and
`execve`, so the process image is the one `subprocess.run(tokens)` would create, and a
first token that names no program becomes exit 127 in every sandbox backend instead of an
exception from the spawn.

Tokenizing happens on the host, so its time is charged to the run: the spawn gets what is
left of the timeout. A reply over `MAX_REPLY_CHARS` or with a lone surrogate is refused
before tokenizing; a NUL is refused only when it lands in a token (shell-quote drops
comments, NUL and all).
"""

from __future__ import annotations

import time

from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace
from boundary_audit.taxonomy import BoundaryClass
from boundary_audit.transports import _shlex, shell_quote
from boundary_audit.transports.interface import (
    Transport,
    out_of_time,
    refusal,
    rejected,
    remaining,
)

EXEC_SHIM = ("/bin/sh", "-c", 'exec "$@"', "argv")
"""Spawns "$@" as is: PATH search plus execve, no word splitting, no expansion."""


def tokenize_shlex(reply: str) -> list[str]:
    """`shlex.split(reply)` (same tokens and ValueErrors, linear time: see `_shlex`)."""
    return _shlex.split(reply)


def tokenize_split(reply: str) -> list[str]:
    """`reply.split()`."""
    return reply.split()


def tokenize_shell_quote(reply: str) -> list[str]:
    """The string entries of shell-quote's `parse(reply)`."""
    return shell_quote.argv(reply)


class ArgvTransport(Transport):
    """Tokenize R, then execve the tokens with no shell in between."""

    name = "argv"
    boundary_class = BoundaryClass.ARGV_DIRECT

    def tokens(self, reply: str) -> list[str]:
        """The argv this transport would spawn for `reply` (ValueError if it cannot tokenize)."""
        return tokenize_shlex(reply)

    def execute(self, reply: str, ws: Workspace, sandbox: Sandbox) -> ExecResult:
        started = time.monotonic()
        why = refusal(self.name, reply, argv=False)
        if why:
            return rejected(why)
        try:
            argv = self.tokens(reply)
        except ValueError as exc:
            return rejected(f"{self.name}: cannot tokenize: {exc}")
        if not argv:
            return rejected(f"{self.name}: empty command")
        if any("\0" in t for t in argv):
            return rejected(f"{self.name}: a token contains NUL")
        try:
            for token in argv:
                token.encode("utf-8")
        except UnicodeEncodeError:
            return rejected(f"{self.name}: a token is not encodable as UTF-8")
        left = remaining(sandbox, started)
        if left <= 0:
            return out_of_time(f"{self.name}: tokenizing the reply", started)
        return sandbox.run(ws, [*EXEC_SHIM, *argv], timeout=left)


class ArgvShlexTransport(ArgvTransport):
    """`subprocess.run(shlex.split(R))`."""

    name = "argv-shlex"

    def tokens(self, reply: str) -> list[str]:
        return tokenize_shlex(reply)


class ArgvSplitTransport(ArgvTransport):
    """`subprocess.run(R.split())`."""

    name = "argv-split"

    def tokens(self, reply: str) -> list[str]:
        return tokenize_split(reply)


class ArgvShellQuoteTransport(ArgvTransport):
    """OpenHands' launcher: shell-quote `parse(R)`, strings only, spawn without a shell."""

    name = "argv-shell-quote"

    def tokens(self, reply: str) -> list[str]:
        return tokenize_shell_quote(reply)
