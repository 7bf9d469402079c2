"""How a shell (or a JSON reader) will see the unknown pieces of a string template.

`shell_holes(str_value)` lexes a template the way a POSIX shell tokenizes a command line,
treating each `Hole` as opaque text, and reports for every hole its quote state and whether
it sits where a *second* parser will read it: the script of `bash -c`, anything after the
host of `ssh`, `eval`'s arguments, the command of `docker exec`/`kubectl exec`, `su -c`, or
the keys of `tmux send-keys`. `json_holes` does the same for JSON string literals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from boundary_audit.static import programs as P
from boundary_audit.static.values import Hole, Str, Text

_OPERATORS = frozenset(";&|\n()`")
_SSH_ARG_OPTS = frozenset("bcDEeFIiJLlmOopQRSWw")
_DOCKER_ARG_OPTS = frozenset(
    {
        "-e",
        "--env",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "-v",
        "--volume",
        "--name",
        "--env-file",
        "-p",
        "--network",
        "--entrypoint",
        "-h",
        "--hostname",
        "--mount",
        "--platform",
        "-c",
        "--container",
    }
)


@dataclass(frozen=True)
class Inner:
    """A second parser found in a command line: its name and the boundary family it implies."""

    parser: str
    """`bash -c`, `ssh`, `eval`, `docker exec … sh -c`, `tmux send-keys`, `su -c`."""
    family: str
    """`shell`, `remote` or `tty`."""
    text: Text | None = None
    """The literal piece that launches the second parser (for the related location)."""


@dataclass(frozen=True)
class HoleContext:
    """Where one hole of a template sits for the shell that parses the template."""

    hole: Hole
    quote: str
    """`none`, `single` or `double`."""
    inner: Inner | None
    """The second parser that will read the hole, if any."""


@dataclass
class _Word:
    text: str
    piece: Text | None


def shell_holes(value: Str) -> list[HoleContext]:
    """The context of every hole of `value` as one POSIX shell command line."""
    out: list[HoleContext] = []
    words: list[_Word] = []
    cur: list[str] = []
    cur_piece: Text | None = None
    quote = "none"
    escaped = False

    def end_word() -> None:
        nonlocal cur, cur_piece
        if cur:
            words.append(_Word("".join(cur), cur_piece))
        cur, cur_piece = [], None

    for piece in value.pieces:
        if isinstance(piece, Hole):
            out.append(HoleContext(piece, quote, command_parser(words)))
            cur.append("\0")
            continue
        for ch in piece.text:
            if escaped:
                cur.append(ch)
                escaped = False
            elif quote == "single":
                if ch == "'":
                    quote = "none"
                else:
                    cur.append(ch)
            elif quote == "double":
                if ch == '"':
                    quote = "none"
                elif ch == "\\":
                    escaped = True
                else:
                    cur.append(ch)
            elif ch == "\\":
                escaped = True
            elif ch in "'\"":
                quote = "single" if ch == "'" else "double"
                cur_piece = cur_piece or piece
            elif ch in " \t":
                end_word()
            elif ch in _OPERATORS:
                end_word()
                words = []
            else:
                cur_piece = cur_piece or piece
                cur.append(ch)
    return out


def command_parser(words: list[_Word]) -> Inner | None:
    """The second parser that reads the next word of the command `words` begins, if any."""
    i = P.skip_wrappers([w.text for w in words])
    if i >= len(words):
        return None
    prog, piece = P.program_name(words[i].text), words[i].piece
    rest = words[i + 1 :]
    if prog in P.SHELLS:
        for j, w in enumerate(rest):
            if w.text.startswith("-") and not w.text.startswith("--") and "c" in w.text[1:]:
                return Inner(f"{prog} {w.text}", "shell", piece) if j == len(rest) - 1 else None
        return None
    if prog == "eval":
        return Inner("eval", "shell", piece)
    if prog == "ssh":
        return _ssh(rest, piece)
    if prog in ("docker", "podman") and rest and rest[0].text in ("exec", "run"):
        inner = _after_container(rest[1:])
        return (
            None
            if inner is None
            else Inner(f"{prog} {rest[0].text} … {inner.parser}", "remote", piece)
        )
    if prog == "kubectl" and rest and rest[0].text == "exec":
        dash = next((j for j, w in enumerate(rest) if w.text == "--"), None)
        inner = command_parser(rest[dash + 1 :]) if dash is not None else None
        return None if inner is None else Inner(f"kubectl exec … {inner.parser}", "remote", piece)
    if prog in ("su", "runuser") and any(w.text in ("-c", "--command") for w in rest):
        return Inner(f"{prog} -c", "shell", piece) if rest[-1].text in ("-c", "--command") else None
    if prog == "tmux" and rest and rest[0].text in ("send-keys", "send"):
        return Inner("tmux send-keys", "tty", piece)
    return None


def _ssh(rest: list[_Word], piece: Text | None) -> Inner | None:
    j = 0
    while j < len(rest) and rest[j].text.startswith("-"):
        flag = rest[j].text
        j += 2 if len(flag) == 2 and flag[1] in _SSH_ARG_OPTS else 1
    if j < len(rest):
        return Inner("ssh", "remote", piece)
    return None


def _after_container(rest: list[_Word]) -> Inner | None:
    j = 0
    while j < len(rest) and rest[j].text.startswith("-"):
        j += 2 if rest[j].text in _DOCKER_ARG_OPTS else 1
    j += 1
    return command_parser(rest[j:]) if j <= len(rest) else None


@dataclass(frozen=True)
class JsonHole:
    """A hole of a JSON-looking template: inside a string literal or not, and under which key."""

    hole: Hole
    in_string: bool
    key: str | None = None
    """The object key whose value the hole is part of, if one precedes it."""


_KEY = re.compile(r'\\?"([A-Za-z_][A-Za-z0-9_]*)\\?"\s*:[^,{}]*$')


def looks_like_json(value: Str) -> bool:
    """True if the template's literal text opens a JSON object or array with a quoted key."""
    text = "".join(p.text if isinstance(p, Text) else "\0" for p in value.pieces).lstrip()
    return text[:1] in "{[" and '":' in text.replace('" :', '":')


def json_holes(value: Str) -> list[JsonHole]:
    """For each hole of a JSON-looking template, whether it lies inside a string literal."""
    out: list[JsonHole] = []
    in_string = False
    escaped = False
    seen = ""
    for piece in value.pieces:
        if isinstance(piece, Hole):
            m = _KEY.search(seen)
            out.append(JsonHole(piece, in_string, m.group(1) if m else None))
            escaped = False
            seen += "\0"
            continue
        seen += piece.text
        for ch in piece.text:
            if escaped:
                escaped = False
            elif ch == "\\" and in_string:
                escaped = True
            elif ch == '"':
                in_string = not in_string
    return out
