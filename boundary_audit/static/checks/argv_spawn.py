"""Model output is split into words and spawned without a shell.

## What it does
Finds process spawns that take an argv (`subprocess.run(list)`, `os.execvp`,
`asyncio.create_subprocess_exec`, Node's `spawn`/`execFile`/`execa`, Rust
`Command::new(p).args(...)`, Go `exec.Command(p, args...)`, `$cmd` unquoted in a shell
script) and reports those where the model chooses the argv: the reply was tokenized
(`shlex.split(R)`, `R.split()`, `shell-quote`'s `parse`, `execaCommand`,
`strings.Fields`) or the program itself comes from the model (a JSON array from a tool call).
The argv shapes that carry another boundary are classified as that boundary instead: a
shell with `-c` (BA101), `ssh` (BA401), `tmux send-keys` (BA203), an interpreter running a
file written with model output (BA302).

## Why is this bad?
There is no shell: pipes, redirections, `&&`, `$(...)`, globs and `~` are passed to the
program as literal words, and quoting follows the tokenizer's rules, not bash's. A reply
written for a shell silently means something else (`a | b` runs `a` with arguments `|` and
`b`).

## Known problems
An argv with a literal program and model-controlled *arguments* only (`["git", "commit",
"-m", message]`) is not a command boundary and is not reported by default; neither is a
constant argv (`["git", "rev-parse", "HEAD"]`). Both appear with `--include-constant`.

## Example
```python
subprocess.run(shlex.split(tool_args["command"]))
```

## Use instead
Tell the model the contract ("argv, no shell") or run the reply through `bash -c`.

## Options
`--include-constant` lists constant and fixed-program argv spawns as well.

## References
- CWE-88: Improper Neutralization of Argument Delimiters in a Command.
- QuoteBench (arXiv:2608.13547), Table 8: OpenHands' launcher tokenizes then spawns.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord, has
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    # NOTE: the tokenizer is usually defined away from the spawn: the whole file hints too.
    hints = f"{text}\n{file_text}"
    if has(hints, r"shell-quote", r"shellQuote", r"shell_quote"):
        return "argv-shell-quote", {}
    return (
        "argv-split" if has(hints, r"\.split\(\s*\)", r"split_whitespace") else "argv-shlex"
    ), {}


class ArgvSpawn(Check):
    __doc__ = __doc__
    code = "BA301"
    name = "argv-spawn"
    classes = (BoundaryClass.ARGV_DIRECT,)
    record = ClassRecord(
        BoundaryClass.ARGV_DIRECT,
        rank=1,
        layers=("a tokenizer splits R into argv", "spawn without a shell"),
        fix="ask the model for an argv array, or run R with `bash -c` on purpose",
        severity=(Severity.LOW, Severity.INFO),
        transport=_transport,
    )
