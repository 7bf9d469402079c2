"""From the canaries' chains to a boundary path, in the adapters' own model.

`classify(chains, contract)` derives the boundary from what the trace showed, never from the
harness's name or code; `to_path` writes it as an `adapters.model.BoundaryPath`, so an
observed harness and an adapter's path can be compared field by field (`compare`).

The rules (DESIGN.md's taxonomy), by the number of shell parses first, then by how the token
reached the one shell that parsed it:

- 0 parses (spawned by a non-shell): argv-direct; transport argv-shlex, argv-split or
  argv-shell-quote, whichever tokenizer of R gives the marker's argv;
- 1, its `-c` string: shell-string, raw {shell, flags};
- 1, its stdin, a shell per canary: shell-stdin, stdin {shell, flags};
- 1, its stdin, one shell for several canaries: shell-session, session-pipe {shell: argv};
- 1, a pty fed by a tmux server: tty-keystrokes, tmux-literal (send-keys -l) or tmux-keys;
- 1, a pty with no tmux in between: shell-session, session {shell: argv};
- 1, a file it was given as its script: script-file, script-bash or script-sh {prefix};
- 1, an ssh session's command (ssh got R as one argv word): remote-string, ssh {quoting: argv};
- 2 or more, through ssh after a local shell: nested-string, ssh {quoting: double|escaped};
- 2 or more, a command string inside another: nested-string, nested (R between double quotes,
  or any lossy outer parse) or nested-escaped (`shlex.quote(R)`, or the inner string is R).

A canary that never ran but whose token reached `docker exec` / `podman exec` in argv is
remote-string (docker), inferred from the client's argv: the container's side is not traced.
`serialized` is never derived: it is about how R is encoded in JSON, which a process chain
does not show. Where the chains of several canaries disagree, the first arrived canary's chain
decides and a note says so. Persistence (`Derived.persistent`) is measured only with two or
more canaries: the same shell process parsed them all.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from boundary_audit.adapters.model import BoundaryPath, TransportSpec
from boundary_audit.errors import BoundaryAuditError, ExitCode
from boundary_audit.observe.canary import Canary
from boundary_audit.observe.chain import (
    ARGV,
    FILE,
    MODEL,
    PTY,
    REMOTE,
    SOCKET,
    SOURCE,
    SPAWNED,
    STDIN,
    Chain,
    Hop,
)
from boundary_audit.observe.shells import SHELLS
from boundary_audit.taxonomy import BoundaryClass, Contract
from boundary_audit.transports import TRANSPORTS
from boundary_audit.transports.argv import (
    tokenize_shell_quote,
    tokenize_shlex,
    tokenize_split,
)

CONTAINER_CLIENTS = frozenset({"docker", "podman"})


class ObserveError(BoundaryAuditError):
    """An observation could not be made or says nothing (the canary never arrived)."""

    exit_code = ExitCode.RUN


@dataclass(frozen=True)
class Derived:
    """The boundary the chains show."""

    boundary_class: BoundaryClass | None
    """None when no canary arrived and nothing carried it far enough to say."""
    shell_parses: int
    transport: TransportSpec
    parse_layers: tuple[str, ...]
    observed: str
    persistent: bool | None
    """One shell parsed every canary (None: fewer than two arrived)."""
    relays: tuple[str, ...]
    """Programs between the harness and the parsing shell that carried the bytes on
    (a tmux server, script(1), an ssh client, a container client)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Difference:
    """One field where an observed path and an adapter's path disagree."""

    field: str
    observed: Any
    adapter: Any


def classify(chains: Sequence[Chain], contract: Contract = Contract.RAW) -> Derived:
    """The boundary `chains` (one per canary, in reply order) show."""
    del contract  # the class does not depend on it; `to_path` records it
    arrived = [c for c in chains if c.arrived]
    notes: list[str] = []
    if not arrived:
        return _not_arrived(chains)
    chain = arrived[0]
    parsers = [h for h in chain.hops if h.parses]
    persistent = _persistent(arrived)
    carried = _carried(chain)
    relays = tuple(h.program for h in carried[1:-1] if not h.parses and h.shell is None)
    cls, transport, more = _derive(chain, parsers, persistent)
    notes += more
    for other in arrived[1:]:
        o_cls, o_transport, _ = _derive(other, [h for h in other.hops if h.parses], persistent)
        if (o_cls, o_transport.name) != (cls, transport.name):
            notes.append(
                f"canary {other.canary.label} took another way ({o_cls.value}, "
                f"{o_transport.name or 'no transport'}): {chain.canary.label} decides"
            )
    missing = [c.canary.label for c in chains if not c.arrived]
    if missing:
        notes.append(
            f"canaries {', '.join(missing)}: no marker in the trace (never ran, or untraced)"
        )
    if not chain.complete:
        notes.append("the chain does not reach the harness: the trace does not show every hop")
    layers = tuple(_layer(h, chain.canary) for h in carried[1:-1])
    n = len(parsers)
    observed = "R reaches " + " -> ".join(layers or ("the marker directly",))
    observed += f" ({n} shell parse{'' if n == 1 else 's'})"
    return Derived(cls, n, transport, layers, observed, persistent, relays, tuple(notes))


def _carried(chain: Chain) -> tuple[Hop, ...]:
    """The hops from the one that got the reply (the harness, or the image that asked the
    model) to the marker: the launchers before it carried nothing."""
    hops = chain.hops
    start = next((i for i, h in enumerate(hops) if h.via == MODEL), 0)
    return hops[start:]


def _persistent(arrived: Sequence[Chain]) -> bool | None:
    if len(arrived) < 2:
        return None
    keys = set()
    for chain in arrived:
        parser = chain.parser
        if parser is None or parser.shell is None:
            return False
        keys.add((parser.trace, parser.pid))
    return len(keys) == 1


def _derive(
    chain: Chain, parsers: list[Hop], persistent: bool | None
) -> tuple[BoundaryClass, TransportSpec, list[str]]:
    reply = chain.canary.reply
    notes: list[str] = []
    if not parsers:
        return BoundaryClass.ARGV_DIRECT, _tokenizer(chain, notes), notes
    if len(parsers) >= 2:
        outer = parsers[0]
        if any(h.via == REMOTE for h in chain.hops):
            command = outer.shell.command if outer.shell else None
            quoting = "escaped" if command and shlex.quote(reply) in command else "double"
            if command and quoting == "double" and f'"{reply}"' not in command:
                notes.append("the local command line does not hold R between double quotes")
            return BoundaryClass.NESTED_STRING, TransportSpec("ssh", {"quoting": quoting}), notes
        command = outer.shell.command if outer.shell else ""
        inner = parsers[1].shell.command if parsers[1].shell else None
        if command and shlex.quote(reply) in command:
            name = "nested-escaped"
        elif command and f'"{reply}"' in command:
            name = "nested"
        elif inner == reply:
            name = "nested-escaped"
            notes.append("the outer parse left R intact, though not through shlex.quote")
        else:
            name = "nested"
            notes.append('the outer command is not the study\'s `bash -c "R"`: a lossy parse')
        if len(parsers) > 2:
            notes.append(f"{len(parsers)} shells parse R, one more than the transport has")
        return BoundaryClass.NESTED_STRING, TransportSpec(name), notes
    shell = parsers[0]
    call = shell.shell
    assert call is not None  # only shells parse
    if shell.via == REMOTE:
        return BoundaryClass.REMOTE_STRING, TransportSpec("ssh", {"quoting": "argv"}), notes
    if shell.via == ARGV:
        params = {"shell": call.shell, "flags": call.flags}
        return BoundaryClass.SHELL_STRING, TransportSpec("raw", params), notes
    if shell.via == FILE:
        name = {"bash": "script-bash", "sh": "script-sh", "dash": "script-sh"}.get(call.shell, "")
        if not name:
            notes.append(f"no script transport runs {call.shell}")
        params = {"prefix": " ".join(shell.wrapper)} if shell.wrapper else {}
        return BoundaryClass.SCRIPT_FILE, TransportSpec(name, params), notes
    if shell.via == PTY:
        keys = next((h for h in chain.hops if h.program == "tmux" and h.via == ARGV), None)
        if any(h.program == "tmux" for h in chain.hops):
            literal = keys is not None and "-l" in keys.argv
            name = "tmux-literal" if literal else "tmux-keys"
            return BoundaryClass.TTY_KEYSTROKES, TransportSpec(name, _shell(shell)), notes
        if persistent is False:
            notes.append("a fresh pty shell per reply; the session transport keeps one")
        return BoundaryClass.SHELL_SESSION, TransportSpec("session", _shell(shell)), notes
    if shell.via == STDIN:
        if persistent:
            spec = TransportSpec("session-pipe", _shell(shell))
            return BoundaryClass.SHELL_SESSION, spec, notes
        if persistent is None:
            notes.append("one canary only: a persistent session cannot be told from a one-shot")
        params = {"shell": call.shell, "flags": " ".join(call.options)}
        return BoundaryClass.SHELL_STDIN, TransportSpec("stdin", params), notes
    notes.append(f"the shell that ran the marker got R by {shell.via}: taken as its -c string")
    params = {"shell": call.shell, "flags": call.flags}
    return BoundaryClass.SHELL_STRING, TransportSpec("raw", params), notes


def _shell(hop: Hop) -> dict[str, Any]:
    return {"shell": (*hop.wrapper, *hop.argv)}


def _tokenizer(chain: Chain, notes: list[str]) -> TransportSpec:
    marker = chain.hops[-1]
    got = marker.argv[1:]
    reply = chain.canary.reply
    for name, split in (
        ("argv-shlex", tokenize_shlex),
        ("argv-split", tokenize_split),
        ("argv-shell-quote", tokenize_shell_quote),
    ):
        try:
            words = split(reply)
        except (ValueError, BoundaryAuditError):
            continue
        if tuple(words[1:]) == got:
            return TransportSpec(name)
    notes.append("the marker's argv is no known tokenizer's split of R")
    return TransportSpec("")


def _not_arrived(chains: Sequence[Chain]) -> Derived:
    for chain in chains:
        hop = chain.hops[-1] if chain.hops else None
        if hop is not None and hop.program in CONTAINER_CLIENTS and "exec" in hop.argv:
            layers = tuple(_layer(h, chain.canary) for h in chain.hops[1:])
            note = (
                f"inferred from the {hop.program} client's argv: the container's side is not "
                "traced, so its shell parse is assumed, not seen"
            )
            return Derived(
                BoundaryClass.REMOTE_STRING,
                1,
                TransportSpec("docker"),
                layers,
                f"R reaches {' -> '.join(layers)} (the container is not traced)",
                None,
                (hop.program,),
                (note,),
            )
    return Derived(
        None,
        0,
        TransportSpec(""),
        (),
        "no canary ran: the harness never started a marker",
        None,
        (),
        ("no canary's marker is in the trace",),
    )


def _words(hop: Hop, canary: Canary) -> str:
    """The hop's argv after argv[0], the reply shown as R (or `...R...` inside a word)."""
    out = []
    for word in hop.argv[1:]:
        if word == canary.reply:
            out.append("R")
        elif canary.token in word:
            out.append("'...R...'")
        else:
            out.append(shlex.quote(word))
    return " ".join(out)


def _layer(hop: Hop, canary: Canary) -> str:
    """One hop as a parse layer, the way the adapters list them."""
    name = " ".join((*hop.wrapper, *hop.argv[:1])) if hop.wrapper else hop.program
    call = hop.shell
    if hop.via == ARGV and call is not None and call.command is not None and hop.parses:
        return f"argv -> {call.shell} {call.flags} (shell parse)"
    if hop.via == ARGV:
        return f"argv -> {hop.program} {_words(hop, canary)}".rstrip()
    if hop.via == REMOTE:
        return f"ssh session -> remote {call.shell if call else hop.program} -c (shell parse)"
    if hop.via == FILE:
        runner = call.shell if call is not None and hop.program not in SHELLS else name
        return f"file -> {runner} FILE" + (" (shell parse)" if hop.parses else "")
    if hop.via == STDIN:
        parse = " (shell parse)" if hop.parses else ""
        return f"stdin -> {name}{parse}" if parse else f"stdin -> {name} (relay)"
    if hop.via == PTY:
        interactive = call is not None and ("i" in call.letters or call.reads_stdin)
        line = "pty line discipline"
        return f"{line} -> {name}" + (" (readline, shell parse)" if interactive else "")
    if hop.via == SOCKET:
        return f"unix socket -> {name} (relay)"
    if hop.via in (SOURCE, SPAWNED):
        return name
    if hop.via == MODEL:
        return f"model answer over HTTP -> {name}"
    return f"{hop.via} -> {name}"


def to_path(
    derived: Derived,
    contract: Contract = Contract.RAW,
    *,
    path_id: str = "observed",
    title: str = "observed from the harness's behaviour",
    expect: Mapping[str, str] | None = None,
) -> BoundaryPath:
    """`derived` as an adapter's BoundaryPath; ObserveError when no class was derived."""
    if derived.boundary_class is None:
        raise ObserveError(f"no boundary could be derived: {derived.observed}")
    return BoundaryPath(
        id=path_id,
        title=title,
        row=True,
        extra=True,
        contract=contract,
        boundary_class=derived.boundary_class,
        shell_parses=derived.shell_parses,
        parse_layers=(
            ("JSON decode of the tool call's arguments", *derived.parse_layers)
            if contract is Contract.NATIVE
            else derived.parse_layers
        ),
        observed=derived.observed,
        fix="",
        transport=derived.transport,
        expect=dict(expect or {}),
        notes=derived.notes,
    )


COMPARED = ("contract", "boundary_class", "shell_parses", "transport", "expect")
"""The fields `compare` looks at. parse_layers and observed are descriptions, not compared."""


def compare(observed: BoundaryPath, adapter: BoundaryPath) -> tuple[Difference, ...]:
    """Where `observed` and `adapter` disagree: contract, class, shell parses, transport name,
    the transport parameters the observation measured (against the adapter's, over the
    transport's defaults), and every probe outcome both name."""
    found = [
        Difference(f, getattr(observed, f), getattr(adapter, f))
        for f in ("contract", "boundary_class", "shell_parses")
        if getattr(observed, f) != getattr(adapter, f)
    ]
    a, o = adapter.transport, observed.transport
    if a.name != o.name:
        found.append(Difference("transport.name", o.name, a.name))
    else:
        defaults = dict(TRANSPORTS[a.name].defaults) if a.name in TRANSPORTS else {}
        theirs = {**defaults, **a.params}
        for key, value in sorted(o.params.items()):
            if _norm(theirs.get(key)) != _norm(value):
                found.append(Difference(f"transport.params.{key}", value, theirs.get(key)))
    found.extend(
        Difference(f"expect.{probe}", observed.expect[probe], adapter.expect[probe])
        for probe in sorted(set(observed.expect) & set(adapter.expect))
        if observed.expect[probe] != adapter.expect[probe]
    )
    return tuple(found)


def _norm(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value
