"""Sink sites from the catalogue (`catalogue/sinks.toml`): process APIs by canonical name and
SDK methods by dotted suffix, found with the file's extractor instead of a query.

The queries find the sinks whose spelling is fixed; these are the ones whose spelling is not:
an imported alias (`from subprocess import Popen as p`), an import inside a function,
`getattr(os, "system")`, `__import__("os").system`, and every SDK whose receiver is an object
of the harness (`self._sandbox.commands.run`, `_as_api(sandbox).pty.send_stdin`). An SDK's
methods count only in a file that imports the SDK (statically, in a function, or by naming
the module in a string for a lazy import) and names one of its calls; a method name unlikely
to mean anything else may count in any file that names it (`modules = []`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from boundary_audit.static import catalogue, forwarders
from boundary_audit.static.checks.base import SinkSite
from boundary_audit.static.parsing import QUERY_DIALECT

if TYPE_CHECKING:
    from boundary_audit.static.extract.base import Extractor


@dataclass(frozen=True)
class SdkSink:
    """One sink method of an SDK."""

    call: str
    kind: str
    arg: int | str
    key: str | None
    receivers: frozenset[str]
    handles: frozenset[str] = frozenset()
    """For a call whose first argument is the handle written to (`os.write(fd, data)`): the
    last names that argument must have (`master_fd`, `primary_fd`); empty: any."""
    args_key: str | None = None
    """For a remote-argv whose `key` names the program only: the key of its arguments (the
    argv is the program, then those)."""


@dataclass(frozen=True)
class Sdk:
    """An SDK's sinks, the modules that show a file uses it, and text it needs."""

    name: str
    modules: tuple[str, ...]
    requires: tuple[bytes, ...]
    sinks: tuple[SdkSink, ...]
    unwrap: tuple[str, ...]
    builders: tuple[tuple[str, str], ...]
    not_process: tuple[str, ...] = ()
    """Constructors of a sink argument that is no process (`Command::ReadFile(path)` handed
    to swiftide's `exec_cmd`): a site whose argument is one of them is no sink."""
    calls: tuple[bytes, ...] = ()
    """The last names of its sinks' and builders' calls (`last_names`): every site of the
    SDK is a call (or a forwarded callable) whose text ends in one, so a file holding none
    has none."""


def last_names(calls: Iterable[str]) -> tuple[bytes, ...]:
    """The last names of dotted (or `::`) call names, as bytes, sorted and unique."""
    return tuple(sorted({c.replace("::", ".").rsplit(".", 1)[-1].encode() for c in calls}))


@cache
def sdks(dialect: str) -> tuple[Sdk, ...]:
    """The `[[sdk]]` entries of `dialect`."""
    out = []
    for e in catalogue.entries("sinks", "sdk"):
        if e.get("lang") != dialect:
            continue
        sinks = tuple(
            SdkSink(
                str(s["call"]),
                str(s["kind"]),
                s.get("arg", 0),
                s.get("key"),
                frozenset(str(r) for r in s.get("receivers", ())),
                frozenset(str(h) for h in s.get("handles", ())),
                s.get("args_key"),
            )
            for s in e.get("sinks", ())
        )
        out.append(
            Sdk(
                str(e["name"]),
                catalogue.strings(e, "modules"),
                tuple(r.encode() for r in catalogue.strings(e, "requires")),
                sinks,
                catalogue.strings(e, "unwrap"),
                tuple((str(b["call"]), str(b["handler"])) for b in e.get("builders", ())),
                tuple(n.replace("::", ".") for n in catalogue.strings(e, "not_process")),
                last_names(
                    [s.call for s in sinks] + [str(b["call"]) for b in e.get("builders", ())]
                ),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class HttpExec:
    """A sandbox server's exec endpoint reached over HTTP (`[[http_exec]]`)."""

    modules: tuple[str, ...]
    calls: tuple[str, ...]
    paths: frozenset[str]
    body: tuple[str, ...]
    argv_keys: tuple[str, ...]
    string_keys: tuple[str, ...]


@cache
def http_execs(dialect: str) -> tuple[HttpExec, ...]:
    """The `[[http_exec]]` entries of `dialect`."""
    return tuple(
        HttpExec(
            catalogue.strings(e, "modules"),
            catalogue.strings(e, "calls"),
            frozenset(catalogue.strings(e, "paths")),
            catalogue.strings(e, "body"),
            catalogue.strings(e, "argv_keys"),
            catalogue.strings(e, "string_keys"),
        )
        for e in catalogue.entries("sinks", "http_exec")
        if e.get("lang") == dialect
    )


@cache
def api_handlers() -> dict[str, str]:
    """Canonical process API name -> handler name, every `[[api]]` entry."""
    out: dict[str, str] = {}
    for e in catalogue.entries("sinks", "api"):
        for name in catalogue.strings(e, "names"):
            out[name] = str(e["handler"])
    return out


@cache
def sdk_methods_used(lang: str, data: bytes) -> frozenset[str]:
    """The last names of the sink methods of the SDKs a file of `lang` uses (`exec_run` in a
    file that imports docker)."""
    return frozenset(
        s.call.replace("::", ".").rsplit(".", 1)[-1]
        for sdk in used(QUERY_DIALECT[lang], data)
        for s in sdk.sinks
    )


def api_names(dialect: str) -> frozenset[str]:
    """Canonical process API names of `dialect`'s `[[api]]` entries."""
    return frozenset(
        name
        for e in catalogue.entries("sinks", "api")
        if e.get("lang") == dialect
        for name in catalogue.strings(e, "names")
    )


@cache
def unwrapped() -> frozenset[str]:
    """Constructors whose value is their first argument (`Command::Shell(cmd)`)."""
    return frozenset(u for d in QUERY_DIALECT.values() for s in sdks(d) for u in s.unwrap)


@cache
def _module_pattern(dialect: str, module: str) -> re.Pattern[bytes]:
    m = re.escape(module.encode())
    if dialect == "python":
        return re.compile(
            rb"(?m)^[ \t]*(?:from[ \t]+" + m + rb"(?:\.[\w.]+)?[ \t]+import|import[ \t]+(?:[\w.]+"
            rb"[ \t]*,[ \t]*)*" + m + rb"(?![\w]))|[\"']" + m + rb"(?:\.[\w.]+)?[\"']"
        )
    if dialect == "rust":
        return re.compile(rb"(?<![\w:])" + m + rb"::")
    return re.compile(rb"[\"'`]" + m + rb"(?:/[^\"'`]*)?[\"'`]")


def uses(dialect: str, data: bytes, sdk: Sdk) -> bool:
    """True if the file imports (or names) one of the SDK's modules, has its required text
    and names one of its calls (`Sdk.calls`)."""
    if sdk.requires and not any(r in data for r in sdk.requires):
        return False
    if not any(c in data for c in sdk.calls):
        return False
    if not sdk.modules:
        return True
    return any(
        module.encode() in data and _module_pattern(dialect, module).search(data)
        for module in sdk.modules
    )


@cache
def _module_tests(dialect: str) -> tuple[tuple[Sdk, tuple[tuple[bytes, str], ...]], ...]:
    """`dialect`'s SDKs, each with its modules' bytes and names (built once); a module's
    import pattern is compiled only once some file holds its name (`_module_pattern`)."""
    return tuple((sdk, tuple((m.encode(), m) for m in sdk.modules)) for sdk in sdks(dialect))


@lru_cache(maxsize=8)
def used(dialect: str, data: bytes) -> tuple[Sdk, ...]:
    """The SDKs of `dialect` the file uses (`uses`) and names a sink of (`Sdk.calls`), each
    module looked for once; the last few files' answers are kept (`may_have_sites` then
    `sites` ask for the same file). An SDK without modules (`pty-input`: any
    `x.send_input(data)`) is so used only by a file that names one of its calls."""
    seen: dict[bytes, bool] = {}
    out: list[Sdk] = []
    for sdk, modules in _module_tests(dialect):
        if sdk.requires and not any(r in data for r in sdk.requires):
            continue
        if not any(c in data for c in sdk.calls):
            continue
        hit = not modules
        for module, name in modules:
            found = seen.get(module)
            if found is None:
                found = seen[module] = (
                    module in data and _module_pattern(dialect, name).search(data) is not None
                )
            if found:
                hit = True
                break
        if hit:
            out.append(sdk)
    return tuple(out)


def may_have_sites(dialect: str, data: bytes) -> bool:
    """Cheap test: could this file hold a catalogue site (`sites`)? False only if it names
    none of `site_names`, defines no forwarder function (`forwarders.may_have_local`) and
    uses no SDK (`used`)."""
    if any(n in data for n in site_names(dialect)):
        return True
    return bool(used(dialect, data)) or forwarders.may_have_local(dialect, data)


@cache
def site_names(dialect: str) -> tuple[bytes, ...]:
    """Names one of which the text of every site `sites` finds holds, but for an SDK's
    (`used`) and a local forwarder's (`forwarders.may_have_local`): the process APIs' last
    names and dynamic spellings (`_api_locals`: an alias, `import subprocess as sp` or
    `from os import system as s`, resolves to the API through an import or an assignment
    that spells its last name), the library forwarders' (`forwarders.last_names`) and the
    HTTP exec calls' (`http_execs`). (A Python file with ` as ` in it used to pass for the
    aliases; that is 40 more of AutoGen@027ecf0's 558 Python files.)"""
    names = set(_api_locals(dialect)[1]) | set(forwarders.last_names(dialect))
    names.update(c for e in http_execs(dialect) for c in e.calls)
    return tuple(sorted(n.encode() for n in names if n))


def warm(dialect: str) -> None:
    """Build `dialect`'s catalogue tables (before forking workers that inherit them)."""
    _module_tests(dialect)
    _api_locals(dialect)
    forwarders.last_names(dialect)
    api_handlers()
    unwrapped()


def _callee_text(ex: Extractor, call: ts.Node) -> str:
    callee = call.child_by_field_name(ex.CALLEE_FIELD) or call.child_by_field_name("constructor")
    return _norm(ex.text(callee))


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("?.", ".").replace("::", ".").replace("!.", ".")


def _suffix(name: str, call: str) -> bool:
    call = call.replace("::", ".")
    return name == call or name.endswith("." + call)


def _receiver_last(name: str, call: str) -> str:
    """`self._sandbox` of `self._sandbox.exec` for call `exec`: its last name (`_sandbox`)."""
    head = name[: -len(call)].rstrip(".")
    cast = _CAST.fullmatch(head)
    if cast is not None:
        head = cast.group(1)
    head = re.sub(r"\(.*\)$", "", head)
    return head.rsplit(".", 1)[-1]


_CAST = re.compile(r"\(?(?:typing\.)?cast\([^,()]*(?:\[[^\]]*\])?,(.*)\)\)?")
"""`cast(Any, entry.raw_sock)`: the receiver is the cast's value (a type checker's no-op)."""


def _handle_last(ex: Extractor, call: ts.Node) -> str:
    """The last name of a call's first argument (`entry.primary_fd` -> `primary_fd`)."""
    first = select(ex, call, 0, None)
    text = re.sub(r"\s+", "", ex.text(first)) if first is not None else ""
    return re.split(r"[.\]\[]", text.rstrip("]"))[-1] if text else ""


def sites(ex: Extractor) -> list[SinkSite]:
    """Every catalogue sink site of the file."""
    dialect = QUERY_DIALECT[ex.lang]
    data = ex.data
    out: list[SinkSite] = []
    in_use = used(dialect, data)
    for sdk in in_use:
        for sink in sdk.sinks:
            last = sink.call.replace("::", ".").rsplit(".", 1)[-1]
            if last.encode() not in data:
                continue
            for call in ex.call_nodes(last):
                name = _callee_text(ex, call)
                if not _suffix(name, sink.call):
                    continue
                if sink.receivers and _receiver_last(name, sink.call) not in sink.receivers:
                    continue
                if sink.handles and _handle_last(ex, call) not in sink.handles:
                    continue
                value = select(ex, call, sink.arg, sink.key)
                if sdk.not_process and _built_by(ex, call, value, sdk.not_process):
                    continue
                callee = call.child_by_field_name(ex.CALLEE_FIELD) or call
                rest = _args_of(ex, call, sink)
                out.append(
                    SinkSite(f"catalogue:{sdk.name}", sink.kind, call, value, callee, rest=rest)
                )
        for builder, _handler in sdk.builders:
            last = builder.rsplit(".", 1)[-1]
            for call in ex.call_nodes(last):
                if _suffix(_callee_text(ex, call), builder):
                    callee = call.child_by_field_name(ex.CALLEE_FIELD) or call
                    args = call.child_by_field_name("arguments")
                    out.append(SinkSite(f"catalogue:{sdk.name}", "process", call, args, callee))
    out.extend(_api_sites(ex, dialect))
    out.extend(_forwarded_sites(ex, dialect, in_use))
    out.extend(_http_exec_sites(ex, dialect))
    return out


def _http_exec_sites(ex: Extractor, dialect: str) -> list[SinkSite]:
    """POSTs of a command to a sandbox server's exec endpoint (`[[http_exec]]`):
    `http.post(self._url("exec"), json={"argv": argv})`."""
    out: list[SinkSite] = []
    for entry in http_execs(dialect):
        if not any(v.split(".", 1)[0] in entry.modules for v in ex.imports.values()):
            continue
        for last in entry.calls:
            for call in ex.call_nodes(last):
                callee = call.child_by_field_name(ex.CALLEE_FIELD)
                if callee is None or callee.type != "attribute":
                    continue
                url = _local_value(ex, call, select(ex, call, 0, "url"))
                if url is None or not _names_path(ex, url, entry.paths):
                    continue
                bodies = (_keyword(ex, call, k) for k in entry.body)
                record = _local_value(ex, call, next((b for b in bodies if b), None))
                if record is None:
                    continue
                for keys, kind in ((entry.argv_keys, "remote-argv"), (entry.string_keys, "remote")):
                    value = next(
                        (v for v in (_keyed(ex, record, k) for k in keys) if v is not None), None
                    )
                    if value is not None:
                        out.append(SinkSite("catalogue:http-exec", kind, call, value, callee))
                        break
    return out


def _keyword(ex: Extractor, call: ts.Node, name: str) -> ts.Node | None:
    """The value of keyword argument `name` of `call`, if given."""
    anode = call.child_by_field_name("arguments")
    for a in anode.named_children if anode is not None else ():
        if a.type == "keyword_argument" and ex.text(a.child_by_field_name("name")) == name:
            return a.child_by_field_name("value")
    return None


def _local_value(ex: Extractor, call: ts.Node, node: ts.Node | None) -> ts.Node | None:
    """`node`, or for a local variable the expression of its one definition in the function
    of `call` (`url = self._url("exec")`, `payload = {"argv": argv}`)."""
    if node is None or node.type != "identifier":
        return node
    defs = ex.filled(ex.function_at(call)).defs.get(ex.text(node), [])
    spans = {(d.value.span.start_byte, d.value.span.end_byte) for d in defs if d.kind == "assign"}
    if len(spans) != 1:
        return None
    start, end = next(iter(spans))
    return ex.root.descendant_for_byte_range(start, end)


def _names_path(ex: Extractor, url: ts.Node, paths: frozenset[str]) -> bool:
    """True if a string literal of `url` has a path segment (`/exec`, `"exec"`) in `paths`."""
    stack = [url]
    while stack:
        node = stack.pop()
        if node.type in ("string_content", "string_fragment"):
            segments = re.split(r"[/?#]", ex.text(node))
            if any(seg in paths for seg in segments):
                return True
        stack.extend(node.children)
    return False


def _forwarder_calls(ex: Extractor, dialect: str) -> list[tuple[ts.Node, int]]:
    """(call node, position of the callable) of every forwarder call of the file."""
    out: list[tuple[ts.Node, int]] = []
    for last in sorted(forwarders.last_names(dialect)):
        if last.encode() not in ex.data:
            continue
        for call in ex.call_nodes(last):
            f = forwarders.library_match(dialect, _callee_text(ex, call), ex.resolve_callee(call))
            if f is not None:
                out.append((call, f.fn))
    found = forwarders.local(ex)
    for name in sorted(forwarders.local_names(ex)):
        targets = [f for f in ex.functions_named(name) if f.key in found]
        spots = {(found[f.key][0], f.self_param) for f in targets}
        if len(spots) != 1:
            continue
        index, self_param = next(iter(spots))
        for call in ex.call_nodes(name):
            callee = call.child_by_field_name(ex.CALLEE_FIELD)
            via_attr = callee is not None and callee.type in ("attribute", "member_expression")
            out.append((call, index - (1 if self_param and via_attr else 0)))
    return out


def _forwarded_sites(ex: Extractor, dialect: str, in_use: tuple[Sdk, ...]) -> list[SinkSite]:
    """Forwarder calls given a sink as their callable (`asyncio.to_thread(subprocess.run,
    cmd, shell=True)`, `self._call(self._sandbox.exec, *argv)`): the forwarder call is the
    sink site, and the sink's arguments are the forwarder's after the callable."""
    from boundary_audit.static.handles import HANDLE_CONSTRUCTORS

    calls = _forwarder_calls(ex, dialect)
    if not calls:
        return []
    names = api_names(dialect)
    out: list[SinkSite] = []
    for call, index in calls:
        head = forwarders.callable_at(ex, call, index)
        if head is None or index < 0:
            continue
        skip = index + 1
        if head.type in ex.CALL_TYPES:
            inner = _callee_text(ex, head)
            if forwarders.library_match(dialect, inner, ex.resolve_callee(head)):
                continue  # `run_in_executor(None, partial(f, x))`: the partial is the site
        resolved = ex.callee_name(ex.expr(head))
        if resolved and (resolved in HANDLE_CONSTRUCTORS or resolved in names):
            out.append(SinkSite("catalogue:forwarder", "process", call, None, head, skip))
            continue
        stream = _stdin_stream(ex, call, head) if dialect == "python" else None
        if stream is not None:
            value = forwarders.callable_at(ex, call, skip)
            if value is not None:
                out.append(SinkSite("BA201", "stdin", call, value, stream, skip))
            continue
        text = _norm(ex.text(head))
        for sdk in in_use:
            for sink in sdk.sinks:
                if not _suffix(text, sink.call):
                    continue
                if sink.receivers and _receiver_last(text, sink.call) not in sink.receivers:
                    continue
                value = select(ex, call, sink.arg, sink.key, skip)
                site = SinkSite(f"catalogue:{sdk.name}", sink.kind, call, value, head, skip)
                out.append(site)
    return out


_STDIN_NAME = re.compile(r"^_*(stdin|shell_stdin|proc_stdin)$")
"""The stream names of the shell-stdin-write query (queries/python/shell-stdin-write.scm)."""


def _stdin_stream(ex: Extractor, call: ts.Node, head: ts.Node) -> ts.Node | None:
    """The stdin stream whose `write` a forwarder is given (`asyncio.to_thread(proc.stdin.write,
    data)`, `self._call(write, data)` after `write = getattr(stdin, "write", None)` and
    `stdin = process.stdin`): the stream node, or None."""
    node = _local_value(ex, call, head)
    if node is None:
        return None
    if node.type == "attribute":
        stream, name = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        method = ex.text(name) if name is not None else ""
    elif node.type == "call" and ex.text(node.child_by_field_name("function")) == "getattr":
        anode = node.child_by_field_name("arguments")
        args = [a for a in anode.named_children if a.type != "comment"] if anode else []
        if len(args) < 2 or args[1].type != "string":
            return None
        stream, method = args[0], ex.text(args[1]).strip("'\"")
    else:
        return None
    if stream is None or method not in ("write", "writelines"):
        return None
    last = stream.child_by_field_name("attribute") if stream.type == "attribute" else stream
    if last is None or last.type != "identifier" or not _STDIN_NAME.match(ex.text(last)):
        return None
    return stream


_WRAPPERS = ("reference_expression", "parenthesized_expression", "unary_expression")


def _built_by(ex: Extractor, call: ts.Node, value: ts.Node | None, names: tuple[str, ...]) -> bool:
    """True if `value` (through `&`) is a call of one of `names`, or a local variable of the
    enclosing function every definition of which is one."""
    from boundary_audit.static.ir import Call

    while value is not None and value.type in _WRAPPERS and value.named_child_count == 1:
        value = value.named_children[0]
    if value is None:
        return False
    if value.type in ex.CALL_TYPES:
        return any(_suffix(_callee_text(ex, value), n) for n in names)
    if value.type != "identifier":
        return False
    defs = ex.filled(ex.function_at(call)).defs.get(ex.text(value), [])
    return bool(defs) and all(
        isinstance(d.value, Call)
        and any(_suffix(d.value.name.replace("::", "."), n) for n in names)
        for d in defs
    )


def _api_sites(ex: Extractor, dialect: str) -> list[SinkSite]:
    """Process API calls whose callee resolves to a catalogue API through an alias."""
    names = api_names(dialect)
    if not names:
        return []
    out: list[SinkSite] = []
    heads, static = _api_locals(dialect)
    locals_ = set(static)
    for alias, target in ex.imports.items():
        if target.replace("::", ".") in heads:
            locals_.add(alias)
    seen: set[int] = set()
    for local in sorted(locals_):
        if not local.replace("_", "a").replace("$", "a").isalnum():
            continue
        for node in ex.name_nodes(local):
            call = _enclosing_call(ex, node)
            if call is None or call.start_byte in seen:
                continue
            resolved = ex.resolve_callee(call)
            if resolved in names or ("." in resolved and resolved.rsplit(".", 1)[-1] in names):
                seen.add(call.start_byte)
                callee = call.child_by_field_name(ex.CALLEE_FIELD) or call
                args = call.child_by_field_name("arguments")
                out.append(SinkSite("catalogue:api", "process", call, args, callee))
    return out


@cache
def _api_locals(dialect: str) -> tuple[frozenset[str], frozenset[str]]:
    """(`heads`, `static`) of `dialect`'s process API names: an import whose target is in
    `heads` (a name or a dotted prefix of one: `subprocess`, `asyncio.subprocess`) makes its
    local name a candidate callee; `static` are the candidates of every file (the names'
    last parts, undotted names, and the dynamic spellings)."""
    names = api_names(dialect)
    heads = set(names)
    static: set[str] = set()
    for n in names:
        heads.update(n[:i] for i, c in enumerate(n) if c == ".")
        static.add(n.rsplit(".", 1)[-1])
        if "." not in n and "/" not in n:
            static.add(n)
    if dialect == "python":
        static.update(("getattr", "__import__", "import_module"))
    return frozenset(heads), frozenset(static)


def _enclosing_call(ex: Extractor, node: ts.Node) -> ts.Node | None:
    """The call whose callee contains `node`: `f(...)`, `a.f(...)`, `getattr(a, "f")(...)`."""
    cur = node
    for _ in range(6):
        parent = cur.parent
        if parent is None:
            return None
        if parent.type in ex.CALL_TYPES or parent.type == "composite_literal":
            callee = (
                parent.child_by_field_name(ex.CALLEE_FIELD)
                or parent.child_by_field_name("constructor")
                or parent.child_by_field_name("type")
            )
            if callee is not None and callee.start_byte <= node.start_byte < callee.end_byte:
                return parent
            if parent.type in ex.CALL_TYPES and cur.type in ("argument_list", "arguments"):
                cur = parent
                continue
            return None
        cur = parent
    return None


def select(
    ex: Extractor, call: ts.Node, arg: int | str, key: str | None, skip: int = 0
) -> ts.Node | None:
    """The argument node of `call` a sink entry names (position, then key); None if absent.
    `skip`: leading positional arguments that are not the sink's (a forwarder's callable);
    for `arg = "*"` the whole list is returned and the site's `skip` says what to drop."""
    anode = call.child_by_field_name("arguments")
    if anode is None:
        return None
    if arg == "*":
        return anode
    kids = [a for a in anode.named_children if a.type != "comment"]
    if key is not None:
        given = _keyword(ex, call, key)
        if given is not None:
            return given
    positional = [a for a in kids if a.type != "keyword_argument"][skip:]
    index = int(arg)
    if not -len(positional) <= index < len(positional):
        return None
    node = positional[index]
    if key is not None:
        inner = _keyed(ex, node, key)
        if inner is not None:
            return inner
    return node


def _args_of(ex: Extractor, call: ts.Node, sink: SdkSink) -> ts.Node | None:
    """The arguments under `sink.args_key` of a record literal argument; None when the call
    passes no such literal (`runCommand(params)`: the program and arguments are not apart)."""
    if sink.args_key is None:
        return None
    whole = select(ex, call, sink.arg, None)
    found = select(ex, call, sink.arg, sink.args_key)
    return None if found is None or found == whole else found


def _keyed(ex: Extractor, node: ts.Node, key: str) -> ts.Node | None:
    """The value under `key` in a dict/object literal or in a constructor call's keywords."""
    if node.type in ("dictionary", "object"):
        for pair in node.named_children:
            if pair.type == "pair":
                k = ex.text(pair.child_by_field_name("key")).strip("'\"`")
                if k == key:
                    return pair.child_by_field_name("value")
            elif pair.type == "shorthand_property_identifier" and ex.text(pair) == key:
                return pair
    if node.type in ex.CALL_TYPES:
        args = node.child_by_field_name("arguments")
        for a in args.named_children if args is not None else ():
            if a.type == "keyword_argument" and ex.text(a.child_by_field_name("name")) == key:
                return a.child_by_field_name("value")
            if a.type in ("dictionary", "object"):
                inner = _keyed(ex, a, key)
                if inner is not None:
                    return inner
    return None


__all__ = [
    "Sdk",
    "SdkSink",
    "api_handlers",
    "may_have_sites",
    "sdks",
    "sites",
    "unwrapped",
    "used",
    "uses",
    "warm",
]
