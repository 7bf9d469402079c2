"""Project-local shell-quoting helpers, recognised by what they do.

Harnesses often carry their own `shellQuote(value)` (`'${value.replace(/'/g, "'\\''")}'`)
instead of a library's. A function whose name says it quotes or escapes and whose body holds
the POSIX single-quote idiom (`'\\''` or `'"'"'`) yields one shell word, like `shlex.quote`:
its calls are sanitizers (`knowledge.QUOTING_HELPER`). Found by text over a file or the
corpus of a language family, once; a name only counts if some definition of it does this.
"""

from __future__ import annotations

import re
from functools import lru_cache

IDIOMS = (b"'\\\\''", b"'\\''", b"'\"'\"'", b"'\\\"'\\\"'")
"""The POSIX idiom for a single quote inside single quotes (`'\\''`, `'"'"'`), as source
text spells it (backslashes escaped or not)."""
_NAME = re.compile(r"quote|escape", re.IGNORECASE)
_HEADERS = {
    "py": rb"\bdef\s+([A-Za-z_]\w*)\s*\(",
    "js": rb"(?:\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("
    rb"|\b([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?"
    rb"(?:function\b|\([^()]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)"
    rb"|^\s*(?:export\s+)?(?:(?:public|private|protected|static|async)\s+)*"
    rb"([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*(?::[^{]*)?\{)",
    "go": rb"\bfunc\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(",
    "rs": rb"\bfn\s+([A-Za-z_]\w*)\s*[<(]",
}
_REACH = 400
"""How far before the idiom the helper's header may be (a helper is short)."""


@lru_cache(maxsize=32)
def find(data: bytes, family: str | None) -> frozenset[str]:
    """Names of the quoting helpers defined in `data` (files of one language family); the
    last files' answers are kept (each engine of a file asks, and the cross-file pass makes
    several for one file)."""
    pattern = _HEADERS.get(family or "")
    if pattern is None or not any(i in data for i in IDIOMS):
        return frozenset()
    header = re.compile(pattern, re.MULTILINE)
    out: set[str] = set()
    for idiom in IDIOMS:
        at = data.find(idiom)
        while at >= 0:
            window = data[max(0, at - _REACH) : at]
            names = [
                next((g for g in m.groups() if g), b"").decode() for m in header.finditer(window)
            ]
            if names and _NAME.search(names[-1]):
                out.add(names[-1])
            at = data.find(idiom, at + len(idiom))
    return frozenset(out)
