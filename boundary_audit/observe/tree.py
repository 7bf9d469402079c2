"""The process tree of one traced run: who started whom, what each exec'd, what fed its stdin.

Built from a `strace.Trace` (`build_tree`). What it guarantees:

- **Processes** are thread groups: a `clone` with CLONE_THREAD adds a thread to its creator's
  process, any other clone/fork/vfork makes a child process whose `parent` is the creator
  (the process that called clone, not the one an orphan is re-parented to).
- **Images**: every successful `execve`/`execveat`, in order, with its argv and path, the
  channel its stdin (fd 0) was at that moment, and its `creator`: the image in effect in the
  same process before it (an exec replacing a shell that exec'd its last command) or, for a
  process's first exec, the image its parent was running when it forked. A child inherits its
  parent's state as of the clone call itself, not as of its own first traced call.
- **stdin** is followed through every call that can make fd 0 something new: dup2/dup3/dup/
  fcntl(F_DUPFD) onto 0, an open or pipe or socketpair that returns 0. Other descriptors are
  not followed; their identity comes with each call from strace's `-yy` annotation.
- **Writes**: every successful write-like call (write, writev, pwrite*, send*), with its bytes
  and the channel it went to. strace cannot always name a unix socket's peer at the moment of
  a call; where another call of the trace named it (either end), the channel gets it. A write
  into a pty master carries the slave it drives where the trace shows the pairing
  (TIOCGPTPEER, TIOCGPTN), else "".
- **root**: the trace's first exec is the seal (`seal.py`, our own); the harness is the first
  image its child exec'd. `complete` is False when the harness's own exit is not in the trace
  (a timeout, or the tracer killed before the harness ended); `left_behind` lists what was
  still running after it and was killed by the seal.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from boundary_audit.observe.strace import DELETED, Arg, Call, Fd, Trace, fds, strings

CLONES = frozenset({"clone", "clone3", "fork", "vfork"})
EXECS = frozenset({"execve", "execveat"})
WRITES = frozenset(
    {"write", "writev", "pwrite64", "pwritev", "pwritev2", "sendto", "sendmsg", "sendmmsg"}
)
NEW_FDS = frozenset(
    {"dup", "dup2", "dup3", "fcntl", "open", "openat", "creat", "pipe", "pipe2", "socketpair"}
    | {"ioctl"}
)
"""Calls whose result or array argument can be a new descriptor."""


@dataclass(frozen=True)
class Channel:
    """What a descriptor is, as far as the trace shows: one end of a pipe, a socket, a pty..."""

    kind: str
    """`pipe`, `unix`, `pts` (a pty slave), `ptmx` (a pty master), `file`, `socket`, `other`."""
    key: str
    """This end's identity: `pipe:N` (both ends of a pipe share it), `unix:N` (the socket's own
    inode), `/dev/pts/N`, a file's path, or the annotation itself."""
    peer: str = ""
    """The other end's key: the peer inode of a connected unix socket (`unix:M`), the same key
    for a pipe, "" when unknown."""

    def label(self) -> str:
        """How a report names it."""
        if self.kind == "unix":
            return f"unix socket {self.key.removeprefix('unix:')}"
        if self.kind == "pipe":
            return f"pipe {self.key.removeprefix('pipe:')}"
        if self.kind == "ptmx":
            return "pty master"
        return self.key


_UNIX = re.compile(r"^UNIX(?:-[A-Z]+)?:\[(\d+)(?:->(\d+))?(?:,.*)?\]$", re.S)
_PIPE = re.compile(r"^pipe:\[(\d+)\]$")
_DEV_SUFFIX = re.compile(r"<(?:char|block) \d+:\d+>$")


def channel(annotation: str) -> Channel:
    """The channel an `-yy` annotation names."""
    m = _PIPE.match(annotation)
    if m:
        key = f"pipe:{m.group(1)}"
        return Channel("pipe", key, key)
    m = _UNIX.match(annotation)
    if m:
        return Channel("unix", f"unix:{m.group(1)}", f"unix:{m.group(2)}" if m.group(2) else "")
    if annotation.startswith("/"):
        path = _DEV_SUFFIX.sub("", annotation.removesuffix(DELETED))
        if path.endswith("/ptmx"):
            return Channel("ptmx", "ptmx")
        if re.fullmatch(r"/dev/pts/\d+", path):
            return Channel("pts", path)
        return Channel("file", path)
    if re.match(r"^(?:socket|TCP|TCPv6|UDP|UDPv6|NETLINK|UNIX)", annotation):
        return Channel("socket", annotation)
    return Channel("other", annotation)


@dataclass(eq=False)
class Image:
    """One successful exec: a program image, in the process that exec'd it."""

    trace: str
    """Which trace it is from (`local`, `remote-1`...)."""
    pid: int
    index: int
    """Its position among the trace's images (0: the seal)."""
    argv: tuple[str, ...] | None
    """None when the tracer could not read it (the seal, exec'd from an unreadable tracer)."""
    path: str | None
    line: int
    stdin: Channel | None
    """Fd 0 when it was exec'd (None: the trace does not say, e.g. the sandbox's own stdin)."""
    creator: Image | None
    remote_command: str | None = None
    """For the root of a remote trace: the command string the remote side was given."""

    @property
    def program(self) -> str:
        """The base name of the exec'd file (`bash`, `python3.11`, `node`, `tmux`...)."""
        if self.path:
            return os.path.basename(self.path)
        return os.path.basename(self.argv[0]) if self.argv else "?"

    def describe(self) -> str:
        """`pid N: argv` for reports."""
        return f"{self.trace} pid {self.pid}: {list(self.argv) if self.argv else '?'}"


@dataclass(eq=False)
class Write:
    """Bytes one process wrote into a channel."""

    trace: str
    pid: int
    image: Image | None
    """The image that was running when it wrote (None before the process's first exec)."""
    line: int
    fd: int
    channel: Channel
    data: bytes
    pts: str = ""
    """For a pty master: the slave it drives (`/dev/pts/N`), "" when the trace does not say."""


@dataclass(eq=False)
class Process:
    """One thread group."""

    pid: int
    parent: int | None
    first_line: int
    images: list[Image] = field(default_factory=list)
    exit: str = ""
    """`exited with N` / `killed by SIGX`, "" when the trace does not show its end."""
    exit_line: int = 0
    touched: set[str] = field(default_factory=set)
    """The key of every channel any of its calls named."""


@dataclass
class ProcessTree:
    """Everything one trace shows."""

    trace: str
    processes: dict[int, Process]
    images: list[Image]
    writes: list[Write]
    seal: Image | None
    root: Image | None
    """The harness's own first image (the one after the seal), None if it never ran."""
    skipped: int = 0
    unfinished: int = 0

    @property
    def complete(self) -> bool:
        """The harness ran and its end is in the trace."""
        return self.root is not None and bool(self.processes[self.root.pid].exit)

    @property
    def left_behind(self) -> tuple[int, ...]:
        """Processes still running when the harness had exited, killed by the seal."""
        if not self.complete or self.root is None:
            return ()
        end = self.processes[self.root.pid].exit_line
        return tuple(
            p.pid
            for p in self.processes.values()
            if p.exit == "killed by SIGKILL" and p.exit_line > end
        )


@dataclass
class _State:
    image: Image | None = None
    stdin: Channel | None = None
    masters: dict[int, str] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(self.image, self.stdin, dict(self.masters))


def build_tree(trace: Trace, label: str = "local") -> ProcessTree:
    """The process tree `trace` shows (see the module docstring)."""
    parents, threads = _births(trace.calls)
    tgid: dict[int, int] = {}

    def group(tid: int) -> int:
        seen: list[int] = []
        cur = tid
        while cur in threads and cur not in tgid and len(seen) < 64:
            seen.append(cur)
            cur = parents[cur]
        base = tgid.get(cur, cur)
        for t in seen:
            tgid[t] = base
        return base

    processes: dict[int, Process] = {}
    states: dict[int, _State] = {}
    at_birth: dict[int, _State] = {}
    tree = ProcessTree(label, processes, [], [], None, None, trace.skipped, trace.unfinished)

    def process(tid: int, line: int) -> tuple[Process, _State]:
        pid = group(tid)
        if pid not in processes:
            parent = group(parents[pid]) if pid in parents else None
            processes[pid] = Process(pid, parent, line)
            inherited = at_birth.pop(pid, None)
            if inherited is None and parent is not None and parent in states:
                inherited = states[parent].copy()
            states[pid] = inherited or _State()
        return processes[pid], states[pid]

    peers: dict[str, str] = {}
    events: list[tuple[int, int, object]] = [(c.line, 0, c) for c in trace.calls]
    events += [(e.line, 1, e) for e in trace.exits]
    events.sort(key=lambda e: (e[0], e[1]))
    for _line, kind, event in events:
        if kind == 1:
            proc, _ = process(event.tid, event.line)  # type: ignore[attr-defined]
            if event.tid == proc.pid:  # type: ignore[attr-defined]
                proc.exit = event.how  # type: ignore[attr-defined]
                proc.exit_line = event.line  # type: ignore[attr-defined]
            continue
        call: Call = event  # type: ignore[assignment]
        proc, state = process(call.tid, call.line)
        for fd in [*fds(list(call.args)), *fds(call.result)]:
            chan = channel(fd.annotation)
            proc.touched.add(chan.key)
            if chan.kind == "unix" and chan.peer:
                peers[chan.key], peers[chan.peer] = chan.peer, chan.key
        if not call.ok:
            continue
        if call.name in CLONES:
            child = call.result_int
            if child is not None and child > 0 and child not in threads:
                at_birth[child] = state.copy()
        elif call.name in EXECS:
            image = _image(call, label, proc.pid, len(tree.images), state)
            tree.images.append(image)
            proc.images.append(image)
            state.image = image
        elif call.name in WRITES:
            _write(tree, call, proc, state)
        if call.name in NEW_FDS:
            _new_fds(call, state)
    for w in tree.writes:  # strace could not name the peer at that call; another call did
        if w.channel.kind == "unix" and not w.channel.peer and w.channel.key in peers:
            w.channel = Channel("unix", w.channel.key, peers[w.channel.key])
    for image in tree.images:
        fd0 = image.stdin
        if fd0 is not None and fd0.kind == "unix" and not fd0.peer and fd0.key in peers:
            image.stdin = Channel("unix", fd0.key, peers[fd0.key])
    if tree.images:
        tree.seal = tree.images[0]
        seal = tree.seal
        tree.root = next((i for i in tree.images[1:] if i.creator is seal), None)
    return tree


def _births(calls: list[Call]) -> tuple[dict[int, int], set[int]]:
    """child tid -> creating tid, and the tids that are threads."""
    parents: dict[int, int] = {}
    threads: set[int] = set()
    for call in calls:
        if call.name not in CLONES or not call.ok:
            continue
        child = call.result_int
        if child is None or child <= 0:
            continue
        parents[child] = call.tid
        if "CLONE_THREAD" in _flags(call.args):
            threads.add(child)
    return parents, threads


def _flags(args: tuple[Arg, ...]) -> str:
    for arg in args:
        if isinstance(arg, dict):
            value = arg.get("flags")
            if isinstance(value, str):
                return value
    return ""


def _text(value: Arg) -> str | None:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else None


def _image(call: Call, label: str, pid: int, index: int, state: _State) -> Image:
    args = call.args if call.name == "execve" else call.args[1:]
    path = _text(args[0]) if args else None
    argv: tuple[str, ...] | None = None
    if len(args) > 1 and isinstance(args[1], list):
        words = [_text(a) for a in args[1]]
        if all(w is not None for w in words):
            argv = tuple(w for w in words if w is not None)
    return Image(label, pid, index, argv, path, call.line, state.stdin, state.image)


def _write(tree: ProcessTree, call: Call, proc: Process, state: _State) -> None:
    target = call.args[0] if call.args else None
    if not isinstance(target, Fd):
        return
    if call.name == "sendmsg" and len(call.args) > 1 and isinstance(call.args[1], dict):
        data = strings(call.args[1].get("msg_iov", []))
    elif call.name == "sendmmsg" and len(call.args) > 1:
        data = strings(call.args[1])
    else:
        data = strings(call.args[1]) if len(call.args) > 1 else b""
    if not data:
        return
    chan = channel(target.annotation)
    pts = state.masters.get(target.num, "") if chan.kind == "ptmx" else ""
    tree.writes.append(
        Write(tree.trace, proc.pid, state.image, call.line, target.num, chan, data, pts)
    )


def _new_fds(call: Call, state: _State) -> None:
    made: list[Fd] = []
    if isinstance(call.result, Fd):
        made.append(call.result)
    if call.name in ("pipe", "pipe2") and call.args and isinstance(call.args[0], list):
        made += [a for a in call.args[0] if isinstance(a, Fd)]
    if call.name == "socketpair" and len(call.args) > 3 and isinstance(call.args[3], list):
        made += [a for a in call.args[3] if isinstance(a, Fd)]
    for fd in made:
        chan = channel(fd.annotation)
        if fd.num == 0:
            state.stdin = chan
        if chan.kind == "ptmx":
            state.masters.setdefault(fd.num, "")
    source = call.args[0] if call.args else None
    if isinstance(source, Fd) and channel(source.annotation).kind == "ptmx":
        op = call.args[1] if len(call.args) > 1 else ""
        if call.name == "ioctl" and op == "TIOCGPTN" and len(call.args) > 2:
            n = call.args[2]
            if isinstance(n, list) and n and isinstance(n[0], str) and n[0].isdigit():
                state.masters[source.num] = f"/dev/pts/{n[0]}"
        elif call.name == "ioctl" and op == "TIOCGPTPEER" and isinstance(call.result, Fd):
            state.masters[source.num] = channel(call.result.annotation).key
        elif call.name in ("dup", "dup2", "dup3", "fcntl") and isinstance(call.result, Fd):
            state.masters[call.result.num] = state.masters.get(source.num, "")
