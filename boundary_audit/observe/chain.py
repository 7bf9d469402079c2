"""The canary's way from the harness to its own execve, read backwards out of the trace.

`trace_chain(trees, canary)` starts at the marker's image (its file name is the canary's
token) and asks of each image, beginning with the one that started the marker, how the token
reached it. The first rule that holds names the hop's carrier (`via`) and the image the token
came from, which is asked the same question next:

0. the image talked to the model endpoint (a TCP connection to `endpoint`, the mock server's
   address inside the sandbox, that it wrote a request into before passing the token on):
   `model`, it got the reply as the model's answer; the chain is complete, and the images
   that started this one, back to the harness's first (an npm launcher that spawns the real
   binary), are added as `launched` hops: the reply never passed through them;
1. the harness's own first image: `argv` if the token is in its argv, else `source` (it got
   the reply from the reply source); the chain is complete;
2. the root of a remote trace (an sshd session's command, traced in its own run): `remote`;
   it came from the ssh client image whose joined command words are that command;
3. the token is in one of the image's argv words: `argv`; it came from the image's creator
   (the image that exec'd it, or that forked the process which exec'd it);
4. a file named by one of its argv words, or the file it exec'd, received the token: `file`;
   it came from the writer (a file exec'd by its own path is read by the interpreter of its
   `#!` line, as written in the trace, which decides whether the hop is a shell);
5. its stdin received the token: a pipe it shares with a writer, or a socket whose peer the
   writer wrote into (`stdin`), or a pty slave whose master was written with it (`pty`);
6. a unix socket its process used had the token written into the other end: `socket` (a relay
   such as a tmux server, which gets keys from `tmux send-keys` over its socket);
7. otherwise `unknown`: the chain stops there, incomplete.

Only writes before the event that passed the token on count, and the token is searched in the
concatenated bytes of one process's writes into one channel, so a reply split over several
writes is still found. A hop `parses` the token when it is a shell and the token is in the
text it runs as commands: its `-c` string, its script file, its stdin, its remote command;
a shell that started the marker and whose input the trace cannot show (rule 1 or 7) parsed it
too. The token as a positional argument (`sh -c 'exec "$@"' x TOKEN`) is not parsed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from boundary_audit.observe.canary import Canary
from boundary_audit.observe.shells import ShellCall, parse_shell
from boundary_audit.observe.tree import Image, ProcessTree, Write

SOURCE = "source"
MODEL = "model"
ARGV = "argv"
REMOTE = "remote"
FILE = "file"
STDIN = "stdin"
PTY = "pty"
SOCKET = "socket"
SPAWNED = "spawned"
"""The marker itself: started by the hop before it."""
LAUNCHED = "launched"
"""An image before the one that asked the model (an npm launcher, a wrapper script): it
started that image; the reply never passed through it."""
UNKNOWN = "unknown"
MAX_HOPS = 64
SSH_OPTIONS_WITH_VALUE = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
"""The ssh client's options that take a value (OpenSSH 9: `ssh -F cfg -o opt -p 22 host`)."""


@dataclass(frozen=True)
class Hop:
    """One image the canary's bytes passed through."""

    trace: str
    pid: int
    program: str
    argv: tuple[str, ...]
    via: str
    """How the token reached this image (the module docstring's rules)."""
    detail: str
    """What carried it: `pipe 123 written by pid 5`, `/tmp/x.sh written by pid 7`..."""
    shell: ShellCall | None
    parses: bool
    """This hop is a shell that parsed the token as command text."""
    wrapper: tuple[str, ...] = ()
    """The leading words of the image that started this one, when that image's argv ends with
    this one's: a program that runs its arguments as a command (`timeout 60` of `timeout 60
    sh FILE`, which forks it; `/usr/bin/env` of `env bash`, which execs it)."""


@dataclass(frozen=True)
class Chain:
    """The way one canary took, harness first."""

    canary: Canary
    hops: tuple[Hop, ...]
    arrived: bool
    """The marker's execve is in the trace."""
    complete: bool
    """The chain reaches the harness (no `unknown` hop)."""

    @property
    def shell_parses(self) -> int:
        """How many shells parsed the token on the way."""
        return sum(1 for h in self.hops if h.parses)

    @property
    def parser(self) -> Hop | None:
        """The hop that started the marker (None if it never ran)."""
        return self.hops[-2] if self.arrived and len(self.hops) > 1 else None

    def argvs(self) -> list[list[str]]:
        """Each hop's argv, harness first: what tests and reports compare."""
        return [list(h.argv) for h in self.hops]


def ssh_command(argv: Sequence[str]) -> tuple[str, str] | None:
    """(host, command) of an ssh client argv, the command as ssh joins it; None if no host."""
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if word.startswith("-") and len(word) > 1:
            letter = word[-1]
            i += 2 if letter in SSH_OPTIONS_WITH_VALUE and len(word) == 2 else 1
            continue
        break
    if i >= len(argv):
        return None
    return argv[i], " ".join(argv[i + 1 :])


class _Carriers:
    """The writes that carried one token, per trace."""

    def __init__(self, trees: Sequence[ProcessTree], token: str, reply: str) -> None:
        self.token = token
        self.reply = reply.encode("utf-8", "surrogateescape")
        self.found: list[Write] = []
        for tree in trees:
            streams: dict[tuple[int, str], list[Write]] = {}
            for w in tree.writes:
                streams.setdefault((w.pid, w.channel.key), []).append(w)
            for writes in streams.values():
                self.found += _containing(writes, token.encode())
        self.found.sort(key=lambda w: (w.trace, w.line))

    def best(self, trace: str, before: int, match: Callable[[Write], bool]) -> Write | None:
        """The write that most likely carried the reply on, among those before `before` that
        `match`: one by an image that had the token in its argv first (a `tmux send-keys`
        client, not another client forwarding an environment that holds the replies), then
        one holding the whole reply, then the latest."""
        hits = [w for w in self.found if w.trace == trace and w.line < before and match(w)]
        if not hits:
            return None

        def rank(w: Write) -> tuple[bool, bool, int]:
            argv = w.image.argv if w.image is not None and w.image.argv else ()
            return (_has(argv, self.token), self.reply in w.data, w.line)

        return max(hits, key=rank)


def _containing(writes: list[Write], token: bytes) -> list[Write]:
    """The writes (of one stream) in which an occurrence of `token` starts."""
    stream = b"".join(w.data for w in writes)
    found: list[Write] = []
    start = stream.find(token)
    while start >= 0:
        offset = 0
        for w in writes:
            if offset <= start < offset + len(w.data):
                if not found or found[-1] is not w:
                    found.append(w)
                break
            offset += len(w.data)
        start = stream.find(token, start + 1)
    return found


def trace_chain(trees: Sequence[ProcessTree], canary: Canary, endpoint: str | None = None) -> Chain:
    """The chain of `canary` through the traced runs `trees` (the harness's own first);
    `endpoint` (`127.0.0.1:PORT`) is the model's address when the replies came from one."""
    token = canary.token
    carriers = _Carriers(trees, token, canary.reply)
    marker = next((i for t in trees for i in t.images if i.program == token), None)
    hops: list[Hop] = []
    at: tuple[Image, int] | None = None
    before = 0
    if marker is not None:
        hops.append(_hop(marker, marker.pid, SPAWNED, "", None, parses=False))
        at, before = _creator(_tree(trees, marker), marker), marker.line
    else:
        carrying = [i for t in trees for i in t.images if i.argv and _has(i.argv, token)]
        if carrying:
            at, before = (carrying[-1], carrying[-1].pid), 1 << 62
    complete = False
    seen: set[tuple[str, int, int]] = set()
    while at is not None and len(hops) < MAX_HOPS:
        x, pid = at
        if (x.trace, x.index, pid) in seen:
            break
        seen.add((x.trace, x.index, pid))
        tree = _tree(trees, x)
        started_marker = marker is not None and len(hops) == 1
        via, detail, nxt, nxt_before = _how(x, pid, tree, trees, carriers, token, before)
        if endpoint is not None and via in (SOURCE, UNKNOWN):
            asked = _asked_model(tree, x, pid, endpoint, before)
            if asked is not None:
                via, detail, nxt = MODEL, asked, None
        shell = parse_shell(x.program, x.argv) if x.argv else None
        interpreter = _shebang(tree, x.path) if shell is None and via == FILE else None
        if interpreter:  # a script exec'd by its own path: the kernel ran its `#!` line
            script_argv = (*interpreter, x.path or "", *(x.argv or ())[1:])
            shell = parse_shell(interpreter[0], script_argv)
        parses = _parses(shell, via, token, started_marker)
        hops.append(_hop(x, pid, via, detail, shell, parses))
        if via == UNKNOWN:
            break
        if via == MODEL or (x is tree.root and tree is trees[0]):
            complete = True
            if via == MODEL:
                hops += _launchers(tree, x, pid)
            break
        at, before = nxt, nxt_before
    hops.reverse()
    return Chain(canary, tuple(hops), marker is not None, complete)


def _shebang(tree: ProcessTree, path: str | None) -> tuple[str, ...] | None:
    """The `#!` line's words of file `path` as the trace shows it written, or None."""
    if not path:
        return None
    data = b"".join(
        w.data for w in tree.writes if w.channel.kind == "file" and w.channel.key == path
    )
    if not data.startswith(b"#!"):
        return None
    words = data[2:].split(b"\n", 1)[0].decode("utf-8", "surrogateescape").split()
    return tuple(words) or None


def _tree(trees: Sequence[ProcessTree], image: Image) -> ProcessTree:
    return next(t for t in trees if t.trace == image.trace)


def _creator(tree: ProcessTree, image: Image) -> tuple[Image, int] | None:
    """The image, and the process running it, that started `image`."""
    if image.creator is None:
        return None
    proc = tree.processes[image.pid]
    first = bool(proc.images) and proc.images[0] is image
    pid = proc.parent if first and proc.parent is not None else image.pid
    return image.creator, pid


def _how(
    x: Image,
    pid: int,
    tree: ProcessTree,
    trees: Sequence[ProcessTree],
    carriers: _Carriers,
    token: str,
    before: int,
) -> tuple[str, str, tuple[Image, int] | None, int]:
    """(via, detail, where the token came from, the line that place passed it on at)."""
    argv = x.argv or ()
    if x is tree.root and x.remote_command is not None:
        client = _ssh_client(trees, x.remote_command, token)
        if client is not None:
            detail = f"ssh session command (client pid {client.pid})"
            return REMOTE, detail, (client, client.pid), 1 << 62
        return UNKNOWN, "a remote command whose ssh client is not in the trace", None, 0
    if x is tree.root:
        return (ARGV if _has(argv, token) else SOURCE), "", None, 0
    if _has(argv, token):
        return ARGV, "", _creator(tree, x), x.line
    names = [w for w in (*argv[1:], x.path or "") if w]
    w = carriers.best(
        x.trace,
        before,
        lambda w: w.channel.kind == "file" and any(_names(w.channel.key, n) for n in names),
    )
    if w is not None:
        return FILE, f"{w.channel.key} written by pid {w.pid}", _writer(w), w.line
    chan = x.stdin
    if chan is not None and chan.kind in ("pipe", "unix"):
        want = chan.key if chan.kind == "pipe" else chan.peer
        w = carriers.best(
            x.trace, before, lambda w: bool(want) and w.channel.key == want and w.pid != pid
        )
        if w is not None:
            return STDIN, f"{chan.label()} written by pid {w.pid}", _writer(w), w.line
    if chan is not None and chan.kind == "pts":
        slave = chan.key
        w = carriers.best(
            x.trace, before, lambda w: w.channel.kind == "ptmx" and w.pts in ("", slave)
        )
        if w is not None:
            return PTY, f"{slave}, its master written by pid {w.pid}", _writer(w), w.line
    held = tree.processes[pid].touched if pid in tree.processes else set()
    w = carriers.best(
        x.trace,
        before,
        lambda w: w.channel.kind == "unix" and w.channel.peer in held and w.pid != pid,
    )
    if w is not None:
        return SOCKET, f"{w.channel.label()} written by pid {w.pid}", _writer(w), w.line
    return UNKNOWN, "the trace does not show how the token reached it", None, 0


def _launchers(tree: ProcessTree, x: Image, pid: int) -> list[Hop]:
    """The images from the one before `x` back to the harness's first, as `launched` hops."""
    found: list[Hop] = []
    at = _creator(tree, x) if x is not tree.root else None
    while at is not None and len(found) < MAX_HOPS:
        image, owner = at
        if image is tree.seal:
            break
        found.append(_hop(image, owner, LAUNCHED, "", None, parses=False))
        if image is tree.root:
            break
        at = _creator(tree, image)
    return found


def _asked_model(tree: ProcessTree, x: Image, pid: int, endpoint: str, before: int) -> str | None:
    """How image `x` (in process `pid`) asked the model, before line `before`, or None."""
    suffix = f"->{endpoint}]"
    for w in tree.writes:
        if w.line >= before:
            break
        if w.pid == pid and w.image is x and w.channel.kind == "socket":
            if w.channel.key.endswith(suffix):
                return f"HTTP to the model at {endpoint} ({w.channel.key.split(':', 1)[0]})"
    return None


def _writer(w: Write) -> tuple[Image, int] | None:
    return (w.image, w.pid) if w.image is not None else None


def _ssh_client(trees: Sequence[ProcessTree], command: str, token: str) -> Image | None:
    clients = [
        i for t in trees for i in t.images if i.program == "ssh" and i.argv and _has(i.argv, token)
    ]
    exact = [i for i in clients if (ssh_command(i.argv or ()) or ("", ""))[1] == command]
    found = exact or clients
    return found[-1] if found else None


def _names(path: str, word: str) -> bool:
    """File `path` (absolute, from an annotation) is what argv word `word` names."""
    return path == word or (not word.startswith("/") and path.endswith("/" + word.lstrip("./")))


def _has(argv: Sequence[str], token: str) -> bool:
    return any(token in word for word in argv)


def _parses(shell: ShellCall | None, via: str, token: str, started_marker: bool) -> bool:
    if shell is None:
        return False
    if via in (ARGV, REMOTE):
        return shell.command is not None and token in shell.command
    if via == FILE:
        return shell.script is not None or shell.reads_stdin
    if via in (STDIN, PTY):
        return shell.reads_stdin
    return started_marker


def _hop(x: Image, pid: int, via: str, detail: str, shell: ShellCall | None, parses: bool) -> Hop:
    argv = x.argv or ()
    wrapper: tuple[str, ...] = ()
    before = x.creator
    if before is not None and before.argv and argv:
        n = len(argv)
        tail = tuple(before.argv[-n:])
        named = os.path.basename(tail[0]) == os.path.basename(argv[0])
        if len(before.argv) > n and named and tail[1:] == argv[1:]:
            wrapper = tuple(before.argv[:-n])
    return Hop(x.trace, pid, x.program, argv, via, detail, shell, parses, wrapper)
