"""Every backend's isolation properties, asserted from inside a run and from the host.

bwrap and docker must confine (read-only root, private /tmp, no network, own pid namespace,
no capabilities, fixed inner paths); tempdir only promises a fresh directory, the scrubbed
environment and umask 022, and the tests say exactly where it differs.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import boundary_audit
from boundary_audit.sandbox import Limits, Sandbox, make_sandbox
from boundary_audit.sandbox.bwrap import hidden_dirs, reexposed_paths

ISOLATING = [
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]
ALL = [*ISOLATING, "tempdir"]


@pytest.fixture
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "docker":
        yield request.getfixturevalue("docker_sandbox")
        return
    with make_sandbox(request.param, Limits(timeout_s=10)) as box:
        yield box


def sh(box: Sandbox, script: str, **kw: object) -> tuple[int | None, bytes, bytes]:
    with box.workspace() as ws:
        r = box.run(ws, ["/bin/sh", "-c", script], **kw)  # type: ignore[arg-type]
        return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("sandbox", ALL, indirect=True)
def test_environment_is_exactly_the_scrubbed_base(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        ws.env["TASK_VAR"] = 'it\'s "x"'
        r = sandbox.run(ws, ["/usr/bin/env", "-0"], env={"EXTRA": "1"})
        seen = dict(item.split("=", 1) for item in r.stdout.decode().split("\0") if item)
        assert seen == {**sandbox.base_env(ws), "EXTRA": "1"}
        assert seen["TASK_VAR"] == 'it\'s "x"' and seen["BA_RUN_ID"] == ws.run_id
        assert seen["LC_ALL"] == "C.UTF-8" and seen["PATH"].startswith(f"{ws.inner_bin}:")


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_fixed_inner_paths_cwd_and_umask(sandbox: Sandbox) -> None:
    code, out, _ = sh(sandbox, 'pwd; echo "$HOME $TMPDIR $BA_OBS"; umask; hostname')
    assert (code, out) == (0, b"/tmp/work\n/tmp/home /tmp /tmp/obs\n0022\nsandbox\n")


@pytest.mark.parametrize("sandbox", ["tempdir"], indirect=True)
def test_tempdir_runs_in_the_host_work_dir_with_umask_022(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        r = sandbox.run(ws, ["/bin/sh", "-c", "pwd; umask; echo x > f; stat -c %a f"])
        assert r.stdout == f"{ws.work}\n0022\n644\n".encode()
        assert (ws.work / "f").read_bytes() == b"x\n"
    assert not ws.root.exists()


@pytest.mark.parametrize("sandbox", ALL, indirect=True)
def test_work_dir_is_writable_and_seen_by_the_host(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        r = sandbox.run(
            ws, ["/bin/sh", "-c", "mkdir -p d && printf 'a\\0b' > d/f && echo x > $BA_OBS/o"]
        )
        assert r.exit_code == 0, r.stderr
        assert (ws.work / "d" / "f").read_bytes() == b"a\0b"
        assert (ws.obs / "o").read_bytes() == b"x\n"
        assert (ws.work / "d" / "f").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_root_is_read_only_and_bin_too(sandbox: Sandbox) -> None:
    places = "/x /etc/x /usr/x /tmp/bin/x /usr/local/sbin/x"
    script = f"for p in {places}; do touch $p 2>/dev/null && echo $p; done; echo end"
    code, out, _ = sh(sandbox, script)
    assert (code, out) == (0, b"end\n")


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_helpers_stay_on_the_path_that_login_shells_and_an_empty_environment_rebuild(
    sandbox: Sandbox,
) -> None:
    with sandbox.workspace() as ws:
        (ws.bin / "ba-helper").write_text("#!/bin/sh\necho helper\n")
        (ws.bin / "ba-helper").chmod(0o755)
        login = sandbox.run(ws, ["bash", "-lc", "ba-helper; command -v ba-helper"])
        empty = sandbox.run(ws, ["env", "-i", "/bin/bash", "-c", "ba-helper"])
    assert login.stdout == b"helper\n/usr/local/sbin/ba-helper\n"
    assert (empty.exit_code, empty.stdout) == (0, b"helper\n")


@pytest.mark.bwrap
def test_bwrap_sees_the_repository_read_only() -> None:
    here = Path(__file__).resolve()
    with make_sandbox("bwrap") as box:
        code, out, _ = sh(
            box, f"head -c 3 '{here}'; touch '{here.parent}/ba-ro' 2>/dev/null || echo ro"
        )
    assert (code, out) == (0, b'"""ro\n')
    assert not (here.parent / "ba-ro").exists()


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_tmp_is_private_to_the_run(sandbox: Sandbox, tmp_path: Path) -> None:
    marker = f"ba-private-{os.getpid()}-{id(tmp_path)}"
    with sandbox.workspace() as ws:
        r = sandbox.run(
            ws,
            [
                "/bin/sh",
                "-c",
                f"echo in > /tmp/{marker}; ls /tmp; ls {tmp_path} 2>&1 >/dev/null | wc -l",
            ],
        )
        # bwrap binds back a clone of ours that lives under /tmp (and its venv): its top entry
        extra = {
            p.removeprefix("/tmp/").split("/", 1)[0]
            for p in reexposed_paths(hidden_dirs())
            if p.startswith("/tmp/") and sandbox.name == "bwrap"
        }
        listed = sorted(r.stdout.decode().splitlines()[:-1])
        assert listed == sorted(["bin", "home", marker, "obs", "work", *extra])
        assert r.stdout.endswith(b"\n1\n")
        assert (ws.root / marker).read_bytes() == b"in\n"
    assert not Path("/tmp", marker).exists()


def _listener() -> tuple[socket.socket, list[bytes]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(3)
    got: list[bytes] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            got.append(conn.recv(100))
            conn.close()
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    return server, got


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_no_network_only_loopback(sandbox: Sandbox) -> None:
    server, got = _listener()
    port = server.getsockname()[1]
    script = (
        f"echo leak > /dev/tcp/127.0.0.1/{port} && echo connected; "
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
    )
    with sandbox.workspace() as ws:
        r = sandbox.run(ws, ["bash", "-c", script])
    server.close()
    assert r.stdout == b"lo\n"
    assert b"Connection refused" in r.stderr
    assert got == []


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_own_pid_namespace_with_the_reaper_as_pid_1(sandbox: Sandbox) -> None:
    script = (
        f"tr '\\0' '\\n' < /proc/1/cmdline | grep -cx ba-reap; "
        f"test -e /proc/{os.getpid()} && echo host-visible; echo $$"
    )
    code, out, _ = sh(sandbox, script)
    lines = out.decode().split()
    assert code == 0 and lines[0] == "1" and "host-visible" not in lines
    assert int(lines[-1]) < 10


@pytest.mark.parametrize("sandbox", ISOLATING, indirect=True)
def test_no_capabilities_and_only_standard_descriptors(sandbox: Sandbox) -> None:
    code, out, _ = sh(sandbox, "grep CapEff /proc/self/status; ls /proc/self/fd")
    assert (code, out) == (0, b"CapEff:\t0000000000000000\n0\n1\n2\n3\n")


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def visible_under_hidden_dirs() -> dict[str, set[str]]:
    """Per directory to list inside bwrap: the only entries it may show.

    The hidden directories (/root, /home, /run, /var/tmp and $HOME) are empty inside, except
    for the paths in-sandbox drivers need, bound back read-only: this Python (sys.prefix and
    sys.base_prefix) and the checkout or installation holding the package; and /run holds the
    execute-only bash the pid-1 reaper runs from (`sandbox._launch`). Each directory on
    the way down to one of those shows exactly the next component, wherever the checkout,
    the venv or the interpreter live; nothing inside a bound path is listed (all of it is
    meant to be there, even when that is the whole of $HOME).
    """
    home = os.path.realpath(os.environ.get("HOME", "/root"))
    wanted = {"/root", "/home", "/run", "/var/tmp", home}
    hidden = sorted({os.path.realpath(d) for d in wanted if os.path.isdir(d)} - {"/"})
    needed = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, str(Path(boundary_audit.__file__).parent.parent))
    }
    bound = {p for p in needed if any(_under(p, h) for h in hidden)}

    def inside_bound(d: str) -> bool:  # all of a bound path is meant to show: not listed
        return any(_under(d, b) for b in bound)

    visible: dict[str, set[str]] = {h: set() for h in hidden if not inside_bound(h)}
    for path in bound:
        for h in (h for h in hidden if _under(path, h)):
            cur = h
            for part in Path(path).relative_to(h).parts:
                if inside_bound(cur):
                    break
                visible.setdefault(cur, set()).add(part)
                cur = os.path.join(cur, part)
    visible.setdefault("/run", set()).add("ba-reaper")  # the reaper's execute-only bash
    return visible


@pytest.mark.bwrap
def test_bwrap_hides_secrets_and_daemon_sockets() -> None:
    visible = visible_under_hidden_dirs()
    token = uuid.uuid4().hex[:12]
    # A planted secret in every listed directory (next to what is bound back, too) and a
    # daemon's socket in /run: none of them may show, wherever the checkout lives.
    canaries = [os.path.join(d, f".ba-canary-{token}") for d in visible]
    sock_path = f"/run/ba-canary-{token}.sock"
    daemon = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        for path in canaries:
            Path(path).write_text("secret\n")
        daemon.bind(sock_path)
        daemon.listen(1)
        listing = "; ".join(f"echo '== {d}'; ls -A '{d}'" for d in sorted(visible))
        probes = " ".join(f"'{p}'" for p in [*canaries, sock_path])
        with make_sandbox("bwrap") as box:
            code, out, _ = sh(box, listing)
            _, found, _ = sh(box, f'for p in {probes}; do test -e "$p" && echo "$p"; done')
            _, secrets, _ = sh(box, "cat /etc/shadow /etc/gshadow /etc/ssh/ssh_host_*_key")
    finally:
        daemon.close()
        for path in [*canaries, sock_path]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    shown: dict[str, set[str]] = {}
    for line in out.decode().splitlines():
        if line.startswith("== "):
            current = shown.setdefault(line[3:], set())
        else:
            current.add(line)
    assert code == 0
    assert shown == {d: visible[d] for d in sorted(visible)}
    assert found == b""
    assert secrets == b""


@pytest.mark.parametrize("sandbox", ALL, indirect=True)
def test_stdin_bytes_and_exit_codes(sandbox: Sandbox) -> None:
    with sandbox.workspace() as ws:
        r = sandbox.run(ws, ["/bin/sh", "-c", "cat; exit 7"], stdin=b"a\0b\nc")
        assert (r.exit_code, r.stdout, r.timed_out) == (7, b"a\0b\nc", False)
        r = sandbox.run(ws, ["/bin/sh", "-c", "cat"])
        assert (r.exit_code, r.stdout) == (0, b"")
        r = sandbox.run(ws, ["/bin/sh", "-c", "kill -TERM $$"])
        assert (r.exit_code, r.stdout, r.stderr) == (128 + 15, b"", b"")


@pytest.mark.parametrize("sandbox", ALL, indirect=True)
def test_every_run_gets_a_fresh_workspace(sandbox: Sandbox) -> None:
    with sandbox.workspace() as first:
        sandbox.run(first, ["/bin/sh", "-c", "echo 1 > f; echo 2 > $HOME/h"])
        root = first.root
    assert not root.exists()
    with sandbox.workspace() as second:
        r = sandbox.run(second, ["/bin/sh", "-c", "ls -A; ls -A $HOME"])
        assert r.stdout == b""
        assert second.run_id != first.run_id


@pytest.mark.bwrap
@pytest.mark.parametrize("backend", ["bwrap", "tempdir"])
def test_pty_driver_gets_a_controlling_terminal_inside(backend: str) -> None:
    driver = (
        "import os, pty, sys\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n"
        "    os.execvp('bash', ['bash', '--norc', '--noprofile', '-i'])\n"
        "os.write(fd, b'tty; echo MARK$((6*7)); exit\\n')\n"
        "out = b''\n"
        "while True:\n"
        "    try:\n        chunk = os.read(fd, 4096)\n"
        "    except OSError:\n        break\n"
        "    if not chunk:\n        break\n"
        "    out += chunk\n"
        "os.waitpid(pid, 0)\n"
        "sys.stdout.buffer.write(out)\n"
    )
    import sys

    with make_sandbox(backend) as box, box.workspace() as ws:
        r = box.run(ws, [sys.executable, "-c", driver], env={"TERM": "xterm"})
    assert r.exit_code == 0, r.stderr
    assert b"MARK42" in r.stdout and b"/dev/pts/" in r.stdout


@pytest.mark.bwrap
@pytest.mark.tmux
def test_tmux_server_inside_bwrap_dies_with_the_run() -> None:
    script = (
        "tmux -S /tmp/t.sock new-session -d -s s 'echo typed > /tmp/work/out; sleep 1000' && "
        "for i in $(seq 50); do [ -s out ] && break; sleep 0.1; done; cat out; "
        "tmux -S /tmp/t.sock ls | cut -d: -f1"
    )
    with make_sandbox("bwrap") as box, box.workspace() as ws:
        r = box.run(ws, ["/bin/sh", "-c", script])
    assert r.stdout == b"typed\ns\n"
    assert r.escaped_killed >= 2  # the tmux server and its shell outlived the command


@pytest.mark.parametrize(
    "sandbox", [pytest.param("bwrap", marks=pytest.mark.bwrap), "tempdir"], indirect=True
)
def test_an_argument_the_kernel_refuses_is_a_failed_run_not_a_machinery_error(
    sandbox: Sandbox,
) -> None:
    # One argument over MAX_ARG_STRLEN (128 KiB): execve fails with E2BIG, as it would for the
    # harness that put the reply in argv. The run exits 126 like a shell's failed exec.
    with sandbox.workspace() as ws:
        res = sandbox.run(ws, ["bash", "-c", "echo " + "x" * (128 * 1024 + 1)])
    assert (res.exit_code, res.stdout, res.timed_out) == (126, b"", False)
    assert res.stderr.endswith(b": cannot execute: Argument list too long\n")
