"""Model output is typed as keystrokes into an interactive shell.

## What it does
Finds text sent as keys to a terminal: `tmux send-keys` in an argv (`["tmux", "send-keys",
"-t", s, R, "Enter"]`, in Python, JavaScript, Rust, Go or a shell script), libtmux's
`pane.send_keys(R)`, and `write(R)` on a node-pty terminal.

## Why is this bad?
Before bash sees R, the terminal acts on it: tmux may read an argument as a key name
(`Enter`, `C-c`) or end its own command at a trailing `;` unless `-l` is given; the tty line
discipline turns control characters into signals; readline completes on tabs, expands `!`
history and wraps long lines. A command that passes through `bash -c` can fail when typed.

## Known problems
`-l` (literal) is recorded in the detail but still reported: it does not stop the line
discipline or readline.

## Example
```python
subprocess.run(["tmux", "send-keys", "-t", session, keystrokes, "Enter"])
```

## Use instead
Write the command to a file and send only a fixed `bash /path/file` line, or use a
non-interactive transport.

## Options
None.

## References
- QuoteBench (arXiv:2608.13547), Table 8: Terminal-Bench and OpenHands send keys via tmux.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord, has
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    literal = has(text, r"['\"]-l['\"]", r"literal\s*=\s*True")
    return ("tmux-literal" if literal else "tmux-keys"), {}


class TtyKeystrokes(Check):
    __doc__ = __doc__
    code = "BA203"
    name = "tty-keystrokes"
    classes = (BoundaryClass.TTY_KEYSTROKES,)
    record = ClassRecord(
        BoundaryClass.TTY_KEYSTROKES,
        rank=5,
        layers=(
            "tmux argv parse and key names",
            "pty line discipline",
            "readline",
            "interactive shell",
        ),
        fix="write R to a script file and type only `bash FILE`; send text with `send-keys -l`",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
    )
