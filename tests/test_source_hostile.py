"""Scanning a hostile local repository runs nothing from it, and failed clones leave nothing.

The scanned repository's `.git/config` (and a file it includes) names a command for every
place git could run one: clean/smudge/process filters selected by `.gitattributes`, an
fsmonitor, a hooks dir, a pager, textconv and external diff drivers, `core.sshCommand`,
`core.gitProxy`, a credential helper, and a partial-clone promisor whose `uploadpack` is a
shell command; objects/info/alternates points at another repository. Each command would create
its own marker file. The scan (resolve, the uncommitted-changes note, every file, `read`,
`materialize`, the `scan` command) must give what the same tree gives without the config, and
no marker may appear. The cache half: a clone that fails (bad remote, timeout, an exception
midway) leaves no lock, temp dir or git child, and a clone orphaned by a killed scan is killed
by the next one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import SourceError
from boundary_audit.source import materialize, open_checkout
from boundary_audit.source import mirror as mirror_module
from boundary_audit.source.cache import LOCK_ENV, MirrorSlot
from boundary_audit.source.shadow import PREFIX
from tests.support.git_daemon import GitDaemon, TcpProxy
from tests.support.gitrepos import git, make_repo

TOOL = b"""import subprocess


def run_tool(cmd):
    return subprocess.run(cmd, shell=True)
"""
FILES = {
    "agent/tool.py": TOOL,
    "a.py": b"print(1)\n",
    "b.txt": b"same\n",
    ".gitattributes": b"* filter=x diff=x merge=x\nb.txt filter=y\n",
}
HOOKS = ("post-checkout", "reference-transaction", "pre-commit", "post-index-change", "pre-push")


def _evil_config(markers: Path, repo: Path) -> str:
    def cmd(name: str) -> str:
        return f"\"sh -c 'touch {markers}/{name}; cat'\""  # quoted: ';' starts a comment

    (markers / "hooks").mkdir()
    for hook in HOOKS:
        path = markers / "hooks" / hook
        path.write_text(f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        path.chmod(0o755)
    (repo / ".git" / "evil.inc").write_text(
        f'[filter "y"]\n\tclean = {cmd("include-clean")}\n\tsmudge = {cmd("include-smudge")}\n'
        f"[core]\n\tpager = {cmd('include-pager')}\n"
    )
    return (
        "[core]\n\trepositoryformatversion = 1\n"
        f"\tfsmonitor = {cmd('fsmonitor')}\n\thooksPath = {markers}/hooks\n"
        f"\tpager = {cmd('pager')}\n\tsshCommand = {cmd('ssh')}\n\tgitProxy = {cmd('proxy')}\n"
        f'[filter "x"]\n\tclean = {cmd("clean")}\n\tsmudge = {cmd("smudge")}\n'
        f"\tprocess = {cmd('process')}\n\trequired = true\n"
        f'[diff "x"]\n\ttextconv = {cmd("textconv")}\n[diff]\n\texternal = {cmd("external")}\n'
        f'[merge "x"]\n\tdriver = {cmd("merge")}\n'
        f"[credential]\n\thelper = \"!sh -c 'touch {markers}/credential'\"\n"
        "[extensions]\n\tpartialClone = origin\n"
        f'[remote "origin"]\n\turl = /nonexistent\n\tpromisor = true\n'
        f"\tuploadpack = \"sh -c 'touch {markers}/uploadpack'; git-upload-pack\"\n"
        "[include]\n\tpath = evil.inc\n"
        f'[includeIf "gitdir:/"]\n\tpath = {repo}/.git/evil.inc\n'
    )


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, str]:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "hostile"
    make_repo(repo, FILES)
    # Same size, newer mtime: git must hash a.py (through the clean filter) to see it changed,
    # and b.txt (unchanged bytes) to see that it did not.
    (repo / "a.py").write_bytes(b"print(2)\n")
    later = time.time() + 5
    os.utime(repo / "a.py", (later, later))
    os.utime(repo / "b.txt", (later, later))
    other = tmp_path / "other"
    make_repo(other, {"secret.txt": b"from outside the scanned repository\n"})
    blob = git(other, "rev-parse", "HEAD:secret.txt")
    alt = repo / ".git" / "objects" / "info"
    alt.mkdir(exist_ok=True)
    (alt / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    (repo / ".git" / "config").write_text(_evil_config(markers, repo))
    return repo, markers, blob


def _markers(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir() if p.name != "hooks")


def _scan_everything(repo: Path, out: Path) -> None:
    co = open_checkout(str(repo))
    assert co.sha == git(repo, "rev-parse", "HEAD")
    assert co.git_dir == repo.resolve() / ".git"
    assert co.notes == (
        f"{repo} has 1 uncommitted change(s); scanned HEAD ({co.sha[:12]}) as committed, "
        "not the working files",
    )
    assert [(f.path, f.data) for f in co.files()] == sorted(FILES.items())
    assert co.read("a.py") == b"print(1)\n"
    materialize(co, out)
    assert {p: (out / p).read_bytes() for p in FILES} == FILES
    assert open_checkout(f"{repo}@HEAD").sha == co.sha


def test_scanning_a_hostile_repository_runs_nothing_and_reads_the_same(
    hostile: tuple[Path, Path, str], tmp_path: Path
) -> None:
    repo, markers, _ = hostile
    _scan_everything(repo, tmp_path / "out")
    assert open_checkout(str(repo)).partial is True
    assert _markers(markers) == []


def _knob(name: str, markers: Path, repo: Path) -> str:
    def cmd(what: str) -> str:
        return f"\"sh -c 'touch {markers}/{what}; cat'\""  # quoted: ';' starts a comment

    if name == "include":
        (repo / ".git" / "evil.inc").write_text(f'[filter "x"]\n\tclean = {cmd("include")}\n')
    (markers / "hooks").mkdir(exist_ok=True)
    for hook in HOOKS:
        (markers / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        (markers / "hooks" / hook).chmod(0o755)
    return {
        "clean-filter": f'[filter "x"]\n\tclean = {cmd("clean")}\n',
        "smudge-filter": f'[filter "x"]\n\tsmudge = {cmd("smudge")}\n',
        "process-filter": f'[filter "x"]\n\tprocess = {cmd("process")}\n',
        "fsmonitor": f"[core]\n\tfsmonitor = {cmd('fsmonitor')}\n",
        "hooks": f"[core]\n\thooksPath = {markers}/hooks\n",
        "pager": f"[core]\n\tpager = {cmd('pager')}\n[pager]\n\tstatus = {cmd('pager2')}\n",
        "promisor-uploadpack": "[core]\n\trepositoryformatversion = 1\n"
        "[extensions]\n\tpartialClone = origin\n"
        f'[remote "origin"]\n\turl = /nonexistent\n\tpromisor = true\n'
        f"\tuploadpack = \"sh -c 'touch {markers}/uploadpack'; git-upload-pack\"\n",
        "include": "[include]\n\tpath = evil.inc\n",
        "include-if": f'[includeIf "gitdir:/"]\n\tpath = {markers}/evil.inc\n',
    }[name]


KNOBS = [
    "clean-filter",
    "smudge-filter",
    "process-filter",
    "fsmonitor",
    "hooks",
    "pager",
    "promisor-uploadpack",
    "include",
    "include-if",
]


@pytest.mark.parametrize("knob", KNOBS)
def test_each_hostile_setting_alone_runs_nothing(knob: str, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "r"
    make_repo(repo, FILES)
    (repo / "a.py").write_bytes(b"print(2)\n")
    later = time.time() + 5
    os.utime(repo / "a.py", (later, later))
    os.utime(repo / "b.txt", (later, later))
    (markers / "evil.inc").write_text(
        f'[filter "x"]\n\tclean = "sh -c \'touch {markers}/include-if; cat\'"\n'
    )
    with open(repo / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(_knob(knob, markers, repo))
    _scan_everything(repo, tmp_path / "out")
    assert _markers(markers) == ["evil.inc"]


def test_the_scan_command_finds_the_same_as_on_a_benign_copy(
    hostile: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, markers, _ = hostile
    benign = tmp_path / "benign"
    make_repo(benign, FILES)

    def findings(target: Path) -> list[tuple[str, str, int]]:
        rc = cli.main(["scan", "--no-probe", "--format", "json", str(target)])
        out, _ = capsys.readouterr()
        assert rc == 0
        return [(f["code"], f["path"], f["line"]) for f in json.loads(out)["findings"]]

    assert findings(repo) == findings(benign) == [("BA101", "agent/tool.py", 5)]
    assert _markers(markers) == []


def _commit_outside_blob(repo: Path, blob: str) -> str:
    """A commit of `repo` (no ref) whose tree holds `blob`, which only an alternate has."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "tmp-index")}
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    plain = ["git", "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}"]
    plain += ["-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    for args in (
        ["read-tree", "--empty"],
        ["update-index", "--add", "--cacheinfo", f"100644,{blob},outside.txt"],
    ):
        subprocess.run([*plain, *args], env=env, check=True)
    tree = subprocess.run([*plain, "write-tree"], env=env, check=True, capture_output=True)
    commit = subprocess.run([*plain, "commit-tree", tree.stdout.decode().strip(), "-m", "x"],
                            env=env, check=True, capture_output=True)  # fmt: skip
    return commit.stdout.decode().strip()


def test_alternates_pointing_out_are_not_read(hostile: tuple[Path, Path, str]) -> None:
    repo, markers, blob = hostile
    commit = _commit_outside_blob(repo, blob)
    assert git(repo, "cat-file", "blob", blob)  # plain git reads it through the alternate
    got = [(f.path, f.skipped, f.data) for f in open_checkout(f"{repo}@{commit}").files()]
    assert got == [("outside.txt", "missing blob", None)]
    assert _markers(markers) == []


def test_a_file_url_never_serves_objects_from_an_alternate(tmp_path: Path) -> None:
    other, repo = tmp_path / "other", tmp_path / "r"
    make_repo(other, {"secret.txt": b"from outside the scanned repository\n"})
    make_repo(repo, {"f": b"x"})
    (repo / ".git" / "objects" / "info" / "alternates").write_text(f"{other}/.git/objects\n")
    commit = _commit_outside_blob(repo, git(other, "rev-parse", "HEAD:secret.txt"))
    git(repo, "update-ref", "refs/heads/main", commit)
    with pytest.raises(SourceError) as err:
        open_checkout(repo.as_uri(), cache_dir=tmp_path / "cache")
    assert err.value.message.startswith(f"cannot clone {repo.as_uri()}: ")
    assert list((tmp_path / "cache" / "git").iterdir()) == []


def test_a_file_url_is_cloned_from_a_shadow_not_the_repository(
    hostile: tuple[Path, Path, str], tmp_path: Path
) -> None:
    repo, markers, _ = hostile
    cache = tmp_path / "cache"
    url = repo.as_uri()
    co = open_checkout(url, cache_dir=cache)
    assert co.sha == git(repo, "rev-parse", "HEAD")
    assert [f.data for f in co.files()] == [c for _, c in sorted(FILES.items())]
    assert git(co.git_dir, "config", "remote.origin.url") == url
    assert not (co.git_dir / "objects" / "info" / "alternates").exists()
    open_checkout(url, cache_dir=cache, refresh=True)
    assert _markers(markers) == []


def test_no_shadow_is_left_behind(hostile: tuple[Path, Path, str]) -> None:
    repo, _, _ = hostile
    co = open_checkout(str(repo))
    assert co.shadow is not None and co.shadow.path.is_dir()
    where = co.shadow.path
    del co
    assert not where.exists()
    namespace = "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit())
    stale = Path(tempfile.gettempdir()) / f"{PREFIX}{namespace}-999999999-x"
    elsewhere = Path(tempfile.gettempdir()) / f"{PREFIX}1-999999999-x"  # another namespace
    stale.mkdir()
    elsewhere.mkdir()
    with contextlib.suppress(SourceError):
        open_checkout(str(repo / "nope"))
    open_checkout(str(repo))
    assert not stale.exists()  # a dead pid's shadow is removed by the next one
    assert elsewhere.is_dir()  # a pid of another pid namespace says nothing about liveness
    elsewhere.rmdir()


# -- failed and orphaned clones ---------------------------------------------------------------


def _lock_children(slot: MirrorSlot) -> list[int]:
    needle = f"{LOCK_ENV}={slot.lock_path}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_an_exception_midway_leaves_no_lock_temp_or_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    make_repo(src, {"f": b"x"})
    cache = tmp_path / "cache"
    url = src.as_uri()

    def boom(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(mirror_module, "_configure", boom)
    with pytest.raises(KeyboardInterrupt):
        open_checkout(url, cache_dir=cache)
    assert list((cache / "git").iterdir()) == []
    assert _lock_children(MirrorSlot.for_url(url, cache)) == []
    monkeypatch.undo()
    assert open_checkout(url, cache_dir=cache).sha == git(src, "rev-parse", "HEAD")


SCAN = """
import pathlib, sys
from boundary_audit.source import open_checkout
print(open_checkout(sys.argv[1], cache_dir=pathlib.Path(sys.argv[2]), timeout=60).sha)
"""


def _guardian_of(pid: int) -> int | None:
    """The supervisor guardian watching process `pid` (its ledger is `owners/<pid>.*`)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"boundary_audit.supervisor" in argv and any(
            f"/owners/{pid}.".encode() in a for a in argv
        ):
            return int(entry.name)
    return None


@pytest.mark.parametrize("guardian", ["alive", "killed too"])
def test_a_clone_orphaned_by_a_killed_scan_is_killed(
    git_daemon: GitDaemon, git_proxy: TcpProxy, tmp_path: Path, guardian: str
) -> None:
    """Killed with SIGKILL, the scan's guardian kills its clone; if the guardian was killed
    too, the next scan that takes the lock kills the orphan."""
    files = {f"blob{i}.bin": os.urandom(1 << 20) for i in range(3)}
    sha = make_repo(git_daemon.base / "r.git", files, bare=True)
    url, cache = git_proxy.url("r.git"), tmp_path / "cache"
    slot = MirrorSlot.for_url(url, cache)
    git_proxy.rate = 128 * 1024  # ~24 s for the pack: the clone is still running when we look
    # A state dir of its own: any other boundary-audit process of the shared test state dir
    # (the other xdist worker) would reap the dead scan's ledger — and its clone — first.
    env = {**os.environ, "BOUNDARY_AUDIT_STATE_DIR": str(tmp_path / "state")}
    scan = subprocess.Popen([sys.executable, "-c", SCAN, url, str(cache)], env=env)
    deadline = time.monotonic() + 30
    while git_proxy.bytes_down < 64 * 1024 or not _lock_children(slot):
        assert time.monotonic() < deadline, "the clone never started"
        time.sleep(0.05)
    watcher = _guardian_of(scan.pid)
    assert watcher is not None
    if guardian == "killed too":
        os.kill(watcher, signal.SIGKILL)
    os.kill(scan.pid, signal.SIGKILL)  # the scan only: its git clone runs in its own session
    scan.wait(timeout=10)
    git_proxy.freeze()  # an orphan stays connected and alive, waiting for more of the pack
    git_proxy.rate = None
    if guardian == "alive":
        deadline = time.monotonic() + 15
        while _lock_children(slot):
            assert time.monotonic() < deadline, "the guardian left the clone running"
            time.sleep(0.05)
        orphans: list[int] = []
    else:
        time.sleep(1.0)
        orphans = _lock_children(slot)
        assert orphans  # a clone still writing into the temp dir, holding no lock
    co = open_checkout(url, cache_dir=cache, timeout=60)
    assert co.sha == sha
    assert _lock_children(slot) == []
    for pid in orphans:
        assert not Path(f"/proc/{pid}").exists() or b"Z" in _state(pid)
    assert sorted(p.name for p in slot.root.iterdir()) == [f"{slot.key}.git", f"{slot.key}.lock"]


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
    except OSError:
        return b"Z"


def _git_children_reading(needle: str, parent: int) -> list[int]:
    """Pids of the git children of `parent` whose argv holds `needle` (a sha: another test's
    repository, or a run of this one, may have the same)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                ppid = int((entry / "stat").read_bytes().rpartition(b")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == parent and argv[0] == b"git" and any(needle.encode() in a for a in argv):
                found.append(int(entry.name))
    return found


def _ledgered_pids(state: Path) -> set[int]:
    """Pids of the processes the ledgers below `state` hold (`supervisor.Ledger`)."""
    found = set()
    for ledger in (state / "owners").glob("*.jsonl"):
        for line in ledger.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                if rec.get("kind") == "process":
                    found.add(int(rec["pid"]))
    return found


def test_a_local_git_call_blocked_by_a_planted_fifo_is_reaped_by_the_next_run(
    tmp_path: Path,
) -> None:
    """A local scan starts no guardian: its git calls end by themselves if it dies. The one
    way a hostile repository can keep one alive (a FIFO where git opens a loose object) leaves
    a ledger that the next boundary-audit to register anything reaps."""
    sha = make_repo(tmp_path / "r", {"a.py": b"print(1)\n"})
    loose = tmp_path / "r" / ".git" / "objects" / sha[:2] / sha[2:]
    loose.unlink()
    os.mkfifo(loose)
    env = {**os.environ, "BOUNDARY_AUDIT_STATE_DIR": str(tmp_path / "state")}
    cache = tmp_path / "cache"
    scan = subprocess.Popen(
        [sys.executable, "-c", SCAN, f"{tmp_path / 'r'}@{sha}", str(cache)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    # the scan writes each git call down just after starting it (a call killed in between is
    # in no ledger: nothing could reap it, and this test is not about that), and a call that
    # reads no object comes and goes: wait for git calls that are still there, written down
    while not (blocked := _git_children_reading(sha, scan.pid)) or not (
        set(blocked) <= _ledgered_pids(tmp_path / "state")
    ):
        assert time.monotonic() < deadline, "git never opened the FIFO"
        time.sleep(0.05)
    assert _guardian_of(scan.pid) is None
    scan.kill()
    scan.wait(timeout=10)
    time.sleep(0.5)
    assert all(_state(pid) != b"Z" for pid in blocked)  # still blocked in open(2), ownerless
    sound = make_repo(tmp_path / "sound", {"b.py": b"print(2)\n"})
    rerun = subprocess.run(
        [sys.executable, "-c", SCAN, f"{tmp_path / 'sound'}@{sound}", str(cache)],
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert rerun.stdout.decode().strip() == sound
    assert all(not Path(f"/proc/{pid}").exists() or _state(pid) == b"Z" for pid in blocked)
    assert list((tmp_path / "state" / "owners").glob("*.jsonl")) == []
