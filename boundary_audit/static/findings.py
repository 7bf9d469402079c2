"""Turning a classified sink into a `Finding`: code, message, severity, confidence, locations.

The finding's code is the check that owns the verdict's boundary class. Its primary
location is the sink; related locations are where model output enters (the origins), the
call crossings and returns it passed, the literal that wraps it for a second parser, and
the file write a script runs. Static evidence reaches at most `medium` confidence. A
model-controlled finding carries the boundary path derived from the verdict (`static.path`).
"""

from __future__ import annotations

import tree_sitter as ts

from boundary_audit.finding import Finding, FindingBuilder, Location
from boundary_audit.static.checks import OWNER, record_of
from boundary_audit.static.classify import Verdict
from boundary_audit.static.ir import Span
from boundary_audit.static.path import derive
from boundary_audit.static.values import Prov
from boundary_audit.taxonomy import BoundaryClass as BC
from boundary_audit.taxonomy import Confidence, Contract, Severity

MAX_RELATED = 8

_PHRASE = {
    BC.SHELL_STRING: "a shell that parses it as a command string",
    BC.SHELL_STDIN: "the stdin of a one-shot shell",
    BC.SHELL_SESSION: "a persistent shell session",
    BC.TTY_KEYSTROKES: "an interactive terminal as keystrokes",
    BC.ARGV_DIRECT: "a process spawned without a shell",
    BC.SCRIPT_FILE: "a file that an interpreter runs",
    BC.REMOTE_STRING: "a remote shell as one command string",
    BC.NESTED_STRING: "a command string that a second shell parses again",
    BC.SERIALIZED: "a serialized (JSON) payload",
}
_ROUTED = {
    (BC.REMOTE_STRING, BC.ARGV_DIRECT): "a container or sandbox exec API (no shell there)",
    (BC.NESTED_STRING, BC.SHELL_STRING): "the quotes of a command string that a shell parses",
    (BC.NESTED_STRING, BC.REMOTE_STRING): "the quotes of a command string a remote shell parses",
}
"""The phrase of a class reported for where the boundary is, parsed as another class."""


def location(path: str, span: Span, commit: str | None, annotation: str = "") -> Location:
    """A Location from an IR span (1-based lines)."""
    return Location(
        path,
        span.start_line + 1,
        span.end_line + 1,
        span.start_col,
        span.end_col,
        span.start_byte,
        span.end_byte,
        commit,
        annotation,
    )


def node_location(path: str, node: ts.Node, commit: str | None, annotation: str = "") -> Location:
    """A Location for a tree-sitter node."""
    return location(path, Span.of(node), commit, annotation)


def contract_of(prov: Prov) -> Contract:
    """Native if a tool-call argument reaches the sink, raw if text parsing does, else unknown."""
    kinds = {o.kind for o in prov.origins}
    if "tool-call" in kinds:
        return Contract.NATIVE
    if kinds & {"parsed-action", "llm-response"}:
        return Contract.RAW
    return Contract.UNKNOWN


def severity_of(v: Verdict) -> Severity:
    """How much damage this boundary can do to a correct command."""
    if v.fixed:
        return Severity.INFO
    record = record_of(v.mechanics)
    if v.sanitizer and record.sanitized_severity is not None:
        return record.sanitized_severity
    controlled, uncontrolled = record.severity
    return controlled if v.prov.model else uncontrolled


def subject(v: Verdict) -> str:
    """Who controls the value, in words."""
    if v.prov.traced:
        return "Model output"
    if v.prov.model:
        return "A tool input named like a command"
    if v.prov.origins:
        return "A value named like a command"
    if v.fixed and v.prov.configured:
        return f"A configured value ({', '.join(input_labels(v.prov))})"
    if v.fixed and v.prov.constant:
        return "A constant command"
    if v.fixed:
        return "A fixed program with data arguments"
    return "A value of unknown origin"


def input_labels(prov: Prov, limit: int = 3) -> list[str]:
    """What the non-model inputs of `prov` read, in words (at most `limit`, then `…`)."""
    labels = sorted({i.label for i in prov.inputs})
    return labels[:limit] + (["…"] if len(labels) > limit else [])


def message(v: Verdict, sink: str) -> str:
    """One sentence describing this occurrence."""
    via = f" via `{sink}`" if sink else ""
    phrase = _ROUTED.get((v.boundary_class, v.mechanics), _PHRASE[v.boundary_class])
    text = f"{subject(v)} reaches {phrase}{via}"
    if v.detail:
        text += f" ({v.detail})"
    if v.notes:
        text += "; " + "; ".join(v.notes)
    if v.sanitizer:
        text += f"; sanitizer: {v.sanitizer}"
    return (
        text + f"; {v.parse_layers} shell parse{'s' if v.parse_layers != 1 else ''} before execve."
    )


def build(
    v: Verdict, primary: Location, language: str, sink: str, write: Location | None
) -> Finding:
    """The Finding for verdict `v` at `primary`."""
    owner = OWNER[v.boundary_class]
    b = FindingBuilder(owner.code, owner.name, language)
    b.primary(primary)
    contract = contract_of(v.prov)
    b.set(
        message=message(v, sink),
        boundary_class=v.boundary_class,
        parse_layers=v.parse_layers,
        contract=contract,
        boundary_path=derive(v, primary, contract),
        sanitizer=v.sanitizer,
        sink=sink,
        model_controlled=v.prov.model,
        severity=severity_of(v),
        confidence=Confidence.MEDIUM if v.prov.traced else Confidence.LOW,
        model_evidence=v.prov.evidence,
    )
    for loc in related(v, primary.commit)[:MAX_RELATED]:
        if (loc.path, loc.start_line, loc.start_col) != (
            primary.path,
            primary.start_line,
            primary.start_col,
        ):
            b.related(loc)
    if write is not None:
        b.related(write)
    return b.build()


def related(v: Verdict, commit: str | None) -> list[Location]:
    """Traced origins first, then name-only ones, the non-model inputs of a value that is
    not the model's, the wrapping literal, then the steps."""
    origins = sorted(
        v.prov.origins, key=lambda o: (not o.strong, o.path, o.span.start_byte, o.label)
    )
    strong = [o for o in origins if o.strong][:4]
    weak = [o for o in origins if not o.strong][: 2 if strong else 4]
    out = [
        location(
            o.path,
            o.span,
            commit,
            f"model output enters: {o.label}" if o.strong else f"named like a command: {o.label}",
        )
        for o in (*strong, *weak)
    ]
    if not v.prov.model:
        inputs = sorted(v.prov.inputs, key=lambda i: (i.path, i.span.start_byte, i.label))[:2]
        out.extend(
            location(i.path, i.span, commit, f"non-model input ({i.kind}): {i.label}")
            for i in inputs
        )
    if v.wrap is not None and v.wrap.span is not None:
        out.append(
            location(v.wrap.path, v.wrap.span, commit, f"wrapped for a second parser: {v.detail}")
        )
    steps = sorted(v.prov.steps, key=lambda s: (s.path, s.span.start_byte, s.note))
    out.extend(location(s.path, s.span, commit, s.note) for s in steps[: MAX_RELATED - len(out)])
    return out
