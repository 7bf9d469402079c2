"""Remote repositories over a real git daemon on 127.0.0.1: revs, cache reuse, offline,
refresh, unreachable or silent remotes, and the guarantee that no credential prompt appears."""

from __future__ import annotations

import fcntl
import http.server
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.errors import ExitCode, SourceError
from boundary_audit.source import open_checkout
from boundary_audit.source._git import git_env, ssh_command
from boundary_audit.source.cache import MARKER, MirrorSlot
from tests.support.git_daemon import GitDaemon, free_port
from tests.support.gitrepos import add_commit, make_repo


@pytest.fixture
def served(git_daemon: GitDaemon) -> tuple[GitDaemon, dict[str, str]]:
    """A served repository r.git: first commit (tag v1), a feature branch, main ahead of v1."""
    repo = git_daemon.base / "r.git"
    first = make_repo(repo, {"a.py": b"one\n"}, bare=True, tags=["v1"], annotated={"v1.0": "rel"})
    feature = add_commit(repo, {"f.py": b"feature\n"}, branch="feature/x")
    main = add_commit(repo, {"a.py": b"two\n"})
    return git_daemon, {"first": first, "feature": feature, "main": main}


def test_each_rev_form_resolves_over_the_daemon(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    daemon, sha = served
    url = daemon.url("r.git")
    cache = tmp_path / "cache"
    co = open_checkout(url, cache_dir=cache)
    assert (co.sha, co.url, co.spec.kind) == (sha["main"], url, "url")
    assert [(f.path, f.data) for f in co.files()] == [("a.py", b"two\n")]
    for rev, want in [
        ("v1", "first"),
        ("v1.0", "first"),
        ("feature/x", "feature"),
        (sha["feature"][:8], "feature"),
        (sha["first"], "first"),
        ("main", "main"),
        ("HEAD", "main"),
    ]:
        assert open_checkout(f"{url}@{rev}", cache_dir=cache).sha == sha[want], rev
    assert [(f.path, f.data) for f in open_checkout(f"{url}@v1", cache_dir=cache).files()] == [
        ("a.py", b"one\n")
    ]
    assert len(list((cache / "git").glob("*.git"))) == 1


def test_unknown_revision_names_rev_and_repo(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    url = served[0].url("r.git")
    for rev, hint in [
        ("nope", None),
        ("deadbee", "a short sha must be unambiguous and reachable from a branch or tag"),
        ("d" * 40, None),
    ]:
        with pytest.raises(SourceError) as err:
            open_checkout(f"{url}@{rev}", cache_dir=tmp_path)
        assert (err.value.message, err.value.hint) == (f"unknown revision '{rev}' in {url}", hint)
        assert err.value.exit_code == ExitCode.SOURCE


def test_cached_mirror_is_reused_without_network(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    daemon, sha = served
    url = daemon.url("r.git")
    open_checkout(url, cache_dir=tmp_path)
    daemon.stop()  # from here on any network access fails
    assert open_checkout(url, cache_dir=tmp_path).sha == sha["main"]
    assert open_checkout(f"{url}@v1", cache_dir=tmp_path).sha == sha["first"]
    assert open_checkout(f"{url}@{sha['feature'][:10]}", cache_dir=tmp_path).sha == sha["feature"]
    with pytest.raises(
        SourceError, match=rf"^cannot fetch {url}: unable to connect to 127\.0\.0\.1:"
    ):
        open_checkout(url, cache_dir=tmp_path, refresh=True)
    with pytest.raises(SourceError, match=rf"^cannot fetch {url}: "):
        open_checkout(f"{url}@not-cached", cache_dir=tmp_path)


def test_offline_uses_only_the_cache_and_takes_no_lock(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    daemon, sha = served
    url = daemon.url("r.git")
    with pytest.raises(SourceError) as err:
        open_checkout(url, cache_dir=tmp_path, offline=True)
    assert (
        err.value.message
        == f"{url} is not in the cache ({tmp_path / 'git'}) and offline mode forbids cloning"
    )
    open_checkout(url, cache_dir=tmp_path)
    add_commit(daemon.base / "r.git", {"later.py": b"x"}, tags=["v2"])
    slot = MirrorSlot.for_url(url, tmp_path)
    with open(slot.lock_path, "w") as held:  # another process is busy with this mirror
        fcntl.flock(held, fcntl.LOCK_EX)
        assert open_checkout(url, cache_dir=tmp_path, offline=True).sha == sha["main"]
        with pytest.raises(SourceError) as err:
            open_checkout(f"{url}@v2", cache_dir=tmp_path, offline=True)
    assert err.value.message == f"unknown revision 'v2' in the cached mirror of {url}"
    assert err.value.hint == "run again without --offline to fetch it"


def test_refresh_and_missing_revs_fetch(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    daemon, sha = served
    url = daemon.url("r.git")
    assert open_checkout(url, cache_dir=tmp_path).sha == sha["main"]
    newer = add_commit(daemon.base / "r.git", {"b.py": b"new\n"})
    assert open_checkout(url, cache_dir=tmp_path).sha == sha["main"]  # cached HEAD, no fetch
    assert open_checkout(url, cache_dir=tmp_path, refresh=True).sha == newer
    newest = add_commit(daemon.base / "r.git", {"c.py": b"newest\n"}, branch="topic")
    assert open_checkout(f"{url}@{newest}", cache_dir=tmp_path).sha == newest  # absent sha: fetched
    later = add_commit(daemon.base / "r.git", {"d.py": b"d\n"}, tags=["v3"])
    assert open_checkout(f"{url}@v3", cache_dir=tmp_path).sha == later  # absent tag: fetched


def test_unreachable_remote_is_a_source_error_at_once(tmp_path: Path) -> None:
    port = free_port()
    for url, reason in [
        (
            f"git://127.0.0.1:{port}/r.git",
            "unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused",
        ),
        (
            f"ssh://127.0.0.1:{port}/r.git",
            f"ssh: connect to host 127.0.0.1 port {port}: Connection refused",
        ),
    ]:
        with pytest.raises(SourceError) as err:
            open_checkout(url, cache_dir=tmp_path, timeout=20)
        assert err.value.message == f"cannot clone {url}: {reason}"
        assert err.value.exit_code == ExitCode.SOURCE
    assert list((tmp_path / "git").iterdir()) == []  # no mirror, no temp, no lock


def test_silent_remote_times_out(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/r.git"
        with pytest.raises(SourceError) as err:
            open_checkout(url, cache_dir=tmp_path, timeout=1.5)
    assert err.value.message == f"cannot clone {url}: no result within 1.5s (timed out)"
    assert list((tmp_path / "git").iterdir()) == []  # the lock goes with the failed clone


class _AuthRequired(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def auth_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def test_no_credential_prompt_helper_or_askpass_is_consulted(
    auth_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "asked"
    spy = tmp_path / "spy"
    spy.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\necho username=u\necho password=p\n')
    spy.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[credential]\n\thelper = {spy}\n[credential "http://127.0.0.1"]\n\thelper = {spy}\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_ASKPASS", str(spy))
    monkeypatch.setenv("SSH_ASKPASS", str(spy))
    url = f"http://127.0.0.1:{auth_server}/private.git"
    with pytest.raises(SourceError) as err:
        open_checkout(url, cache_dir=tmp_path / "cache", timeout=20)
    assert err.value.message == (
        f"cannot clone {url}: could not read Username for 'http://127.0.0.1:{auth_server}': "
        "terminal prompts disabled"
    )
    assert err.value.hint is not None and "never prompts" in err.value.hint
    assert not marker.exists()


def test_git_environment_forbids_prompts() -> None:
    env = git_env(
        network=True,
        timeout=60,
        base={
            "PATH": "/usr/bin",
            "GIT_DIR": "/x",
            "GIT_TRACE": "1",
            "GIT_SSH_COMMAND": "ssh -i key -o BatchMode=no",
        },
    )
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["SSH_ASKPASS_REQUIRE"] == "never"
    assert os.path.basename(env["GIT_ASKPASS"]) == "false" == os.path.basename(env["SSH_ASKPASS"])
    assert "GIT_DIR" not in env and env["GIT_TRACE"] == "1"
    assert env["GIT_ALLOW_PROTOCOL"] == "https:http:ssh:git:file"
    assert env["GIT_SSH_COMMAND"] == (
        "ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 "
        "-o ServerAliveCountMax=3 "
        "-i key -o BatchMode=no"
    )
    offline = git_env(network=False, timeout=5, base={})
    assert (offline["GIT_ALLOW_PROTOCOL"], offline["GIT_NO_LAZY_FETCH"]) == (
        "boundary-audit-no-network",
        "1",
    )
    assert ssh_command(5, "/opt/plink -batch") == (
        "/opt/plink -batch -o BatchMode=yes -o ConnectTimeout=5 -o ServerAliveInterval=15 "
        "-o ServerAliveCountMax=3"
    )


def test_a_mirror_without_marker_is_recloned(
    served: tuple[GitDaemon, dict[str, str]], tmp_path: Path
) -> None:
    daemon, sha = served
    url = daemon.url("r.git")
    slot = MirrorSlot.for_url(url, tmp_path)
    slot.path.mkdir(parents=True)
    (slot.path / "HEAD").write_text("garbage\n")
    leftover = slot.root / f"{slot.key}.tmp-killed"
    (leftover / "objects").mkdir(parents=True)
    assert open_checkout(url, cache_dir=tmp_path).sha == sha["main"]
    assert (slot.path / MARKER).read_text() == f"git://127.0.0.1:{daemon.port}/r\n"
    assert not leftover.exists()
    assert open_checkout(url, cache_dir=tmp_path, offline=True).sha == sha["main"]


def test_waiting_for_the_lock_is_bounded(tmp_path: Path) -> None:
    url = f"git://127.0.0.1:{free_port()}/r.git"
    slot = MirrorSlot.for_url(url, tmp_path)
    slot.root.mkdir(parents=True)
    waits: list[str] = []
    with open(slot.lock_path, "w") as held:  # another scan is cloning this URL
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(SourceError) as err:
            open_checkout(url, cache_dir=tmp_path, timeout=0.3, progress=waits.append)
    assert err.value.message == (
        f"another boundary-audit process has held {slot.lock_path} for more than 0.3s"
    )
    assert waits == [f"waiting for another process to finish with {slot.lock_path.name}"]
