"""An inline suppression gives no reason, so it does not suppress.

## What it does
Reads comments of the form `boundary-audit: ignore[BA101] <reason>` (after `#` in Python
and shell, `//` in JavaScript, TypeScript, Rust and Go) on the line of a finding or the line
above it. A suppression with a reason marks the finding as suppressed (it stays in the
report, counted separately). One without a reason suppresses nothing and is reported here,
with the boundary class of the finding it tried to hide.

## Why is this bad?
A suppression is a reviewed decision; without the reason, the next reviewer cannot tell a
checked boundary from a silenced one.

## Known problems
A suppression that matches no finding is ignored silently.

## Example
```python
subprocess.run(cmd, shell=True)  # boundary-audit: ignore[BA101]
```

## Use instead
```python
subprocess.run(cmd, shell=True)  # boundary-audit: ignore[BA101] cmd is a fixed admin command
```

## Options
`--no-ignores` disregards every inline suppression.

## References
- zizmor's `# zizmor: ignore[rule]` and bandit's `# nosec`, which inspired the syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from boundary_audit.static.checks.base import Check, CommentSite, Site
from boundary_audit.static.queries import Captures


class SuppressionWithoutReason(Check):
    __doc__ = __doc__
    code = "BA901"
    name = "suppression-without-reason"
    classes = ()
    phase = "guarded"
    guard = re.compile(rb"boundary-audit:")

    @classmethod
    def sites(cls, lang: str, caps: Captures) -> Iterator[Site]:
        """One CommentSite per comment mentioning `boundary-audit:`."""
        yield CommentSite(cls.code, caps["span"][0])
