"""A command string reaches a shell: `bash -c R`, `shell=True`, `os.system`, `exec()`.

## What it does
Finds places where a string is handed to a local shell to parse: `subprocess.run(s,
shell=True)`, `os.system(s)`, `os.popen(s)`, `asyncio.create_subprocess_shell(s)`, Node's
`child_process.exec`/`execSync` and `spawn(..., {shell: true})`, an argv whose head is a shell
with `-c` (`["bash", "-lc", s]`, `Command::new("bash").arg("-c").arg(s)`,
`exec.Command("sh", "-c", s)`), and `bash -c "$x"`, `sh -c`, `eval "$x"` in shell scripts.
When the string traces back to model output, the model's reply R is parsed by exactly one
shell before `execve`: the `shell-string` boundary.

## Why is this bad?
It is the raw transport most harnesses use, and usually the intended one: one parse, as the
model expects. It is reported so that a reviewer sees every place the reply is executed, and
because it is the base on which nested boundaries are built. Anything that wraps R again
before this shell (quotes, `ssh`, `docker exec`) turns it into `nested-string` (BA102).

## Known problems
The shell is assumed to be POSIX-like (bash/sh/zsh); `cmd /c` and PowerShell are not
recognised. A string whose provenance is unknown (not traced to model output, not constant)
is reported with `model_controlled = false` and low confidence.

## Example
```python
reply = client.chat.completions.create(...).choices[0].message.content
subprocess.run(["bash", "-lc", reply])
```

## Use instead
Nothing, if one shell parse is what the model was told about. Record the contract in the
tool description ("your command runs as `bash -lc R`"), and never wrap R again.

## Options
`--include-constant` also lists shell strings built only from literals.

## References
- CWE-78: Improper Neutralization of Special Elements used in an OS Command.
- QuoteBench (arXiv:2608.13547), Table 8: Codex runs `shell -lc R`.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord, has
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    posix = has(
        text,
        r"shell\s*=\s*True",
        r"['\"](/bin/)?sh['\"]",
        r"\bexecSync?\(",
        r"os\.(system|popen)",
    )
    flags = "-lc" if has(text, r"['\"]-lc['\"]", r"['\"]-l['\"]") else "-c"
    return "raw", {"shell": "sh" if posix else "bash", "flags": flags}


class ShellStringSink(Check):
    __doc__ = __doc__
    code = "BA101"
    name = "shell-string-sink"
    classes = (BoundaryClass.SHELL_STRING,)
    record = ClassRecord(
        BoundaryClass.SHELL_STRING,
        rank=6,
        layers=("one shell parses R as its -c string",),
        fix="none needed for quoting: one parse of the model's own string",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
        lossless=True,
    )
