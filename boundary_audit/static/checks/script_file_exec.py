"""Model output is written to a file that an interpreter then runs.

## What it does
Finds a write of a model-controlled value into a file (`open(p, "w").write(R)`,
`Path(p).write_text(R)`, `fs.writeFileSync(p, R)`, `std::fs::write(p, R)`,
`os.WriteFile(p, R, …)`, `echo "$x" > "$f"`, a tar member `tar.addfile(TarInfo(name=p),
BytesIO(R))` put into a container) and a spawn in the same file whose argv names that file
as the program an interpreter runs (`["sh", p]`, `["timeout", "60", interpreter, p]`,
`shlex.split(f"python {p}")`, `docker exec_run([...])`; not `python -c`, `node -e`,
`python -m`: `programs.INTERPRETER_FLAGS`). The path may come from a helper that writes the
file and returns it. The query finds the writes; the spawn is the primary location.

## Why is this bad?
It is usually the safe choice: the interpreter parses the file once and nothing is quoted.
It is reported so that a reviewer sees where generated code runs, which interpreter parses
it (`sh` is dash on Debian: no `[[`, no arrays), and what the harness rewrites on the way.

## Known problems
The file and the spawn are matched by the variables they are built from, by a shared file
handle (`f.name`), or by the same literal path; a path passed through another function
under a different name is missed.

## Example
```python
with open(path, "w") as f:
    f.write(code_block)
subprocess.run(["bash", path])
```

## Use instead
Keep it, and document the interpreter in the tool description.

## Options
None.

## References
- QuoteBench (arXiv:2608.13547), Table 8: AutoGen writes a temporary file and runs it.
"""

from __future__ import annotations

from collections.abc import Iterator

from boundary_audit.static.checks.base import Check, ClassRecord, Site, WriteSite, has
from boundary_audit.static.queries import Captures
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return ("script-sh" if has(text, r"['\"]sh['\"]") else "script-bash"), {}


class ScriptFileExec(Check):
    __doc__ = __doc__
    code = "BA302"
    name = "script-file-exec"
    classes = (BoundaryClass.SCRIPT_FILE,)
    record = ClassRecord(
        BoundaryClass.SCRIPT_FILE,
        rank=2,
        layers=("R written verbatim to a file", "the interpreter parses it"),
        fix="none needed for quoting; run it with the shell the model wrote for (bash, not sh)",
        severity=(Severity.LOW, Severity.INFO),
        transport=_transport,
        lossless=True,
    )
    phase = "aux"

    @classmethod
    def sites(cls, lang: str, caps: Captures) -> Iterator[Site]:
        """One WriteSite per match: `@arg` is the content, `@sink.file` the target or handle."""
        if "arg" not in caps or caps["arg"][0].type == "keyword_argument":
            return
        target = caps.get("sink.file", [None])[0]
        receiver = caps.get("sink.handle", [None])[0]
        yield WriteSite(cls.code, caps["span"][0], caps["arg"][0], target, receiver)
