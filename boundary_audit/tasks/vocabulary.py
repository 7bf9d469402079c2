"""The fixed vocabularies task files are checked against: hazards, core families, boundary tags.

A task names the hazards its payload carries from `HAZARDS` (a typo is a load error, so that
reports can group by hazard). The 14 core families and the mechanism group of each follow the
QuoteBench study's Table 7. Tasks outside the core carry exactly one `boundary=<kind>` tag
from `BOUNDARY_KINDS`, naming the boundary they are built to expose.
"""

from __future__ import annotations

from types import MappingProxyType

HAZARDS: MappingProxyType[str, str] = MappingProxyType(
    {
        "single-quote": "an apostrophe / single quote (') in the payload",
        "double-quote": 'a double quote (") in the payload',
        "dollar": "a $ that must stay literal (variable or positional-parameter look-alike)",
        "backtick": "a backtick (`) that must stay literal",
        "command-substitution": "a literal $(...) that must not run",
        "backslash": "a backslash that must survive as a byte",
        "bang": "a ! that history expansion may rewrite in an interactive shell",
        "percent": "a % that printf would read as a directive",
        "newline": "a newline inside one string, argument or value",
        "tab": "a TAB character in the payload",
        "leading-dash": "a file name or argument that starts with -",
        "space": "a space inside one argument or file name that word splitting would cut",
        "newline-in-name": "a newline inside a file name",
        "glob": "*, ? or [ ] that must not expand, or must expand only where intended",
        "regex-meta": "regular-expression metacharacters meant literally (. * [ ] ( ) etc.)",
        "sed-delimiter": "the sed s/// delimiter (/) inside the pattern or replacement",
        "sed-replacement": "& or \\ in a sed replacement, which sed reads specially",
        "awk-escape": "backslash escapes that awk -v would process",
        "non-ascii": "UTF-8 text outside ASCII",
        "empty-string": "an empty argument or value that must be passed, not dropped",
        "heredoc-delimiter": "a payload line equal to the usual heredoc delimiter (EOF)",
        "local-expansion": "a $ or command meant for the remote side that the local shell expands",
        "local-redirect": "a redirect or pipe meant for the remote side, done by the local shell",
        "tilde": "a ~ whose expansion depends on which side expands it",
        "control-char": "a control character (ESC, BEL, ...) in the payload",
        "stdin-reader": "a command in the middle of the reply that reads standard input",
        "session-exit": "an exit that ends the shell the reply runs in",
        "errexit": "set -e, which makes any failing command end the shell",
        "exec-redirect": "exec with a redirect, which rewires the shell's own output",
        "session-cd": "a cd that outlives the reply in a persistent shell",
        "shell-operator": "pipes, redirects or && that need a shell to mean anything",
        "long-line": "a reply line or argument longer than common transport limits",
        "no-trailing-newline": "output that does not end in a newline",
        "echo-flag": "echo -n / -e, whose meaning differs between bash and sh",
        "bashism": "bash-only syntax (brace expansion, $'...', [[ ]], arrays) unknown to sh",
    }
)
"""Every hazard a task may declare, with the one-line meaning shown by `tasks show`."""

CORE_FAMILIES: MappingProxyType[str, str] = MappingProxyType(
    {
        "write-file": "literal-quote",
        "json-write": "literal-quote",
        "git-commit": "literal-quote",
        "env-pass": "literal-quote",
        "heredoc-write": "literal-quote",
        "argv-pass": "word-splitting",
        "hostile-filenames": "word-splitting",
        "find-glob": "word-splitting",
        "bulk-rename": "word-splitting",
        "grep-count": "embedded-language",
        "sed-replace": "embedded-language",
        "awk-field": "embedded-language",
        "ssh-nested": "second-parser",
        "ssh-heredoc": "second-parser",
    }
)
"""The 14 operation families of the 56-task core, each mapped to its Table 7 mechanism group."""

MECHANISM_GROUPS: MappingProxyType[str, str] = MappingProxyType(
    {
        "literal-quote": "literal quote and expansion",
        "word-splitting": "word splitting and path semantics",
        "embedded-language": "embedded-language escaping",
        "second-parser": "second parser or remote-like expansion",
    }
)

BOUNDARY_KINDS: MappingProxyType[str, str] = MappingProxyType(
    {
        "stdin": "a command that reads stdin eats the rest of a reply fed through stdin",
        "tty": "keystroke transports: tabs, control characters, history expansion",
        "session": "persistent sessions: exit, set -e, exec redirects outlive the reply",
        "argv": "no shell runs: pipes, redirects, && and globs are inert text",
        "long": "replies past transport size limits (16 KiB, 128 KiB)",
        "newline": "output without a trailing newline meets line-based end markers",
        "interpreter": "the reply runs under sh (dash), not bash: bash-only syntax breaks",
    }
)
"""Values of the `boundary=<kind>` tag that every task outside the core carries."""

CORE_TIERS = (0, 1, 2, 3)
"""Tier 0 is a control without hazards; tiers 1-3 are increasingly hostile."""

CORE_PATHS = ("raw", "nested")
"""Where a core task's naive reply may be declared to break."""
