"""Which `for` loops read as a map (`Each`): one append per iteration, derived from the loop
variable; any other loop keeps the plain reading of its appends."""

from __future__ import annotations

import pytest

from boundary_audit.static.extract import extractor_for
from boundary_audit.static.ir import Each
from boundary_audit.static.parsing import parse


def maps(body: str) -> list[str]:
    """Targets of the map readings of the loops in `def f(xs, root):` with `body`."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    src = "def f(xs, root):\n    out = []\n" + lines
    data = src.encode()
    ex = extractor_for("python")("python", "a.py", data, parse("python", data))
    (fn,) = [f for f in ex.all_functions() if f.name == "f"]
    return [
        f"{d.target}<-{d.value.var}"
        for defs in ex.filled(fn).defs.values()
        for d in defs
        if d.kind == "map" and isinstance(d.value, Each)
    ]


@pytest.mark.parametrize(
    "body",
    [
        "for x in xs:\n    out.append(x)",
        "for x in xs:\n    out.append(str(x))",
        "for x in xs[1:]:\n    p = Path(x)\n    if not p.is_absolute():\n"
        "        out.append(x)\n        continue\n    out.append(p.relative_to(root).as_posix())",
        "for x in xs:\n    for y in x:\n        print(y)\n        break\n    out.append(x)",
        # inside another loop that starts the list over
        "while xs:\n    out = []\n    for x in xs.pop():\n        out.append(x)",
    ],
)
def test_one_append_per_iteration_from_the_variable_is_a_map(body: str) -> None:
    assert maps(body) == ["out<-x"]


@pytest.mark.parametrize(
    "body",
    [
        # a filter: some iterations append nothing
        "for x in xs:\n    if x:\n        out.append(x)",
        "for x in xs:\n    if not x:\n        continue\n    out.append(x)",
        # several appends in one iteration
        "for x in xs:\n    out.append('-v')\n    out.append(x)",
        # stops early
        "for x in xs:\n    if x == '--':\n        break\n    out.append(x)",
        # the item is not computed from the variable
        "for x in xs:\n    out.append(root)",
        # the list or the variable changes otherwise in the loop
        "for x in xs:\n    out.extend(x)\n    out.append(x)",
        "for x in xs:\n    x = x.strip()\n    out.append(x)",
        "for x in xs:\n    out = out[:1]\n    out.append(x)",
        # the appends are in a nested loop (the list carries over the outer loop); `else:`
        "for x in xs:\n    for y in x:\n        out.append(y)",
        "for x in xs:\n    out.append(x)\nelse:\n    out.append('end')",
    ],
)
def test_other_loops_keep_the_plain_reading(body: str) -> None:
    assert maps(body) == []
