"""The exact description of a boundary, for the disclosed contract, derived from data only.

A `Boundary` is what a reply will cross: a transport with its parameters, and (for an
adapter path) the pre-processors the harness applies first and the boundary facts the path
shows (`expect`, probe id -> outcome). `describe` turns it into text from
contracts/disclosures.toml: the transport's sentence with its parameters filled in, one
sentence per pre-processor, and one per fact in which the path differs from `bash -c` (the
file's `[reference]`). No system has code of its own here: a new adapter is described by the
data it already has, and a new transport or pre-processor needs one sentence in the file (the
tests fail until it has one).

`boundary_for(spec)` reads what `generate --disclose-for` names, tried in this order:

- `FILE#N` or `FILE#FINGERPRINT`: finding N (0-based, as in `.findings[N]`) or the finding
  with that fingerprint (`<24 hex>:<n>`) of a `boundary-audit scan --format json` report: the
  boundary path the scan derived from the code (`boundary_path`: its transport and
  pre-processors), exactly what `scan` replays; a report without one falls back to the class's
  transport hint over the sink text;
- `SYSTEM:PATH`: a boundary path of a packaged adapter (system_adapters/) or of `--adapters`
  files;
- `NAME`: a transport (`nested`, the study's double-quote wrapper, is the default).

Anything else is a usage error (exit 2) naming the three forms; an unreadable or invalid scan
report is exit 4.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from boundary_audit._data import data_root
from boundary_audit.adapters import PREPROCESSORS, StepSpec, load_adapters, make_preprocessor
from boundary_audit.errors import BoundaryAuditError, ExitCode, UsageError
from boundary_audit.llm.contracts import ContractError
from boundary_audit.probes import load_probes
from boundary_audit.probes.fields import Table, read_toml
from boundary_audit.static.checks import record_of
from boundary_audit.transports import TRANSPORTS, make_transport

DEFAULT_BOUNDARY = "nested"
"""The study's boundary: R pasted between double quotes and parsed by a second bash."""
ANY = "*"
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_FINGERPRINT = re.compile(r"^[0-9a-f]{24}:[0-9]+$")
WHERE = "contracts/disclosures.toml"


class ScanReportError(BoundaryAuditError):
    """The scan report `--disclose-for FILE#N` names cannot be read as a v1 report."""

    exit_code = ExitCode.INPUT


@dataclass(frozen=True)
class Boundary:
    """What a reply crosses, as data: the transport and, for an adapter path, more."""

    label: str
    """How records name it: `nested`, `swe-agent:default`, `scan.json#3 (path:l@sha, ...)`."""
    transport: str
    params: Mapping[str, Any] = field(default_factory=dict)
    """The transport's parameters, defaults included."""
    preprocess: tuple[StepSpec, ...] = ()
    facts: Mapping[str, str] = field(default_factory=dict)
    """Probe id -> outcome (an adapter path's `expect`)."""


@dataclass(frozen=True)
class _Text:
    """One sentence, or variants of it chosen by one parameter (`by`)."""

    by: str | None
    variants: Mapping[str, str]

    def pick(self, params: Mapping[str, Any]) -> str:
        if self.by is None:
            return self.variants[ANY]
        value = render_value(params.get(self.by))
        return self.variants.get(value, self.variants.get(ANY, ""))


@dataclass(frozen=True)
class Disclosures:
    """The parsed contracts/disclosures.toml."""

    reference: Mapping[str, str]
    transports: Mapping[str, _Text]
    preprocess: Mapping[str, _Text]
    facts: Mapping[str, Mapping[str, str]]


def render_value(value: Any) -> str:
    """A parameter as text: a list is joined with spaces, a bool is yes/no, None is ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(render_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _fill(text: str, params: Mapping[str, Any]) -> str:
    return _PLACEHOLDER.sub(lambda m: render_value(params.get(m.group(1))), text)


def _texts(table: Table, known: Mapping[str, Mapping[str, Any]], what: str) -> dict[str, _Text]:
    out: dict[str, _Text] = {}
    for name in list(table.data):
        if name not in known:
            raise table.fail(name, f"unknown {what} (known: {', '.join(sorted(known))})")
        entry = table.table(name)
        by = entry.text("by", None)
        params = known[name]
        if by is not None and by not in params:
            raise entry.fail("by", f"{by!r} is not a parameter of {name}")
        raw = entry.get("text", (str, dict))
        variants: dict[str, str] = {}
        if isinstance(raw, str):
            if by is not None:
                raise entry.fail("text", "with `by`, give a table of variants")
            variants[ANY] = raw
        else:
            if by is None:
                raise entry.fail("text", "a table of variants needs `by`")
            sub = entry.table("text")
            for key in list(sub.data):
                variants[key] = sub.text(key)
            sub.done()
        for key, text in variants.items():
            for used in _PLACEHOLDER.findall(text):
                if used not in params:
                    raise entry.fail(
                        f"text{'' if key == ANY and by is None else '.' + key}",
                        f"{{{{{used}}}}} is not a parameter of {name}",
                    )
        entry.done()
        out[name] = _Text(by, variants)
    table.done()
    return out


def parse_disclosures(data: bytes, where: str = WHERE) -> Disclosures:
    """Parse and check the disclosures file; a ContractError names the key."""
    top = Table(read_toml(data, where, ContractError), where, "", ContractError)
    if top.get("schema", int) != 1:
        raise top.fail("schema", "must be 1")
    probes: dict[str, Any] = {p.id: p for p in load_probes()}

    def outcomes(probe: str) -> list[str]:
        return [*probes[probe].outcomes, "missing"]

    ref_table = top.table("reference")
    reference: dict[str, str] = {}
    for probe in list(ref_table.data):
        if probe not in probes:
            raise ref_table.fail(probe, "unknown probe")
        reference[probe] = ref_table.text(probe)
        if reference[probe] not in outcomes(probe):
            raise ref_table.fail(probe, f"{reference[probe]!r} is not an outcome of {probe}")
    ref_table.done()
    transports = _texts(
        top.table("transports"), {n: dict(c.defaults) for n, c in TRANSPORTS.items()}, "transport"
    )
    preprocess = _texts(
        top.table("preprocess"),
        {n: dict(c.defaults) for n, c in PREPROCESSORS.items()},
        "pre-processor",
    )
    facts_table = top.table("facts")
    facts: dict[str, dict[str, str]] = {}
    for probe in list(facts_table.data):
        if probe not in probes:
            raise facts_table.fail(probe, "unknown probe")
        sentences = facts_table.table(probe)
        facts[probe] = {}
        for outcome in list(sentences.data):
            if outcome not in outcomes(probe):
                raise sentences.fail(outcome, f"not an outcome of probe {probe}")
            facts[probe][outcome] = sentences.text(outcome, empty=True)
        sentences.done()
    facts_table.done()
    top.done()
    return Disclosures(reference, transports, preprocess, facts)


@cache
def load_disclosures() -> Disclosures:
    """The packaged disclosures file."""
    node = data_root("contracts").joinpath("disclosures.toml")
    return parse_disclosures(node.read_bytes())


def describe(boundary: Boundary, texts: Disclosures | None = None) -> str:
    """The disclosure of `boundary`: transport, pre-processors, differing facts."""
    d = texts or load_disclosures()
    entry = d.transports.get(boundary.transport)
    if entry is None:
        raise ContractError(f"{WHERE}: no sentence for transport {boundary.transport!r}")
    parts = [_fill(entry.pick(boundary.params), boundary.params)]
    before: list[str] = []
    for step in boundary.preprocess:
        pre = d.preprocess.get(step.name)
        if pre is None:
            raise ContractError(f"{WHERE}: no sentence for pre-processor {step.name!r}")
        params = make_preprocessor(step.name, **dict(step.params)).params
        before.append(_fill(pre.pick(params), params))
    if before:
        parts.append("Before that: " + " ".join(before))
    facts: list[str] = []
    order = {probe: n for n, probe in enumerate(d.reference)}
    for probe, outcome in sorted(boundary.facts.items(), key=lambda kv: order.get(kv[0], 99)):
        if d.reference.get(probe) == outcome:
            continue
        sentence = d.facts.get(probe, {}).get(outcome)
        if sentence is None:
            raise ContractError(f"{WHERE}: no sentence for fact {probe}={outcome}")
        if sentence:
            facts.append(sentence)
    if facts:
        parts.append(" ".join(facts))
    return "\n".join(parts)


# -- what --disclose-for names ----------------------------------------------------------------


def transport_boundary(name: str, params: Mapping[str, Any] | None = None) -> Boundary:
    """A transport, with its parameters (defaults filled in; bad ones are a usage error)."""
    t = make_transport(name, **dict(params or {}))
    try:
        label = t.label
        merged = dict(t.params)
    finally:
        t.close()
    return Boundary(label=label, transport=name, params=merged)


def adapter_boundary(spec: str, extra: Iterable[Path] = ()) -> Boundary | None:
    """The adapter path `SYSTEM:PATH`, or None when no adapter has that id."""
    system, _, path_id = spec.partition(":")
    adapters = {a.id: a for a in load_adapters(extra=tuple(extra))}
    adapter = adapters.get(system)
    if adapter is None:
        return None
    try:
        path = adapter.path(path_id)
    except KeyError:
        known = ", ".join(p.id for p in adapter.paths)
        raise UsageError(f"system {system!r} has no path {path_id!r} (paths: {known})") from None
    base = transport_boundary(path.transport.name, path.transport.params)
    return Boundary(
        label=adapter.label(path),
        transport=base.transport,
        params=base.params,
        preprocess=path.preprocess,
        facts=dict(path.expect),
    )


def finding_boundary(report: Path, selector: str) -> Boundary:
    """Finding `selector` (an index or a fingerprint) of the scan report `report`."""
    where = str(report)
    try:
        doc = json.loads(report.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ScanReportError(f"{where}: cannot read scan report: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScanReportError(f"{where}: not a JSON scan report: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "boundary-audit/v1":
        raise ScanReportError(
            f"{where}: not a `boundary-audit scan --format json` report (schema v1)"
        )
    findings = doc.get("findings")
    if not isinstance(findings, list):
        raise ScanReportError(f"{where}: findings: expected a list")
    index = _select(findings, selector, where)
    obj = findings[index]
    finding = _finding(obj, f"{where}: findings[{index}]")
    label = f"{report.name}#{index} ({finding.primary.anchor()}, {finding.boundary_class.value})"
    derived = obj.get("boundary_path")
    if isinstance(derived, dict) and isinstance(derived.get("transport"), dict):
        # the path the scan derived from the code, as `scan` replays it
        t, steps = derived["transport"], derived.get("preprocess") or []
        base = transport_boundary(str(t.get("name")), dict(t.get("params") or {}))
        pre = tuple(
            StepSpec(str(s.get("name")), dict(s.get("params") or {}))
            for s in steps
            if isinstance(s, dict)
        )
        return Boundary(label=label, transport=base.transport, params=base.params, preprocess=pre)
    hint = record_of(finding.boundary_class).transport  # a report without derived paths
    name, params = hint(str(obj.get("snippet") or ""), "", finding.sanitizer is not None)
    base = transport_boundary(name, params)
    return Boundary(label=label, transport=base.transport, params=base.params)


def _select(findings: Sequence[Any], selector: str, where: str) -> int:
    if selector.isdigit():
        index = int(selector)
        if index >= len(findings):
            raise UsageError(f"{where} has {len(findings)} findings: no finding #{index}")
        return index
    if _FINGERPRINT.match(selector):
        for i, f in enumerate(findings):
            if isinstance(f, dict) and f.get("fingerprint") == selector:
                return i
        raise UsageError(f"{where}: no finding has fingerprint {selector}")
    raise UsageError(
        f"{where}#{selector}: expected a finding index (0-based) or a fingerprint (<24 hex>:<n>)"
    )


def _finding(obj: Any, where: str) -> Any:
    from boundary_audit.finding import Finding, Location
    from boundary_audit.taxonomy import BoundaryClass, Confidence, Contract, Severity

    try:
        commit = obj.get("anchor", "").rpartition("@")[2] or None
        return Finding(
            code=obj["code"],
            name=str(obj.get("name", "")),
            message=str(obj.get("message", "")),
            boundary_class=BoundaryClass(obj["class"]),
            parse_layers=int(obj.get("parse_layers", 1)),
            contract=Contract(obj.get("contract", "unknown")),
            confidence=Confidence(obj.get("confidence", "low")),
            severity=Severity(obj.get("severity", "info")),
            sanitizer=obj.get("sanitizer"),
            model_controlled=bool(obj.get("model_controlled", False)),
            language=str(obj.get("language", "")),
            primary=Location(
                str(obj["path"]),
                int(obj["line"]),
                int(obj.get("end_line", obj["line"])),
                commit=commit,
            ),
            sink=str(obj.get("sink", "")),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ScanReportError(f"{where}: not a finding of the v1 schema ({exc})") from None


def boundary_for(spec: str | None, adapters: Iterable[Path] = ()) -> Boundary:
    """What `--disclose-for SPEC` names (module docstring); None is the study's `nested`."""
    if spec is None or spec == "":
        return transport_boundary(DEFAULT_BOUNDARY)
    file_part, hash_sign, selector = spec.rpartition("#")
    if hash_sign and file_part:
        return finding_boundary(Path(file_part), selector)
    if ":" in spec:
        found = adapter_boundary(spec, adapters)
        if found is not None:
            return found
    if spec in TRANSPORTS:
        return transport_boundary(spec)
    raise UsageError(
        f"--disclose-for {spec!r}: expected a transport ({', '.join(TRANSPORTS)}), "
        "an adapter path SYSTEM:PATH (e.g. swe-agent:default), or a scan finding FILE#N"
    )
