"""Evaluating one sink site: what reaches it, which boundary it is, and the finding.

`evaluate_sink` dispatches on the site's kind (`process`, `argv`, `shell`, `stdin`,
`stdin-oneshot`, `session`, `pty`, `tty`, `remote`, `remote-argv`, `docker`), asks the
dataflow engine for the value (and the receiving handle, where it matters), classifies it,
and builds the finding. `FileContext` holds the per-file facts classification needs: file
writes (for script-file), the literals the nested-shell-string query matched (the gate for
nested-string), and the argv literals a call already consumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import tree_sitter as ts

from boundary_audit.finding import Finding
from boundary_audit.static import classify as C
from boundary_audit.static import findings as F
from boundary_audit.static import programs as P
from boundary_audit.static.checks.base import SinkSite, WriteSite
from boundary_audit.static.dataflow import Engine
from boundary_audit.static.ir import Attr, Call, Function, Index, Op, Span
from boundary_audit.static.shapes import concat_lists, dotted
from boundary_audit.static.values import (
    EMPTY,
    AValue,
    Lst,
    Obj,
    Prov,
    Ser,
    Text,
    alts,
    as_str,
    options,
    prov_of,
)
from boundary_audit.taxonomy import BoundaryClass as BC

Result = tuple[Finding, bool]
"""A finding and whether it is `fixed` (constant or data-only: hidden by default)."""

_GUARDED = frozenset({"self", "this", "cls"})


@dataclass
class FileContext:
    """Per-file facts shared by the sinks of one file."""

    engine: Engine
    commit: str | None
    wraps: list[ts.Node]
    writes: list[WriteSite]
    consumed: set[tuple[int, int]] = field(default_factory=set)
    _written: list[tuple[WriteSite, AValue, Prov]] | None = None

    @property
    def path(self) -> str:
        return self.engine.path

    def gate(self, text: Text | None) -> bool:
        """True if the launching literal lies inside a literal the BA102 query matched."""
        if text is None or text.span is None:
            return False
        if text.path != self.path:
            return True
        return any(n.start_byte <= text.span.start_byte < n.end_byte for n in self.wraps)

    def written(self) -> list[tuple[WriteSite, AValue, Prov]]:
        """(site, target value, content provenance) of every file write in the file."""
        if self._written is None:
            self._written = []
            eng = self.engine
            for w in self.writes:
                target: AValue | None = None
                if w.target is not None:
                    target = eng.value(w.target)
                elif w.receiver is not None:
                    recv = eng.value(w.receiver)
                    handles = [o for o in options(recv) if isinstance(o, Obj)]
                    if any(h.kind in ("stdin", "process") for h in handles):
                        continue
                    files = [h.target for h in handles if h.kind == "file" and h.target is not None]
                    target = files[0] if files else recv
                if target is not None:
                    self._written.append((w, target, prov_of(eng.value(w.content))))
        return self._written

    def script(self, item: AValue) -> tuple[object, Prov] | None:
        """The write whose target `item` names, with its content's provenance (of several
        writes to that file, the one whose content is most model-controlled)."""
        found = [
            (site, content) for site, target, content in self.written() if same_file(item, target)
        ]
        if not found:
            return None
        return max(
            found, key=lambda w: (w[1].traced, w[1].model, bool(w[1].origins), not w[1].constant)
        )

    def consume(self, value: AValue) -> None:
        """Record the argv lists inside `value`, so their literal sites are not reported again."""
        for o in options(value):
            if isinstance(o, Lst) and o.span is not None and o.path == self.path:
                self.consumed.add((o.span.start_byte, o.span.end_byte))

    def classify_context(self) -> C.Context:
        """The classification context bound to this file."""
        return C.Context(self.script, self.gate)


def same_file(a: AValue, b: AValue) -> bool:
    """True if two path values name the same file: same literal, or a shared variable."""
    la, lb = C.literal(a), C.literal(b)
    if la is not None and lb is not None:
        return la == lb
    va = {v for v in prov_of(a).vars if v[2] not in _GUARDED}
    vb = {v for v in prov_of(b).vars if v[2] not in _GUARDED}
    return bool(va & vb)


def evaluate_sink(site: SinkSite, ctx: FileContext) -> Result | None:
    """The finding for one sink site, or None if it is not a boundary after all."""
    eng = ctx.engine
    cc = ctx.classify_context()
    kind = site.kind
    if kind in _BY_METHOD_NAME and _own_method(site, ctx):
        return None
    verdict: C.Verdict | None = None
    if kind == "process":
        value = eng.value(site.span)
        objs = [
            o for o in options(value) if isinstance(o, Obj) and o.kind in ("process", "command")
        ]
        for o in objs:
            if o.argv is not None:
                ctx.consume(o.argv)
        verdict = C.best([C.process(o, cc) for o in objs])
    elif kind == "argv":
        if (site.span.start_byte, site.span.end_byte) in ctx.consumed:
            return None
        verdict = C.argv(eng.value(site.span, "argv"), False, cc)
    elif kind == "shell":
        verdict = C.shell_string(_value(eng, site), BC.SHELL_STRING, cc)
    elif kind in ("stdin", "stdin-oneshot", "stdin-handle"):
        verdict = _stdin(site, ctx, cc)
    elif kind in ("session", "session-handle", "pty"):
        verdict = _session(site, ctx, cc)
    elif kind == "tty":
        verdict = C.written_value(_value(eng, site), BC.TTY_KEYSTROKES, cc)
    elif kind == "remote":
        verdict = C.written_value(_value(eng, site), BC.REMOTE_STRING, cc)
    elif kind in ("remote-argv", "docker"):
        verdict = _remote_argv(site, ctx, cc)
    elif kind == "kernel":
        value = _value(eng, site)
        own = [o for o in options(value) if _caller_prefix(o, site, ctx) is None]
        verdict = C.kernel_input(alts(own) if own else value, cc)
    if verdict is None:
        return None
    return _finding(site, verdict, ctx), verdict.fixed


_BY_METHOD_NAME = frozenset(
    {"remote", "session", "session-handle", "tty", "remote-argv", "docker", "kernel"}
)
"""Sink kinds recognised by a method name (`run`, `exec`, `sendline`, `send_keys`...)."""


def caller_findings(site: SinkSite, ctx: FileContext) -> list[Result]:
    """Findings at the callers that decide a kernel sink's class: a helper that runs what it
    is given (`self.client.execute(code)`) is a session, and the caller that hands it
    `f"%%bash\n{code}"` or `f"!{command}"` is where the text goes to a shell. Each such
    caller's prefix is a finding of its own, at the prefix; the sink keeps the others."""
    if site.kind != "kernel" or site.value is None:
        return []
    eng = ctx.engine
    out: dict[tuple[str, int, str], Result] = {}
    main = _finding(site, C.Verdict(BC.SHELL_SESSION, 1, EMPTY, ""), ctx)
    for o in options(_value(eng, site)):
        at = _caller_prefix(o, site, ctx)
        if at is None or prov_of(o).constant:
            continue
        prefix, head = at
        cls, layers, detail = P.KERNEL_PREFIXES[prefix]
        v = C.Verdict(BC(cls), layers, prov_of(o), f"{detail}, given by this caller")
        assert head.span is not None
        primary = F.location(head.path, head.span, ctx.commit, f"{prefix} cell for: {main.sink}")
        key = (head.path, head.span.start_line, cls)
        if key not in out:
            out[key] = (F.build(v, primary, eng.ex.lang, main.sink or "", None), v.fixed)
    return list(out.values())


def _caller_prefix(o: AValue, site: SinkSite, ctx: FileContext) -> tuple[str, Text] | None:
    """The kernel cell prefix (`!`, `%%bash`) that starts `o`, when a literal outside the
    sink's own function wrote it; None otherwise."""
    s = as_str(o)
    head = s.pieces[0] if s.pieces else None
    if not isinstance(head, Text) or head.span is None:
        return None
    text = head.text.lstrip()
    prefix = next((p for p in P.KERNEL_PREFIXES if text.startswith(p)), None)
    if prefix is None:
        return None
    fn = ctx.engine.ex.function_at(site.span)
    if head.path == ctx.path and fn.span.start_byte <= head.span.start_byte < fn.span.end_byte:
        return None
    return prefix, head


def _own_method(site: SinkSite, ctx: FileContext) -> bool:
    """True if the called method belongs to a class of this file: the project's own API.

    NOTE(h2): `sandbox.run(action)` is a sandbox SDK call unless `sandbox` is an instance of a
    class this file defines (or the call is on `self`); then that method's body is where a
    real sink would be. `self.pane.send_keys(...)` inside a class that also defines its own
    `send_keys` is still libtmux's.
    """
    callee = _callee(site)
    if callee is None:
        return False
    ex = ctx.engine.ex
    receiver = (
        callee.child_by_field_name("object")
        or callee.child_by_field_name("value")
        or callee.child_by_field_name("operand")
    )
    if receiver is None:
        return False
    name = ex.text(callee).replace("::", ".").rsplit(".", 1)[-1].strip()
    if not any(f.is_method or f.cls for f in ex.functions_named(name)):
        return False
    text = ex.text(receiver)
    if text in ("self", "this"):
        return True
    fn = ex.function_at(site.span)
    defs = list(ex.filled(fn).defs.get(text, ())) + list(ex.filled(ex.module()).defs.get(text, ()))
    classes = {f.cls for f in ex.all_functions() if f.cls}
    last = text.rsplit(".", 1)[-1].lstrip("_").lower()
    if len(last) >= 4 and any(c.lower() == last or c.lower().endswith(last) for c in classes):
        return True
    for d in defs:
        if isinstance(d.value, Call) and d.value.name.rsplit(".", 1)[-1] in classes:
            return True
    return False


def _need(node: ts.Node | None) -> ts.Node:
    if node is None:
        raise ValueError("sink site without @arg")
    return node


def _value(eng: Engine, site: SinkSite) -> AValue:
    """The value of the site's `@arg`; of a forwarder call's argument list (`arg = "*"`),
    the arguments after the forwarded callable."""
    node = _need(site.value)
    if site.skip and node.type in ("argument_list", "arguments"):
        expr = eng.ex.sink_expr(node, "value")
        if isinstance(expr, Op):
            eng.budget.steps = 0
            return eng.eval(Op(expr.span, expr.children[site.skip :]), eng.ex.function_at(node))
    return eng.value(node)


def _callee(site: SinkSite) -> ts.Node | None:
    """The sink's callee: the call's function, or the callable a forwarder call is given."""
    if site.skip:
        return site.receiver
    return site.span.child_by_field_name("function")


def _stdin(site: SinkSite, ctx: FileContext, cc: C.Context) -> C.Verdict | None:
    eng = ctx.engine
    receiver = eng.value(_need(site.receiver), "receiver")
    is_shell, handle = C.receiver_shell(receiver)
    if site.kind in ("stdin-handle", "stdin-oneshot") and handle is None:
        return None
    value = _value(eng, site)
    if is_shell is False:
        sers = [o for o in options(value) if isinstance(o, Ser)]
        return (
            C.Verdict(
                BC.SERIALIZED, 0, sers[0].prov, "serialized into a process", sers[0].serializer
            )
            if sers
            else None
        )
    text = eng.ex.text(site.receiver)
    fn = eng.ex.function_at(site.span)
    persistent = site.kind in ("stdin", "stdin-handle") and (
        text.startswith(("self.", "this.", "self->"))
        or (
            handle is not None
            and handle.span is not None
            and not (fn.span.start_byte <= handle.span.start_byte < fn.span.end_byte)
        )
        or _stored_handle(eng, fn, text)
    )
    v = C.written_value(value, BC.SHELL_SESSION if persistent else BC.SHELL_STDIN, cc)
    if is_shell is None:
        v = replace(v, notes=v.notes + ("receiving process not resolved",))
    return v


def _stored_handle(eng: Engine, fn: Function, receiver: str) -> bool:
    """True if the receiver's variable is only ever read out of a store of processes kept
    between calls (`process = session["process"]`, `p = self.procs[i]`,
    `entry = this.active.get(id)`): a process started by an earlier call, a session."""
    base = re.split(r"[?.\[(-]", receiver, maxsplit=1)[0]
    defs = eng.ex.filled(fn).defs.get(base, ())
    return bool(defs) and all(
        (isinstance(d.value, Index) and d.kind == "assign" and not isinstance(d.value.base, Call))
        or (isinstance(d.value, Attr) and dotted(d.value.base) in ("self", "this"))
        or (
            isinstance(d.value, Call)
            and isinstance(d.value.callee, Attr)
            and d.value.callee.name == "get"
            and isinstance(d.value.callee.base, Attr)
        )
        for d in defs
    )


def _session(site: SinkSite, ctx: FileContext, cc: C.Context) -> C.Verdict | None:
    eng = ctx.engine
    is_shell, handle = (
        C.receiver_shell(eng.value(site.receiver)) if site.receiver is not None else (None, None)
    )
    if is_shell is False or (site.kind == "session-handle" and handle is None):
        return None
    if site.kind == "pty":
        if handle is None or not handle.pty:
            return None
        return C.written_value(_value(eng, site), BC.TTY_KEYSTROKES, cc)
    return C.written_value(_value(eng, site), BC.SHELL_SESSION, cc)


def _remote_argv(site: SinkSite, ctx: FileContext, cc: C.Context) -> C.Verdict | None:
    value = _value(ctx.engine, site)
    if site.rest is not None:
        # `runCommand({cmd: "bash", args: ["-c", command]})`: the program, then its arguments
        args = ctx.engine.value(site.rest)
        value = concat_lists([Lst((value,)), args], ctx.path, Span.of(site.span))
    ctx.consume(value)
    verdicts = []
    for o in options(value):
        script = C.script_words(o, True, cc) if site.kind == "docker" else None
        if isinstance(o, Lst):
            verdicts.append(C.argv(o, True, cc))
        elif script is not None:
            verdicts.append(script)
        elif site.kind == "docker":
            v = C.shell_string(o, BC.REMOTE_STRING, cc)
            if v.boundary_class == BC.REMOTE_STRING and not v.detail:
                v = C.Verdict(
                    BC.REMOTE_STRING,
                    0,
                    v.prov,
                    "docker SDK splits the string with shlex",
                    v.sanitizer,
                    v.fixed,
                    route=BC.ARGV_DIRECT,
                )
            verdicts.append(v)
        else:
            verdicts.append(C.written_value(o, BC.REMOTE_STRING, cc))
    return C.best(verdicts)


def _finding(site: SinkSite, v: C.Verdict, ctx: FileContext) -> Finding:
    ex = ctx.engine.ex
    callee = (
        site.span.child_by_field_name("function")
        or site.span.child_by_field_name("name")
        or site.span.child_by_field_name("left")
    )
    text = (
        ex.text(callee) if callee is not None else ex.text(site.receiver) if site.receiver else ""
    )
    sink = sink_label(text, site.kind)
    if site.skip and site.receiver is not None:
        sink = f"{sink_label(ex.text(site.receiver), site.kind)} via {sink}"
    primary = F.node_location(ctx.path, site.span, ctx.commit, f"sink: {sink}" if sink else "sink")
    write = None
    if isinstance(v.write, WriteSite):
        write = F.node_location(
            ctx.path, v.write.span, ctx.commit, "model output written to the file here"
        )
    return F.build(v, primary, ex.lang, sink, write)


def sink_label(text: str, kind: str) -> str:
    """A short, one-line name for the sink API (`Command::new(…).output` for long chains)."""
    flat = re.sub(r"\s+\.", ".", " ".join(text.split()))
    if kind == "argv" and flat.startswith(("[", "(", "vec!", "[]")):
        return "argv list"
    if "(" in flat and ")." in flat:
        head = flat.split("(", 1)[0]
        return f"{head}(…).{flat.rsplit(').', 1)[1]}"
    return flat if len(flat) <= 60 else flat[:57] + "…"


__all__ = ["FileContext", "Result", "evaluate_sink"]
