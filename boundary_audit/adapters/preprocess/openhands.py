"""OpenHands (openhands-tools 1.58.2): the terminal tool's checks and rewrite before tmux.

`TerminalSession.execute` (openhands/tools/terminal/terminal/terminal_session.py:483-633)
strips the command, asks `split_bash_commands` (openhands/tools/terminal/utils/command.py:
115-152) whether it holds more than one top-level statement separated by a newline (then it
refuses: "Cannot execute multiple commands at once"), and rewrites it with
`escape_bash_special_chars` (command.py:155-195): `\\;`, `\\&`, `\\|`, `\\<`, `\\>` get their
backslash doubled outside strings, substitutions, expansions, here-document bodies and
comments. The doubling exists because tmux turns a trailing `\\;` of an argument into `;`; it
also changes any such pair elsewhere on the line. Both use tree-sitter-bash
(openhands/sdk/security/shell_parser.py, openhands-sdk 1.58.2) and leave the input alone when
the parse has errors. Reimplemented here on this project's tree-sitter-bash binding.

The study's cited OpenHands file is something else: the agent-canvas launcher parser
(`parseCommand`, src/utils/acp-command.ts), which splits the command line a person types into
argv for a spawn without a shell. `openhands.acp-parse-command` reimplements the tokenizer
whose layout matches the study's line ranges (11-45, 65-147; the f1816da34 version).
"""

from __future__ import annotations

import re
import shlex
from functools import cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged

PRESERVE_TYPES = frozenset(
    {
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "command_substitution",
        "expansion",
        "simple_expansion",
        "heredoc_body",
        "comment",
    }
)
"""Regions bash takes verbatim; the escape doubling never looks inside them."""
_ESCAPED_OPERATOR = re.compile(rb"\\([;&|<>])")


@cache
def _language() -> Language:
    return Language(tree_sitter_bash.language())


def parse(command: str) -> Tree:
    """A fresh tree-sitter-bash parse (a parser per call, as shell_parser.parse does)."""
    return Parser(_language()).parse(command.encode())


def _ends_with_heredoc(node: Node) -> bool:
    last = node
    while last.named_children:
        last = last.named_children[-1]
    return last.type == "heredoc_end" and last.end_byte == node.end_byte


def split_commands(command: str) -> list[str]:
    """`split_bash_commands`: top-level statements separated by a newline (not after a
    completed here-document); the input itself when the parse has errors."""
    if not command.strip():
        return [""]
    source = command.encode()
    root = parse(command).root_node
    if root.has_error:
        return [command]
    statements = [c for c in root.named_children if c.type != "comment"]
    if not statements:
        return [command]
    bounds = [statements[0].start_byte]
    for cur, nxt in zip(statements, statements[1:], strict=False):
        if b"\n" in source[cur.end_byte : nxt.start_byte] and not _ends_with_heredoc(cur):
            bounds.append(nxt.start_byte)
    bounds.append(len(source))
    return [source[a:b].decode().rstrip() for a, b in zip(bounds, bounds[1:], strict=False)]


def _preserved(root: Node) -> list[tuple[int, int]]:
    """Verbatim regions in source order (an explicit stack: deep input cannot overflow)."""
    found: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in PRESERVE_TYPES:
            found.append((node.start_byte, node.end_byte))
            continue
        stack.extend(reversed(node.children))
    return found


def escape_special_chars(command: str) -> str:
    """`escape_bash_special_chars`: double the backslash of `\\;` `\\&` `\\|` `\\<` `\\>`
    outside verbatim regions; unchanged when the parse has errors."""
    if command.strip() == "":
        return ""
    source = command.encode()
    tree = parse(command)
    if tree.root_node.has_error:
        return command
    out = bytearray()
    cursor = 0
    for start, end in _preserved(tree.root_node):
        out += _ESCAPED_OPERATOR.sub(rb"\\\\\1", source[cursor:start])
        out += source[start:end]
        cursor = end
    out += _ESCAPED_OPERATOR.sub(rb"\\\\\1", source[cursor:])
    return out.decode()


class SplitCommands(Preprocessor):
    """Strip R and refuse it when it holds several newline-separated statements."""

    name = "openhands.split-commands"
    cite = (
        "openhands-tools==1.58.2 openhands/tools/terminal/terminal/terminal_session.py:"
        "494,530-545; openhands/tools/terminal/utils/command.py:115-152"
    )
    summary = "strip; refuse more than one newline-separated top-level statement"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        command = text.strip()
        if command == "":
            return Staged.refuse("No previous running command to retrieve logs from.")
        parts = split_commands(command)
        if len(parts) > 1:
            return Staged.refuse(
                f"Cannot execute multiple commands at once ({len(parts)} statements)"
            )
        return Staged.one(command)


class EscapeSpecialChars(Preprocessor):
    """Double the backslash before `; & | < >` outside verbatim regions."""

    name = "openhands.escape-special-chars"
    cite = "openhands-tools==1.58.2 openhands/tools/terminal/utils/command.py:155-195"
    summary = "double the backslash of \\; \\& \\| \\< \\> outside quotes (for tmux's `\\;` rule)"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        out = escape_special_chars(text)
        return Staged.one(out, *(("backslashes doubled",) if out != text else ()))


def parse_acp_command(value: str) -> list[str]:
    """`parseCommand` of agent-canvas src/utils/acp-command.ts:65-147 (the argv tokenizer at
    the study's pin): whitespace splits; '...' is literal; "..." honours only \\" and \\\\;
    an unquoted backslash escapes the next character; every other character, operators and
    globs included, is literal text; an unterminated quote closes at the end."""
    tokens: list[str] = []
    # NOTE: the token is a list of pieces, joined once: `current += ch` on a str is quadratic
    # in the token's length here (a 1.6 MB word took 86 s).
    current: list[str] = []
    in_token, i, n = False, 0, len(value)
    while i < n:
        ch = value[i]
        if ch in " \t\n\r":
            if in_token:
                tokens.append("".join(current))
                current, in_token = [], False
            i += 1
        elif ch in "'\"":
            in_token = True
            i += 1
            while i < n and value[i] != ch:
                if ch == '"' and value[i] == "\\" and i + 1 < n and value[i + 1] in '"\\':
                    i += 1
                current.append(value[i])
                i += 1
            i += 1 if i < n else 0
        elif ch == "\\" and i + 1 < n:
            in_token = True
            current.append(value[i + 1])
            i += 2
        else:
            in_token = True
            current.append(ch)
            i += 1
    if in_token:
        tokens.append("".join(current))
    return tokens


class AcpParseCommand(Preprocessor):
    """Tokenize R as the Settings → Agent launcher does; hand the argv on, shlex-quoted.

    The output is `shlex.join(argv)`, so an `argv-shlex` transport spawns exactly that argv
    without a shell (shlex.split inverts shlex.join)."""

    name = "openhands.acp-parse-command"
    cite = "OpenHands/agent-canvas src/utils/acp-command.ts:11-45,65-147 (layout of f1816da34)"
    summary = "launcher tokenizer: quotes and backslashes honoured, operators kept as argv text"

    def apply(self, text: str, ctx: Context | None) -> Staged:
        argv = parse_acp_command(text)
        if not argv:
            return Staged.refuse("empty command (the Settings page does not save an empty argv)")
        return Staged.one(shlex.join(argv))
