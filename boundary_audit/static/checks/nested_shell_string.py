"""Model output is quoted into a command string that a second shell parses again.

## What it does
Finds a hole for an unknown value inside a literal that launches a second parser: the
script of `bash -c "..."`, the remote command of `ssh host '...'`, `eval "..."`,
`docker exec c sh -c "..."`, `su -c`, or `tmux send-keys "..."`, when that string is itself
parsed by a shell (a `shell=True` string, the command of `ssh`, text written into a shell's
stdin or pane). The query finds string literals that launch such a parser; the engine
checks that a value sits inside its argument without a shell quote at the interpolation
point (`shlex.quote`, `shell-quote`, `shell-escape`, `printf %q`...).

A value of the model spliced only inside the quotes of a command string (`f"rg '{q}' ."`,
`"ssh h '" + R + "'"`, a `Command::Shell(format!("fd '{name}'"))` run in a sandbox) is this
class as well, with no second parser: one shell parses it, but a quote in R ends the quoting
the harness meant. Its route is that shell's (local or remote), with R inside those quotes.
An unquoted hole of the model decides for the shell's own class (BA101 or BA401).

## Why is this bad?
The reply is parsed twice: the first shell expands `$`, backticks and backslashes inside
double quotes, ends the string at the reply's own quote character, or word-splits it; the
second shell runs what is left. QuoteBench measured 55–73 percentage points of damage from
exactly one such added double-quote wrapper, on commands that pass when run once.

## Known problems
Only literals that contain the launching words are recognised; a launcher assembled from
variables is missed. A quote function applied inside double quotes (`"{shlex.quote(x)}"`)
is reported: it does not protect there.

## Example
```python
cmd = json.loads(call.function.arguments)["command"]
subprocess.run(["bash", "-c", f'ssh {host} "{cmd}"'])
```

## Use instead
```python
subprocess.run(["ssh", host, cmd])              # one remote parse
subprocess.run(f"ssh {host} {shlex.quote(cmd)}", shell=True)
```

## Options
None.

## References
- CWE-78 and CWE-88 (argument injection).
- QuoteBench (arXiv:2608.13547), Tables 4 and 9: nested and real-ssh damage.
"""

from __future__ import annotations

from collections.abc import Iterator

from boundary_audit.static.checks.base import Check, ClassRecord, Site, TemplateSite
from boundary_audit.static.queries import Captures
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return ("nested-escaped" if sanitized else "nested"), {}


class NestedShellString(Check):
    __doc__ = __doc__
    code = "BA102"
    name = "nested-shell-string"
    classes = (BoundaryClass.NESTED_STRING,)
    record = ClassRecord(
        BoundaryClass.NESTED_STRING,
        rank=8,
        layers=(
            "R pasted into a larger quoted command",
            "the outer shell parses it",
            "an inner shell parses R again",
        ),
        fix="shlex.quote(R) at the interpolation point, or a temp script",
        severity=(Severity.HIGH, Severity.MEDIUM),
        transport=_transport,
    )
    phase = "aux"

    @classmethod
    def sites(cls, lang: str, caps: Captures) -> Iterator[Site]:
        """One TemplateSite per string literal that launches a second parser."""
        yield TemplateSite(cls.code, caps["span"][0])
