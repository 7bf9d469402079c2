"""Which exec'd programs are shells, and what their argv asks them to do.

A hop is a shell when the file it exec'd is one (`bash`, `sh`, `dash`, `zsh`, `ksh`, `mksh`,
`ash`, by base name: `/bin/sh` counts as `sh`, which is dash on Debian). `parse_shell` reads
the argv the way these shells do: options (single letters, clustered: `-lc`, `-ec`; `+H`;
`-o NAME`, `-O NAME` and bash's `--rcfile FILE` take a value; the long options bash knows),
then either the `-c` command string and its `$0 $1...`, or a script path and its arguments,
or nothing (commands come from stdin: `-s`, or no operand). An argv[0] starting with `-` is
a login shell, as for `bash -l`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"})
_TAKES_VALUE = frozenset("oO")
_LONG_WITH_VALUE = frozenset({"--rcfile", "--init-file"})


@dataclass(frozen=True)
class ShellCall:
    """What one shell's argv says."""

    shell: str
    """The shell's base name (`bash`, `sh`, ...)."""
    options: tuple[str, ...]
    """The option words as given, in order (`-lc`, `--norc`, `-o`, `pipefail`...)."""
    letters: frozenset[str]
    """Every single-letter option turned on (`c`, `l`, `i`, `s`, `e`...); `l` also for
    `--login` and a `-` argv[0]."""
    command: str | None
    """The `-c` command string, or None."""
    script: str | None
    """The script operand when there is no `-c` (a path), or None."""
    operands: tuple[str, ...]
    """What follows the command string or the script: `$0 $1 ...` / the script's arguments."""

    @property
    def reads_stdin(self) -> bool:
        """Commands come from stdin (no -c string, no script)."""
        return self.command is None and self.script is None

    @property
    def flags(self) -> str:
        """Every option word before the command string, space-separated, as the `raw`
        transport's `flags` parameter takes them (`-c`, `-lc`, `-l -c`; "" for none)."""
        return " ".join(self.options)


def is_shell(program: str) -> bool:
    """True when `program` (a base name or a path) is a shell."""
    return os.path.basename(program) in SHELLS


def parse_shell(program: str, argv: tuple[str, ...]) -> ShellCall | None:
    """`argv` read as an invocation of the shell `program`, or None if it is not a shell."""
    name = os.path.basename(program)
    if name not in SHELLS:
        return None
    letters: set[str] = set()
    options: list[str] = []
    if argv and argv[0].startswith("-"):
        letters.add("l")
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-", "--"):
            options.append(word)
            i += 1
            break
        if word.startswith("--"):
            options.append(word)
            if word == "--login":
                letters.add("l")
            if word in _LONG_WITH_VALUE and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
            i += 1
            continue
        if len(word) > 1 and word[0] in "-+":
            options.append(word)
            for letter in word[1:]:
                if word[0] == "-":
                    letters.add(letter)
                if letter in _TAKES_VALUE and i + 1 < len(argv):
                    options.append(argv[i + 1])
                    i += 1
                    break
            i += 1
            continue
        break
    rest = tuple(argv[i:])
    command = script = None
    if "c" in letters:
        command = rest[0] if rest else ""
        rest = rest[1:]
    elif "s" not in letters and rest:
        script, rest = rest[0], rest[1:]
    return ShellCall(name, tuple(options), frozenset(letters), command, script, rest)
