"""Model output is sent into a persistent shell session.

## What it does
Finds commands sent into a long-lived shell: writes to the stdin of a shell process kept on
an object (`self.proc.stdin.write(R)`), `pexpect`'s `sendline(R)`/`send(R)` to a spawned
shell, and session APIs such as SWE-ReX's `run_in_session(BashAction(command=R))`.

## Why is this bad?
R is parsed once, but the session outlives it: `cd`, `export`, `set -e`, traps and aliases
persist into the next command; `exit` kills the session; an unterminated quote or heredoc
swallows the end marker the harness waits for, so the command "times out"; a command that
reads stdin eats the next command. Through a pty, the line discipline also acts on control
characters.

## Known problems
`send`/`sendline` are recognised on `pexpect` handles and on receivers the engine cannot
resolve; a `pexpect` process that is not a shell (a Python REPL) is not reported.

## Example
```python
self.shell = pexpect.spawn("/bin/bash", echo=False)
...
self.shell.sendline(action)
```

## Use instead
Run each command as its own `bash -c R` process, or detect the session hazards (`exit`,
open quotes, stdin readers) before sending.

## Options
None.

## References
- CWE-78.
- QuoteBench (arXiv:2608.13547), Table 8: SWE-agent's persistent Bash session.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord, has
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return ("session" if has(text, r"pexpect", r"\bpty\b", r"sendline") else "session-pipe"), {}


class ShellSessionInput(Check):
    __doc__ = __doc__
    code = "BA202"
    name = "shell-session-input"
    classes = (BoundaryClass.SHELL_SESSION,)
    record = ClassRecord(
        BoundaryClass.SHELL_SESSION,
        rank=4,
        layers=(
            "R written into a persistent shell",
            "end-of-output marker",
            "the shell parses R; state and stdin persist",
        ),
        fix="run each reply as its own process (or a script file) with stdin at /dev/null; "
        "keep markers on a side channel",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
    )
