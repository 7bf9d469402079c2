"""Load and validate system adapters: the packaged system_adapters/*.toml plus user files.

Everything is checked at load time, so a bad file fails before any run with one line naming
the file and the key (AdapterError, exit 4): unknown keys, wrong types, an id that is not the
file name, duplicate path ids, unknown boundary classes or contracts, unknown transports or
transport parameters (the transport is instantiated), unknown pre-processors or their
parameters, anchor line ranges, and `expect` entries naming unknown probes or outcomes.
The format is documented in docs/adapters.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from boundary_audit._data import iter_files
from boundary_audit.adapters.model import (
    ANCHOR_KINDS,
    Adapter,
    Anchor,
    BoundaryPath,
    StepSpec,
    StudyRow,
    TransportSpec,
)
from boundary_audit.adapters.preprocess import make_preprocessor
from boundary_audit.errors import AdapterError, BoundaryAuditError
from boundary_audit.probes import Probe, load_probes
from boundary_audit.probes.fields import Table, read_file, read_toml
from boundary_audit.taxonomy import BoundaryClass, Contract
from boundary_audit.transports import make_transport

SCHEMA_VERSION = 1
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")


def parse_adapter(data: bytes, where: str, stem: str) -> Adapter:
    """One adapter from the bytes of file `where` (named `stem`.toml)."""
    top = Table(read_toml(data, where, AdapterError), where, "", AdapterError)
    if top.get("schema", int) != SCHEMA_VERSION:
        raise top.fail("schema", f"must be {SCHEMA_VERSION}")
    aid = _ident(top, "id")
    if aid != stem:
        raise top.fail("id", f"{aid!r} must equal the file name {stem!r}")
    commit = top.text("commit")
    if not _SHA.match(commit):
        raise top.fail("commit", f"{commit!r} must be 7 to 40 lowercase hex digits")
    study = top.table("study")
    row = StudyRow(study.text("contract"), study.text("anchor"), study.text("observed"))
    study.done()
    paths = tuple(_path(t) for t in top.tables("paths"))
    if not paths:
        raise top.fail("paths", "must list at least one boundary path")
    _unique(top, "paths", [p.id for p in paths])
    adapter = Adapter(
        id=aid,
        name=top.text("name"),
        repository=top.text("repository"),
        commit=commit,
        study=row,
        paths=paths,
        source_file=where,
        language=top.text("language", ""),
        order=top.get("order", int, 1000),
    )
    top.done()
    return adapter


def _path(t: Table) -> BoundaryPath:
    pid = _ident(t, "id")
    transport = _transport(t.table("transport"))
    steps = tuple(_step(t, i, item) for i, item in enumerate(t.get("preprocess", list, [])))
    anchors = tuple(_anchor(a) for a in t.tables("anchors", []))
    cls = _enum(t, "boundary_class", BoundaryClass)
    path = BoundaryPath(
        id=pid,
        title=t.text("title"),
        row=t.get("row", bool, True),
        extra=t.get("extra", bool, False),
        contract=_enum(t, "contract", Contract),
        boundary_class=cls,
        shell_parses=t.get("shell_parses", int, cls.parse_layers),
        parse_layers=t.strings("parse_layers"),
        observed=t.text("observed"),
        fix=t.text("fix"),
        transport=transport,
        preprocess=steps,
        anchors=anchors,
        marked=t.text("marked", ""),
        expect=_expect(t.table("expect", None)),
        notes=t.strings("notes", ()),
    )
    if not path.parse_layers:
        raise t.fail("parse_layers", "must name at least one layer")
    t.done()
    return path


def _transport(t: Table) -> TransportSpec:
    name = t.text("name")
    params = t.table("params", None).data
    try:
        make_transport(name, **params).close()
    except BoundaryAuditError as exc:
        raise t.fail(
            "name" if "unknown transport" in exc.message else "params", exc.message
        ) from None
    t.done()
    return TransportSpec(name, dict(params))


def _step(t: Table, index: int, item: Any) -> StepSpec:
    key = f"preprocess[{index}]"
    if isinstance(item, str):
        name, params = item, {}
    elif isinstance(item, dict):
        sub = Table(item, t.where, f"{t.key}.{key}", AdapterError)
        name, params = sub.text("name"), sub.table("params", None).data
        sub.done()
    else:
        raise t.fail(key, "must be a pre-processor name or a table {name, params}")
    try:
        make_preprocessor(name, **params)
    except AdapterError as exc:
        raise t.fail(key, exc.message) from None
    return StepSpec(name, dict(params))


def _anchor(a: Table) -> Anchor:
    lines = a.get("lines", list)
    if (
        len(lines) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines)
        or not 1 <= lines[0] <= lines[1]
    ):
        raise a.fail("lines", "must be [first, last] with 1 <= first <= last")
    kind = a.text("kind")
    if kind not in ANCHOR_KINDS:
        raise a.fail("kind", f"{kind!r} must be one of {', '.join(ANCHOR_KINDS)}")
    cls = _enum(a, "boundary_class", BoundaryClass) if kind == "sink" else None
    text = a.text("text") if kind == "text" else None
    anchor = Anchor(
        path=a.text("path").strip("/"),
        start_line=lines[0],
        end_line=lines[1],
        kind=kind,
        boundary_class=cls,
        sink=a.text("sink", None),
        text=text,
        note=a.text("note", ""),
    )
    a.done()
    return anchor


def _expect(t: Table) -> dict[str, str]:
    probes: dict[str, Probe] = {p.id: p for p in load_probes()}
    out: dict[str, str] = {}
    for key in sorted(t.data):
        value = t.text(key)
        probe = probes.get(key)
        if probe is None:
            raise t.fail(key, f"unknown probe (known: {', '.join(sorted(probes))})")
        if value not in probe.outcomes and value != "missing":
            allowed = ", ".join([*sorted(probe.outcomes), "missing"])
            raise t.fail(key, f"{value!r} is not an outcome of probe {key} ({allowed})")
        out[key] = value
    t.done()
    return out


def _ident(t: Table, key: str) -> str:
    value = t.text(key)
    if not _ID.match(value):
        raise t.fail(key, f"{value!r} must match [a-z0-9][a-z0-9-]*")
    return str(value)


def _enum(t: Table, key: str, enum: Any) -> Any:
    value = t.text(key)
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise t.fail(key, f"{value!r} is not one of {allowed}") from None


def _unique(t: Table, key: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i, ident in enumerate(ids):
        if ident in seen:
            raise t.fail(f"{key}[{i}].id", f"duplicate path id {ident!r}")
        seen.add(ident)


@cache
def _packaged() -> tuple[Adapter, ...]:
    return tuple(
        parse_adapter(node.read_bytes(), f"system_adapters/{rel}", rel[: -len(".toml")])
        for rel, node in iter_files("system_adapters", ".toml")
        if "/" not in rel
    )


def _order(adapter: Adapter) -> tuple[int, str]:
    return adapter.order, adapter.id


def _user_files(extra: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in extra:
        if path.is_dir():
            files.extend(sorted(path.glob("*.toml")))
        elif path.is_file() or not path.exists():
            files.append(path)
    return files


def load_adapters(
    select: Iterable[str] | None = None, extra: Iterable[Path] = ()
) -> tuple[Adapter, ...]:
    """Packaged adapters plus user files or folders (`extra`, which win on a shared id).

    `select` keeps the named ids in the given order; an unknown id is an AdapterError.
    Without `select` adapters come by their `order` key (the study's Table-8 order for the
    six packaged ones; 1000 when absent), then by id.
    """
    found: dict[str, Adapter] = {a.id: a for a in _packaged()}
    user: dict[str, str] = {}
    for path in _user_files(extra):
        adapter = parse_adapter(read_file(path, AdapterError), str(path), path.stem)
        if adapter.id in user:
            raise AdapterError(f"{path}: id {adapter.id!r} is also defined by {user[adapter.id]}")
        user[adapter.id] = str(path)
        found[adapter.id] = adapter
    if select is None:
        return tuple(sorted(found.values(), key=_order))
    wanted = list(dict.fromkeys(select))
    for name in wanted:
        if name not in found:
            raise AdapterError(f"unknown system {name!r} (known: {', '.join(sorted(found))})")
    return tuple(found[n] for n in wanted)
