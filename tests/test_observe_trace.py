"""Reading strace output (observe/strace.py) into the process tree (observe/tree.py).

The lines are strace 6.1's own format (`-f -yy -xx`), written out here so that each rule is
pinned by one exact input: split calls joined and dated by their start, descriptors decoded
from their annotations, a vfork child's calls before its parent's return, stdin inherited as
it was at the clone, threads kept in their process, pty masters paired with their slave,
lines that do not parse counted and never guessed at, and a trace over the limit refused.
The chains built from real traces are in test_observe_harnesses.py.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from boundary_audit.observe import strace
from boundary_audit.observe.canary import Canary
from boundary_audit.observe.chain import trace_chain
from boundary_audit.observe.strace import Fd, TraceError, read_trace
from boundary_audit.observe.tree import Channel, build_tree, channel

FIX = Path(__file__).resolve().parent / "fixtures" / "observe"


def hx(text: str) -> str:
    """`text` as strace -xx prints a string's bytes."""
    return "".join(f"\\x{b:02x}" for b in text.encode())


def lines(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


def test_a_split_call_is_joined_and_dated_by_the_line_it_started_on() -> None:
    trace = read_trace(
        lines(
            f'7 write(1<pipe:[12]>, "{hx("abc")}", 3 <unfinished ...>',
            "8 +++ exited with 0 +++",
            "7 <... write resumed>)              = 3",
        )
    )
    (call,) = trace.calls
    assert (call.line, call.tid, call.name, call.result) == (1, 7, "write", "3")
    assert call.args == (Fd(1, "pipe:[12]"), b"abc", "3")
    assert [(e.line, e.tid, e.how) for e in trace.exits] == [(2, 8, "exited with 0")]
    assert (trace.skipped, trace.unfinished) == (0, 0)


def test_arguments_decode_to_bytes_descriptors_arrays_and_structs() -> None:
    path, arg = hx("/usr/bin/bash"), hx(QUOTED)
    call = strace.parse_call(
        f'execve("{path}", ["{hx("bash")}", "{hx("-c")}", "{arg}"], 0x7ffd /* 9 vars */) = 0',
        1,
        5,
    )
    assert call is not None
    assert call.args == (b"/usr/bin/bash", [b"bash", b"-c", b'it\'s "q"\n'], "0x7ffd /* 9 vars */")
    clone3 = strace.parse_call(
        "clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f} => "
        "{parent_tid=[41]}, 88) = 41",
        2,
        5,
    )
    assert clone3 is not None and clone3.result_int == 41
    assert clone3.args[0] == {
        "flags": "CLONE_VM|CLONE_VFORK",
        "exit_signal": "SIGCHLD",
        "stack": "0x7f",
        "parent_tid": ["41"],
    }
    opened = strace.parse_call(
        f'openat(AT_FDCWD<{hx("/tmp/work")}>, "{hx("x.sh")}", O_WRONLY|O_CREAT, 0600) '
        f"= 3<{hx('/tmp/work/x.sh')}>",
        3,
        5,
    )
    assert opened is not None
    assert opened.args[0] == "AT_FDCWD</tmp/work>"
    assert opened.result == Fd(3, "/tmp/work/x.sh")
    failed = strace.parse_call("ioctl(2</dev/pts/0>(deleted), TCGETS, 0x7ff) = -1 EIO (x)", 4, 5)
    assert failed is not None and not failed.ok
    assert failed.args[0] == Fd(2, "/dev/pts/0(deleted)")


def test_a_line_that_does_not_parse_is_counted_never_guessed() -> None:
    trace = read_trace(
        lines(
            '5 write(1<pipe:[3]>, "not hex", 7) = 7',  # -xx would have printed \x.. bytes
            "5 write(1<pipe:[3]>, [unbalanced, 7) = 7",
            f'5 write(1<pipe:[3]>, "{hx("ok")}", 2) = 2',
            "5 <... read resumed>) = 0",  # resumes nothing that started
        )
    )
    assert [c.args[1] for c in trace.calls] == [b"ok"]
    assert trace.skipped == 3


def test_a_trace_over_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strace, "TRACE_LIMIT", 64)
    with pytest.raises(TraceError, match=r"^the trace is over 0 MiB: the observation is void$"):
        read_trace(b"5 " + b"x" * 64)


def test_annotations_name_channels() -> None:
    assert channel("pipe:[77]") == Channel("pipe", "pipe:77", "pipe:77")
    assert channel("UNIX-STREAM:[10->11]") == Channel("unix", "unix:10", "unix:11")
    assert channel('UNIX-STREAM:[12,"/tmp/tmux-0/default"]') == Channel("unix", "unix:12", "")
    assert channel("/dev/pts/ptmx") == Channel("ptmx", "ptmx")
    assert channel("/dev/pts/3") == Channel("pts", "/dev/pts/3")
    assert channel("/dev/null<char 1:3>") == Channel("file", "/dev/null")
    assert channel("/tmp/x.sh(deleted)") == Channel("file", "/tmp/x.sh")
    assert channel("TCP:[127.0.0.1:5->127.0.0.1:6]").kind == "socket"
    assert channel("anon_inode:[eventfd]") == Channel("other", "anon_inode:[eventfd]")


ECHO = "echo hi\n"
QUOTED = 'it\'s "q"\n'
SEAL = f'5 execve("{hx("/usr/bin/python3")}", ["{hx("python3")}", "{hx("seal.py")}"], 0x1 /* 3 vars */) = 0'  # noqa: E501


def test_a_vfork_child_inherits_stdin_as_it_was_when_its_parent_forked() -> None:
    tree = build_tree(
        read_trace(
            lines(
                SEAL,
                f'5 execve("{hx("/usr/bin/node")}", ["{hx("node")}", "{hx("h.js")}"], 0x1) = 0',
                "5 socketpair(AF_UNIX, SOCK_STREAM, 0, "
                "[19<UNIX-STREAM:[30->31]>, 20<UNIX-STREAM:[31->30]>]) = 0",
                "5 vfork( <unfinished ...>",
                "6 dup2(20<UNIX-STREAM:[31->30]>, 0</dev/null<char 1:3>>) "
                "= 0<UNIX-STREAM:[31->30]>",
                f'6 execve("{hx("/usr/bin/sh")}", ["{hx("sh")}"], 0x1) = 0',
                "5 <... vfork resumed>) = 6",
                "5 dup2(19<UNIX-STREAM:[30->31]>, 0</dev/null<char 1:3>>) "
                "= 0<UNIX-STREAM:[30->31]>",
                f'5 write(19<UNIX-STREAM:[30->31]>, "{hx(ECHO)}", 8) = 8',
                "6 +++ exited with 0 +++",
                "5 +++ exited with 0 +++",
            )
        )
    )
    assert tree.seal is not None and tree.seal.argv == ("python3", "seal.py")
    assert tree.root is not None and tree.root.argv == ("node", "h.js")
    assert tree.root.stdin is None  # the sandbox's own stdin: the trace does not say
    sh = tree.processes[6]
    assert sh.parent == 5 and [i.argv for i in sh.images] == [("sh",)]
    assert sh.images[0].stdin == Channel("unix", "unix:31", "unix:30")
    assert sh.images[0].creator is tree.root
    (write,) = tree.writes
    assert (write.pid, write.image, write.channel.key, write.data) == (
        5,
        tree.root,
        "unix:30",
        b"echo hi\n",
    )
    assert tree.complete


def test_a_thread_is_no_process_and_a_pty_master_knows_its_slave() -> None:
    tree = build_tree(
        read_trace(
            lines(
                SEAL,
                f'5 execve("{hx("/usr/bin/tmux")}", ["{hx("tmux")}"], 0x1) = 0',
                "5 clone3({flags=CLONE_VM|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}, 88) = 9",
                f'9 openat(AT_FDCWD, "{hx("/dev/ptmx")}", O_RDWR) = 4</dev/pts/ptmx>',
                "9 ioctl(4</dev/pts/ptmx>, TIOCGPTN, [2]) = 0",
                f'9 write(4</dev/pts/ptmx>, "{hx("ls")}", 2) = 2',
                "5 clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLD) = 10",
                f'10 write(4</dev/pts/ptmx>, "{hx("x")}", 1) = 1',
                "9 +++ exited with 0 +++",
            )
        )
    )
    assert sorted(tree.processes) == [5, 10]
    assert [(w.pid, w.data, w.pts) for w in tree.writes] == [
        (5, b"ls", "/dev/pts/2"),  # the thread's write is its process's
        (10, b"x", "/dev/pts/2"),  # the fork inherited the master and its pairing
    ]
    assert tree.processes[10].parent == 5
    assert not tree.complete  # the thread's end is not the harness's


def test_without_a_second_exec_there_is_no_harness() -> None:
    tree = build_tree(read_trace(lines(SEAL, "5 +++ exited with 127 +++")))
    assert tree.seal is not None and tree.root is None and not tree.complete


def test_a_real_tmux_trace_holds_where_strace_named_no_peer() -> None:
    """node_tmux.js with its replies in the environment, traced for real (strace 6.1): the
    send-keys client of r1 sent the keys on a socket strace printed without its peer, and
    every other tmux client (`tmux wait`) forwarded an environment that holds both replies to
    the same server. The chain must still run through the send-keys client."""
    data = gzip.decompress((FIX / "traces" / "node_tmux_env_source.trace.gz").read_bytes())
    tree = build_tree(read_trace(data), "local")
    token = "bacanary3e580b86db5c"
    reply = f"{token} r1 'a b' \"c d\" $((6*7))"
    chain = trace_chain([tree], Canary(token, "r1", reply, None, ("r1", "a b", "c d", "42")))
    sock = "/tmp/ba-tmux-5"
    assert [(h.pid, h.via, list(h.argv)) for h in chain.hops] == [
        (5, "source", ["node", "/work/wt-observe-chain/tests/fixtures/observe/node_tmux.js"]),
        (24, "argv", ["tmux", "-S", sock, "-f", "/dev/null", "send-keys", "-t", "ba", reply,
                      f"; tmux -S {sock} wait -S done", "Enter"]),
        (14, "socket", ["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "ba",
                        "bash --norc --noprofile"]),
        (15, "pty", ["bash", "--norc", "--noprofile"]),
        (26, "spawned", [token, "r1", "a b", "c d", "42"]),
    ]  # fmt: skip
    assert chain.complete and chain.shell_parses == 1
    forwarded = [w for w in tree.writes if token.encode() in w.data and w.channel.kind == "unix"]
    assert len({w.pid for w in forwarded}) > 1  # the confound the rule has to see through
