"""Byte-level prefilters: a file whose bytes cannot match any sink pattern skips the query pass.

Running the sink queries costs about two thirds of parsing; most files of a real tree have no
process API at all. Each pattern in `queries/<dialect>/` needs some literal text to match (a
callee name, `shell=`, a quoted shell name...); the regex here is the union of those texts
for a dialect, so it must match every file in which a sink query could match. A registry
test checks that on every fixture and specimen. A dialect without an entry is never skipped.
"""

from __future__ import annotations

import re

_SHELL_WORD = rb"""['"`](?:/usr)?(?:/local)?(?:/bin/)?(?:env )?(?:ba|z|da|k|a)?sh['"`]"""
_TMUX_WORD = rb"""['"`](?:/usr)?(?:/bin/)?tmux['"`]"""

SINK_PREFILTER: dict[str, re.Pattern[bytes]] = {
    "python": re.compile(
        rb"shell\s*=|system|popen|getoutput|subprocess|run_process|stdin|communicate|input\s*="
        rb"|send|session|exec|spawn|Popen|check_|\b(?:run|call)\s*\(|sandbox|sbx|devbox|runtime"
        rb"|workspace|containers|" + _SHELL_WORD + rb"|" + _TMUX_WORD
    ),
    "javascript": re.compile(
        rb"exec|spawn|fork|stdin|\.write\s*\(|\$\s*`|\.run\s*\(|Cmd\b|"
        + _SHELL_WORD
        + rb"|"
        + _TMUX_WORD
    ),
    "rust": re.compile(
        rb"\.(?:spawn|output|status|write_all|write|exec|shell|raw_command)\s*\(|Exec(?:Options|Config)"
        rb"|" + _SHELL_WORD + rb"|" + _TMUX_WORD
    ),
    "go": re.compile(
        rb"Command|Stdin|Write|Fprint|\.(?:Run|Output|CombinedOutput|Start)\s*\(|Exec(?:Options|Config)"
        rb"|" + _SHELL_WORD + rb"|" + _TMUX_WORD
    ),
}
"""Per query dialect: a regex every file with a possible sink match contains."""


def may_have_sinks(dialect: str, data: bytes) -> bool:
    """False only if no sink pattern of `dialect` can match `data`."""
    pattern = SINK_PREFILTER.get(dialect)
    return pattern is None or pattern.search(data) is not None
