"""Transports: one module per boundary mechanism, registered by name in TRANSPORTS.

Add a transport by writing one module with a `Transport` subclass and one line here. Variants
of one mechanism (the tokenizer of `argv`, `send-keys -l` of `tmux`, the interpreter of
`script`) are subclasses with their own registry name. The order of TRANSPORTS is the order
of reports: the reference path first, then by how far R travels from it.

| name | mechanism | class |
|---|---|---|
| raw | `[bash, -c, R]` (Codex: `bash -lc R`) | shell-string |
| nested | `bash -c "R"` parsed by a second bash (the study's added parser) | nested-string |
| nested-escaped | the same with `shlex.quote(R)` | nested-string |
| stdin | R on the stdin of a one-shot bash | shell-stdin |
| session | interactive bash on a pty, PS1 marker + `$?` probe (SWE-ReX) | shell-session |
| session-pipe | bash on pipes, line-start done marker (LangChain) | shell-session |
| tmux-keys | tmux `send-keys R "; tmux wait -S done" Enter` (Terminal-Bench) | tty-keystrokes |
| tmux-literal | tmux `send-keys -l`, then `Enter` (OpenHands) | tty-keystrokes |
| argv-shlex / argv-split / argv-shell-quote | tokenized, spawned with no shell | argv-direct |
| script-bash / script-sh | R in a temp file, `[interpreter, file]` (AutoGen) | script-file |
| ssh | `ssh localhost "R"` to a real sshd (Table 9) | remote-string |
| docker | `docker exec C sh -c R` on a real engine | remote-string |
| json-naive / json-correct | R in a JSON tool call by concatenation / `json.dumps` | serialized |
"""

from __future__ import annotations

from typing import Any

from boundary_audit.errors import UsageError
from boundary_audit.transports.argv import (
    ArgvShellQuoteTransport,
    ArgvShlexTransport,
    ArgvSplitTransport,
)
from boundary_audit.transports.docker import DockerTransport
from boundary_audit.transports.interface import Transport, TransportResult
from boundary_audit.transports.json_correct import JsonCorrectTransport
from boundary_audit.transports.json_naive import JsonNaiveTransport
from boundary_audit.transports.nested import NestedTransport
from boundary_audit.transports.nested_escaped import NestedEscapedTransport
from boundary_audit.transports.raw import RawTransport
from boundary_audit.transports.script import ScriptBashTransport, ScriptShTransport
from boundary_audit.transports.session import SessionTransport
from boundary_audit.transports.session_pipe import SessionPipeTransport
from boundary_audit.transports.ssh import SshTransport
from boundary_audit.transports.stdin import StdinTransport
from boundary_audit.transports.tmux import TmuxKeysTransport, TmuxLiteralTransport

TRANSPORTS: dict[str, type[Transport]] = {
    cls.name: cls
    for cls in (
        RawTransport,
        NestedTransport,
        NestedEscapedTransport,
        StdinTransport,
        SessionTransport,
        SessionPipeTransport,
        TmuxKeysTransport,
        TmuxLiteralTransport,
        ArgvShlexTransport,
        ArgvSplitTransport,
        ArgvShellQuoteTransport,
        ScriptBashTransport,
        ScriptShTransport,
        SshTransport,
        DockerTransport,
        JsonNaiveTransport,
        JsonCorrectTransport,
    )
}


def make_transport(name: str, **params: Any) -> Transport:
    """Instantiate transport `name` with `params`; unknown names are a usage error."""
    try:
        cls = TRANSPORTS[name]
    except KeyError:
        known = ", ".join(TRANSPORTS)
        raise UsageError(f"unknown transport {name!r} (known: {known})") from None
    return cls(**params)


__all__ = ["TRANSPORTS", "Transport", "TransportResult", "make_transport"]
