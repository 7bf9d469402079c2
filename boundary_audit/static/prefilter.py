"""Byte-level prefilters: a file whose bytes cannot match any sink pattern skips the query pass.

Running the sink queries costs about half of parsing; most files of a real tree have no
process API at all. Each pattern in `queries/<dialect>/` needs some literal text to match (a
callee name, `shell=`, a quoted shell name...); the tokens here cover those texts for a
dialect, so at least one of them occurs in every file in which a sink query could match. A
registry test checks that on every fixture and specimen. Plain substring tests (`in`) are
used because they run at memory speed, unlike a regex alternation over the whole file. A
dialect without an entry is never skipped.
"""

from __future__ import annotations

_QUOTED_SHELL = (b"sh'", b'sh"', b"sh`")
_TMUX = (b"tmux",)

SINK_TOKENS: dict[str, tuple[bytes, ...]] = {
    "python": (
        b"shell",
        b"system",
        b"popen",
        b"getoutput",
        b"subprocess",
        b"run_process",
        b"stdin",
        b"communicate",
        b"input",
        b"send",
        b"session",
        b"exec",
        b"spawn",
        b"Popen",
        b"check_",
        b"run(",
        b"run (",
        b"call(",
        b"call (",
        b"sandbox",
        b"sbx",
        b"devbox",
        b"runtime",
        b"workspace",
        b"containers",
        *_QUOTED_SHELL,
        *_TMUX,
    ),
    "javascript": (
        b"exec",
        b"spawn",
        b"fork",
        b"stdin",
        b".write",
        b"$`",
        b"$ `",
        b".run",
        b"Cmd",
        *_QUOTED_SHELL,
        *_TMUX,
    ),
    "rust": (
        b".spawn",
        b".output",
        b".status",
        b".write",
        b".exec",
        b".shell",
        b".raw_command",
        b"ExecOptions",
        b"ExecConfig",
        *_QUOTED_SHELL,
        *_TMUX,
    ),
    "go": (
        b"Command",
        b"Stdin",
        b"Write",
        b"Fprint",
        b".Run",
        b".Output",
        b".CombinedOutput",
        b".Start",
        b"ExecOptions",
        b"ExecConfig",
        *_QUOTED_SHELL,
        *_TMUX,
    ),
}
"""Per query dialect: substrings at least one of which every file with a sink match contains."""


def may_have_sinks(dialect: str, data: bytes) -> bool:
    """False only if no sink pattern of `dialect` can match `data`."""
    tokens = SINK_TOKENS.get(dialect)
    return tokens is None or any(t in data for t in tokens)
