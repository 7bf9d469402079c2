r"""Model output is embedded in JSON: by string concatenation, or by a serializer.

## What it does
Finds JSON text built by hand around a model-controlled value (`'{"cmd": "' + cmd + '"}'`,
an f-string or template literal that opens a JSON object with a quoted key) where the value
lands inside a JSON string without being escaped. Also reports, as informational, a value
serialized by a real serializer (`json.dumps`, `JSON.stringify`, `serde_json::to_string`,
`json.Marshal`) that is then written into a process (stdin of a server, an argv element).

## Why is this bad?
A reply containing `"`, `\` or a newline ends the JSON string early or makes the document
invalid: the receiver gets a different command or none. A serializer is correct; it is
listed so the reviewer sees the boundary and can check the receiving side decodes it once.

## Known problems
A template is recognised as JSON only if its literal text starts with `{` or `[` and has a
quoted key. Values of unknown provenance are not reported here (only model-controlled or
command-named values are).

## Example
```python
payload = '{"command": "' + action + '"}'
```

## Use instead
```python
payload = json.dumps({"command": action})
```

## Options
None.

## References
- CWE-116: Improper Encoding or Escaping of Output.
- QuoteBench (arXiv:2608.13547), Table 7: JSON writing, provider tool schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from boundary_audit.static.checks.base import Check, ClassRecord, Site, TemplateSite
from boundary_audit.static.queries import Captures
from boundary_audit.taxonomy import BoundaryClass, Severity


def _transport(text: str, file_text: str, sanitized: bool) -> tuple[str, dict[str, object]]:
    return ("json-correct" if sanitized else "json-naive"), {}


class SerializedCommand(Check):
    __doc__ = __doc__
    code = "BA501"
    name = "serialized-command"
    classes = (BoundaryClass.SERIALIZED,)
    record = ClassRecord(
        BoundaryClass.SERIALIZED,
        rank=0,
        layers=(
            "R embedded in a JSON document",
            "the document is decoded",
            "a shell parses the decoded string",
        ),
        fix="build the document with a serializer (json.dumps)",
        severity=(Severity.MEDIUM, Severity.LOW),
        transport=_transport,
        sanitized_severity=Severity.INFO,
    )
    phase = "guarded"
    # Every query requires the literal's opening quote right before the brace (`"{"cmd"`,
    # `'[{\"a\"`, `` `{"a"` ``): a dict display in code (`{"cmd": x}`) does not open one.
    guard = re.compile(rb'["\'`]\s*[\[{]{1,2}\s*\\{0,3}"[A-Za-z_]')

    @classmethod
    def sites(cls, lang: str, caps: Captures) -> Iterator[Site]:
        """A TemplateSite per JSON-looking literal; sink captures as usual (serializer writes)."""
        if any(name.startswith("sink.") for name in caps):
            yield from super().sites(lang, caps)
        else:
            yield TemplateSite(cls.code, caps["span"][0])
