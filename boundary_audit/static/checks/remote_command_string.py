"""Model output is handed as one command string to a remote shell or sandbox.

## What it does
Finds commands sent to another machine or container as a string: `["ssh", host, R]` (and
`ssh host "$x"` in scripts), paramiko's `exec_command(R)`, asyncssh's `conn.run(R)`, Go
`session.Run(R)` on an ssh session, ssh2's `conn.exec(R)`, `docker exec c sh -c R` and the
Docker SDK's `exec_run(["sh", "-c", R])`, and sandbox APIs that take a command string on
receivers named like a sandbox (`sandbox.exec(R)`, `sandbox.commands.run(R)`,
`sandbox.process.exec(R)`, `runtime.run_command(R)`).

## Why is this bad?
The remote side runs R through its own shell (one parse), but not the local one: its shell,
environment, working directory and installed tools differ. `ssh` additionally joins its
arguments with spaces, so an argv-looking call is really a string. Wrapping R again on the
way makes `nested-string` (BA102).

An argv given to a container or sandbox exec API is this class too (the taxonomy's
convention: every container and sandbox exec API is `remote-string`), but its route is the
argv's: the Docker SDK's `exec_run("string")` splits the string with `shlex` and runs it
without a shell, so it is replayed as `argv-shlex`, 0 shell parses, with argv-direct's
severity; the message says "no shell there".

## Known problems
Sandbox receivers are matched by name (`sandbox`, `sbx`, `devbox`, `container`, `runtime`,
`workspace`).

## Example
```python
stdin, stdout, stderr = client.exec_command(action.command)
```

## Use instead
Keep one remote parse and say so in the tool description; never quote R into another string.

## Options
None.

## References
- CWE-78.
- QuoteBench (arXiv:2608.13547), Table 9: real-ssh damage equals synthetic nested damage.
"""

from __future__ import annotations

from boundary_audit.static.checks.base import Check, ClassRecord, has
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return ("docker" if has(text, r"docker", r"exec_run", r"containers?\.") else "ssh"), {}


class RemoteCommandString(Check):
    __doc__ = __doc__
    code = "BA401"
    name = "remote-command-string"
    classes = (BoundaryClass.REMOTE_STRING,)
    record = ClassRecord(
        BoundaryClass.REMOTE_STRING,
        rank=7,
        layers=("R handed as one string to a remote runner", "the remote shell parses it"),
        fix="quote R for the remote shell (shlex.quote), or send a script file",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
    )
