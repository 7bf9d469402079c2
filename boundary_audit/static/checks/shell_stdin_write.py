"""Model output is written to the stdin of a one-shot shell.

## What it does
Finds writes into the standard input of a process that is a shell reading its script from
stdin: `Popen(["bash"], stdin=PIPE).communicate(input=R)`, `subprocess.run(["sh"], input=R)`,
`proc.stdin.write(R)` followed by closing stdin, Node's `child.stdin.write(R)` and `end(R)`,
Rust `child.stdin.write_all(R)`, Go `cmd.Stdin = strings.NewReader(R)`, and
`echo "$x" | bash` or `bash <<< "$x"` in shell scripts. The receiving process is resolved
through the dataflow engine; a write to a process that is not a shell is not reported.

## Why is this bad?
The shell parses R once, like `bash -c R`, but R and the commands' own stdin are the same
stream: a command in R that reads stdin (`cat`, `read`, `ssh`, `python -`) consumes the rest
of R, which then never runs. Exit codes and partial execution are easy to misread.

## Known problems
A write whose receiver cannot be resolved is classified by where it happens: through an
attribute of `self` it is a session (BA202), otherwise one-shot stdin.

## Example
```python
proc = subprocess.Popen(["bash"], stdin=subprocess.PIPE)
proc.communicate(input=reply.encode())
```

## Use instead
```python
subprocess.run(["bash", "-c", reply], stdin=subprocess.DEVNULL)
```

## Options
None.

## References
- CWE-78.
- QuoteBench (arXiv:2608.13547), Table 7: "shell stdin" command-boundary representation.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return "stdin", {}


class ShellStdinWrite(Check):
    __doc__ = __doc__
    code = "BA201"
    name = "shell-stdin-write"
    classes = (BoundaryClass.SHELL_STDIN,)
    record = ClassRecord(
        BoundaryClass.SHELL_STDIN,
        rank=3,
        layers=(
            "R written to a one-shot shell's stdin",
            "the shell reads its script from that stdin",
        ),
        fix="pass R as `bash -c R` or a script file; give the command its own stdin (/dev/null)",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
    )
