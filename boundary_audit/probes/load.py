"""Load and validate the probe files (probes/*.toml, packaged through `_data`).

Schema (every key checked; unknown keys are errors): `id` (= the file name without `.toml`),
`title`, `replies` (non-empty list of strings), `canary`, `[outcomes]` (value -> meaning, at
least one), `missing` (meaning when the canary never appears), optional `notes`. A bad file
raises ProbeError naming the file and key (exit 4).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

from boundary_audit._data import iter_files
from boundary_audit.errors import ProbeError
from boundary_audit.probes.fields import Table, read_file, read_toml
from boundary_audit.probes.model import MISSING, NAME, UNEXPECTED, Probe, ProbeId


def parse_probe(data: bytes, where: str, stem: str) -> Probe:
    """One probe from the bytes of `where` (whose file name without `.toml` is `stem`)."""
    top = Table(read_toml(data, where, ProbeError), where, "", ProbeError)
    pid = top.text("id")
    if pid != stem:
        raise top.fail("id", f"{pid!r} must equal the file name {stem!r}")
    _name(top, "id", pid)
    canary = _name(top, "canary", top.text("canary"))
    replies = top.strings("replies")
    if not replies or any(not r for r in replies):
        raise top.fail("replies", "must be a non-empty list of non-empty strings")
    outcomes_table = top.table("outcomes")
    outcomes = {}
    for value in list(outcomes_table.data):
        _name(outcomes_table, value, value)
        if value in (MISSING, UNEXPECTED):
            raise outcomes_table.fail(
                value,
                "is reserved (say what a missing canary means with the top-level `missing` key)",
            )
        outcomes[value] = outcomes_table.text(value)
    if not outcomes:
        raise top.fail("outcomes", "must declare at least one value")
    outcomes_table.done()
    probe = Probe(
        id=ProbeId(pid),
        title=top.text("title"),
        replies=replies,
        canary=canary,
        outcomes=outcomes,
        missing=top.text("missing"),
        source_file=where,
        notes=top.text("notes", ""),
    )
    top.done()
    return probe


def _name(table: Table, key: str, value: str) -> str:
    if not NAME.match(value):
        raise table.fail(key, f"{value!r} must match [a-z][a-z0-9-]*")
    return value


@cache
def _packaged() -> tuple[Probe, ...]:
    probes = []
    for rel, node in iter_files("probes", ".toml"):
        probes.append(parse_probe(node.read_bytes(), f"probes/{rel}", rel[: -len(".toml")]))
    return tuple(probes)


def load_probes(
    select: Iterable[str] | None = None, extra: Iterable[Path] = ()
) -> tuple[Probe, ...]:
    """The packaged probes (plus `extra` files), sorted by id; `select` keeps those ids."""
    found = {p.id: p for p in _packaged()}
    for path in extra:
        probe = parse_probe(read_file(path, ProbeError), str(path), path.stem)
        found[probe.id] = probe
    if select is not None:
        wanted = list(dict.fromkeys(select))
        unknown = [w for w in wanted if w not in found]
        if unknown:
            raise ProbeError(f"unknown probe {unknown[0]!r} (known: {', '.join(sorted(found))})")
        return tuple(found[ProbeId(w)] for w in sorted(wanted))
    return tuple(found[k] for k in sorted(found))
