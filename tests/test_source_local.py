"""Local repositories and file enumeration: spec forms, revs, skip reasons, partial clones.

Everything here reads repositories built by tests/support/gitrepos.py; no network is used.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from boundary_audit.errors import ExitCode, SourceError
from boundary_audit.source import SourceFile, materialize, open_checkout
from tests.support.gitrepos import (
    Executable,
    Submodule,
    Symlink,
    add_commit,
    git,
    git_env,
    make_repo,
)

LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345\n"
)
GITLINK = "0123456789abcdef0123456789abcdef01234567"
MENAGERIE = {
    "a.py": b"import subprocess\n",
    "bin/run": Executable(b"#!/bin/sh\necho hi\n"),
    "escape": Symlink("../../../etc/passwd"),
    "vendor/lib": Submodule(GITLINK),
    "data/model.bin": LFS_POINTER,
    "blob/nul_at_8191": b"x" * 8191 + b"\0",
    "blob/nul_at_8192": b"x" * 8192 + b"\0",
    "big/exactly": b"y" * 9000,
    "big/over": b"y" * 9001,
    "empty": b"",
    b"caf\xe9/\xff.py": b"name is latin-1\n",
}


@pytest.fixture
def menagerie(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "menagerie"
    return repo, make_repo(repo, MENAGERIE)


def test_files_reports_every_entry_with_its_skip_reason(menagerie: tuple[Path, str]) -> None:
    repo, sha = menagerie
    co = open_checkout(str(repo))
    assert (co.sha, co.spec.kind, co.url, co.git_dir, co.notes) == (
        sha,
        "local",
        repo.resolve().as_uri(),
        repo.resolve() / ".git",
        (),
    )
    got = [(f.path, f.skipped, oct(f.mode), f.data) for f in co.files(max_bytes=9000)]
    assert got == [
        ("a.py", None, "0o100644", b"import subprocess\n"),
        ("big/exactly", None, "0o100644", b"y" * 9000),
        ("big/over", "too large (9001 bytes)", "0o100644", None),
        ("bin/run", None, "0o100755", b"#!/bin/sh\necho hi\n"),
        ("blob/nul_at_8191", "binary", "0o100644", None),
        ("blob/nul_at_8192", None, "0o100644", b"x" * 8192 + b"\0"),
        ("caf\\xe9/\\xff.py", None, "0o100644", b"name is latin-1\n"),
        ("data/model.bin", "LFS pointer (12345 bytes not fetched)", "0o100644", None),
        ("empty", None, "0o100644", b""),
        ("escape", "symlink", "0o120000", None),
        ("vendor/lib", "submodule", "0o160000", None),
    ]
    raw = {f.path: f.raw_path for f in co.files()}
    assert raw["caf\\xe9/\\xff.py"] == b"caf\xe9/\xff.py"
    assert co.read(b"caf\xe9/\xff.py") == co.read("caf\\xe9/\\xff.py") == b"name is latin-1\n"
    assert co.read(os.fsdecode(b"caf\xe9/\xff.py")) == b"name is latin-1\n"


def test_files_leaves_out_unwanted_regular_files_unread(
    menagerie: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from boundary_audit.source import objects
    from boundary_audit.static.parsing import may_be_source

    asked: list[int] = []
    contents = objects.BlobStream.contents

    def counting(self: objects.BlobStream, oids: list[str]) -> object:
        asked.append(len(oids))
        return contents(self, oids)

    monkeypatch.setattr(objects.BlobStream, "contents", counting)
    co = open_checkout(str(menagerie[0]))
    got = [(f.path, f.skipped) for f in co.files(max_bytes=9000, want=may_be_source)]
    assert got == [
        ("a.py", None),
        ("big/exactly", None),
        ("big/over", "too large (9001 bytes)"),
        ("bin/run", None),
        ("blob/nul_at_8191", "binary"),
        ("blob/nul_at_8192", None),
        ("caf\\xe9/\\xff.py", None),
        ("empty", None),
        ("escape", "symlink"),
        ("vendor/lib", "submodule"),
    ]  # data/model.bin is left out: `.bin` is no scanned language's, nor a script's
    assert asked == [7]  # every regular file but data/model.bin and big/over (too large)


def test_default_limit_is_two_mebibytes(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"at_limit": b"a" * (2 << 20), "over": b"a" * ((2 << 20) + 1)})
    got = [(f.path, f.skipped, len(f.data or b"")) for f in open_checkout(str(repo)).files()]
    assert got == [("at_limit", None, 2 << 20), ("over", "too large (2097153 bytes)", 0)]


def test_paths_selects_files_and_directories_and_reports_unknown(
    menagerie: tuple[Path, str],
) -> None:
    co = open_checkout(str(menagerie[0]))
    got = [(f.path, f.skipped) for f in co.files(paths=["big/", "a.py", "nope", "escape"])]
    assert got == [
        ("a.py", None),
        ("big/exactly", None),
        ("big/over", None),
        ("escape", "symlink"),
        ("nope", "no such path"),
    ]
    assert [f.path for f in co.files(paths=[])] == []


def test_a_checkout_lists_its_tree_once(
    menagerie: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from boundary_audit.source import checkout

    calls: list[bytes | None] = []
    real = checkout.list_tree

    def counted(*args: object, path: bytes | None = None, **kw: object) -> object:
        calls.append(path)
        return real(*args, path=path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(checkout, "list_tree", counted)
    co = open_checkout(str(menagerie[0]))
    first = [f.path for f in co.files()]
    assert [f.path for f in co.files(paths=["a.py"])] == ["a.py"]
    assert [f.path for f in co.files(paths=["nope"])] == ["nope"]
    assert co.read("caf\\xe9/\\xff.py") == b"name is latin-1\n"
    assert [f.path for f in co.files()] == first
    assert calls == [None]  # the whole tree, once; config, scan and sink texts all reuse it


def test_read_returns_exact_bytes_and_refuses_non_files(menagerie: tuple[Path, str]) -> None:
    co = open_checkout(str(menagerie[0]))
    assert co.read("blob/nul_at_8191") == b"x" * 8191 + b"\0"  # read() ignores binary and size
    assert co.read("/big/over") == b"y" * 9001
    short = co.sha[:12]
    cases = {
        "escape": f"escape is a symlink at {short}; it is not followed",
        "vendor/lib": f"vendor/lib is a submodule at {short}, not a file",
        "big": f"big is a directory at {short}, not a file",
        "nope.py": f"no such path at {short}: 'nope.py'",
        "caf\\xe9/nope": f"no such path at {short}: 'caf\\\\xe9/nope'",
        "/": f"no such path at {short}: '/'",
        "caf\udce9/nope": f"no such path at {short}: 'caf\\udce9/nope'",
    }
    for path, message in cases.items():
        with pytest.raises(SourceError) as err:
            co.read(path)
        assert err.value.message == message


def test_revs_resolve_to_full_shas(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    first = make_repo(repo, {"f": b"1\n"}, tags=["v1"], annotated={"v1.0": "release"})
    second = add_commit(repo, {"f": b"2\n"}, branch="feature/x")
    third = add_commit(repo, {"f": b"3\n"})
    assert open_checkout(str(repo)).sha == third
    for rev, sha in [
        ("v1", first),
        ("v1.0", first),
        ("feature/x", second),
        (first[:7], first),
        (second.upper(), second),
        ("main", third),
        ("HEAD", third),
    ]:
        co = open_checkout(f"{repo}@{rev}")
        assert (co.sha, co.spec.rev) == (sha, rev)
    assert [f.data for f in open_checkout(f"{repo}@v1.0").files()] == [b"1\n"]


def test_bare_repo_and_dot_git_dir_are_local_specs(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    sha = make_repo(bare, {"x": b"x"}, bare=True, tags=["t"])
    co = open_checkout(f"{bare}@t")
    assert (co.sha, co.git_dir, co.spec.kind) == (sha, bare.resolve(), "local")
    wt = tmp_path / "wt"
    sha2 = make_repo(wt, {"y": b"y"})
    assert open_checkout(str(wt / ".git")).sha == sha2


def test_dirty_work_tree_scans_head_and_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    sha = make_repo(repo, {"a.py": b"committed\n", "b.py": b"b\n"})
    (repo / "a.py").write_bytes(b"edited on disk\n")
    (repo / "b.py").unlink()
    (repo / "untracked.py").write_bytes(b"new\n")
    co = open_checkout(str(repo))
    assert co.notes == (
        f"{repo.resolve()} has 2 uncommitted change(s); scanned HEAD ({sha[:12]}) as committed, "
        "not the working files",
    )
    assert [(f.path, f.data) for f in co.files()] == [("a.py", b"committed\n"), ("b.py", b"b\n")]
    assert open_checkout(f"{repo}@HEAD").notes == ()  # an explicit rev is not about the work tree


@pytest.mark.parametrize("kind", ["plain", "subdir", "empty", "unknown-rev", "file"])
def test_local_errors_are_one_line_with_hint(tmp_path: Path, kind: str) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"d/f": b"x"})
    (tmp_path / "plain").mkdir()
    run_init = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(run_init))
    target, message, hint = {
        "plain": (
            tmp_path / "plain",
            f"not a git repository: {tmp_path / 'plain'}",
            "give the top of a work tree, a .git directory, a bare repository or a URL",
        ),
        "subdir": (
            repo / "d",
            f"not a git repository: {repo / 'd'}",
            f"{repo / 'd'} is inside the work tree {repo}; "
            "give that directory (and @REV if needed)",
        ),
        "empty": (run_init, f"{run_init} has no commits yet", "commit something, or give a rev"),
        "unknown-rev": (
            Path(f"{repo}@nope"),
            f"unknown revision 'nope' in {repo}",
            "local repositories are never fetched into; fetch it yourself",
        ),
        "file": (
            repo / "d" / "f",
            f"not a git repository: {repo / 'd' / 'f'}",
            f"{repo / 'd' / 'f'} is inside the work tree {repo}; "
            "give that directory (and @REV if needed)",
        ),
    }[kind]
    with pytest.raises(SourceError) as err:
        open_checkout(str(target))
    assert (err.value.message, err.value.hint, err.value.exit_code) == (
        message,
        hint,
        ExitCode.SOURCE,
    )


def test_file_url_is_mirrored_into_the_cache(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    sha = make_repo(repo, {"f": b"x"}, tags=["v1"])
    cache = tmp_path / "cache"
    co = open_checkout(f"{repo.as_uri()}@v1", cache_dir=cache)
    assert (co.sha, co.spec.kind, co.url) == (sha, "url", repo.as_uri())
    assert co.git_dir.parent == cache / "git" and co.git_dir.name.endswith(".git")
    assert sorted(p.name for p in (cache / "git").iterdir()) == [
        co.git_dir.name,
        co.git_dir.name[:-4] + ".lock",
    ]
    assert [f.data for f in co.files()] == [b"x"]


def test_partial_clone_skips_absent_blobs_and_never_fetches_them(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_repo(
        src,
        {"small.py": b"ok\n", "large.py": b"#" * 500 + b"\n", "also_large.txt": b"z" * 300},
        config={"uploadpack.allowFilter": "true"},
    )
    part = tmp_path / "part.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:limit=100", src.as_uri(), str(part))
    before = git(part, "rev-list", "--objects", "--missing=print", "HEAD")
    co = open_checkout(str(part))
    assert co.partial is True
    got = [(f.path, f.skipped, f.data) for f in co.files()]
    assert got == [
        ("also_large.txt", "missing blob", None),
        ("large.py", "missing blob", None),
        ("small.py", None, b"ok\n"),
    ]
    with pytest.raises(SourceError, match=r"^the blob of large.py is missing from "):
        co.read("large.py")
    with pytest.raises(SourceError, match=r"^cannot materialize "):
        materialize(co, tmp_path / "out")
    # the promisor remote was reachable all along, yet nothing was fetched
    assert git(part, "rev-list", "--objects", "--missing=print", "HEAD") == before
    assert before.count("\n?") == 2


def test_a_checkout_lists_absent_blobs_and_asks_sizes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan, the config discovery and the sink texts each read files of one Checkout:
    the absent blobs are listed once and a size is asked of git once per blob."""
    from boundary_audit.source import _git

    src = tmp_path / "src"
    make_repo(
        src,
        {"small.py": b"ok\n", "two.py": b"2\n", "large.py": b"#" * 500 + b"\n"},
        config={"uploadpack.allowFilter": "true"},
    )
    part = tmp_path / "part.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:limit=100", src.as_uri(), str(part))
    co = open_checkout(str(part))
    calls: list[tuple[str, bytes | None]] = []
    real = _git.run_git

    def counting(args, **kw):  # type: ignore[no-untyped-def]
        calls.append((args[0], kw.get("input")))
        return real(args, **kw)

    monkeypatch.setattr(_git, "run_git", counting)
    first = [(f.path, f.skipped, f.data) for f in co.files()]
    again = [(f.path, f.skipped, f.data) for f in co.files(paths=["small.py", "large.py"])]
    assert co.read("two.py") == b"2\n"
    with pytest.raises(SourceError, match=r"^the blob of large.py is missing from "):
        co.read("large.py")
    assert first == [
        ("large.py", "missing blob", None),
        ("small.py", None, b"ok\n"),
        ("two.py", None, b"2\n"),
    ]
    assert again == [("large.py", "missing blob", None), ("small.py", None, b"ok\n")]
    small, two = git(part, "rev-parse", "HEAD:small.py"), git(part, "rev-parse", "HEAD:two.py")
    assert [c for c in calls if c[0] != "ls-tree"] == [
        ("rev-list", None),
        ("cat-file", f"{small}\n{two}\n".encode()),
    ]


def test_objects_absent_from_a_normal_repository_are_skipped(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "keep.py").write_bytes(b"keep\n")
    (repo / "lost.py").write_bytes(b"lost\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "loose objects")
    oid = git(repo, "rev-parse", "HEAD:lost.py")
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    got = [(f.path, f.skipped, f.data) for f in open_checkout(f"{repo}@HEAD").files()]
    assert got == [("keep.py", None, b"keep\n"), ("lost.py", "missing blob", None)]


def test_materialize_writes_git_checkout_without_following_symlinks(
    menagerie: tuple[Path, str], tmp_path: Path
) -> None:
    co = open_checkout(str(menagerie[0]))
    out = materialize(co, tmp_path / "out")
    assert (out / "a.py").read_bytes() == b"import subprocess\n"
    assert os.readlink(out / "escape") == "../../../etc/passwd"
    assert stat.S_IMODE((out / "bin/run").stat().st_mode) & 0o111
    assert not stat.S_IMODE((out / "a.py").stat().st_mode) & 0o111
    assert (out / os.fsdecode(b"caf\xe9/\xff.py")).read_bytes() == b"name is latin-1\n"
    assert (out / "data/model.bin").read_bytes() == LFS_POINTER
    assert not (out / ".git").exists()
    with pytest.raises(SourceError, match=r"it exists and is not an empty directory$"):
        materialize(co, out)


def test_stopping_early_kills_the_batch_process(tmp_path: Path) -> None:
    # more output than a pipe holds, so cat-file is still writing when we stop reading
    make_repo(tmp_path / "r", {f"f{i}": bytes([65 + i]) * 200_000 for i in range(5)})
    files = open_checkout(str(tmp_path / "r")).files()
    first = next(files)
    assert first == SourceFile("f0", b"A" * 200_000, None, 0o100644, b"f0")
    assert len(_cat_file_processes()) == 1
    files.close()
    assert _cat_file_processes() == []


def test_inherited_git_environment_cannot_redirect_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wanted, other = tmp_path / "wanted", tmp_path / "other"
    sha = make_repo(wanted, {"f": b"wanted\n"})
    make_repo(other, {"f": b"other\n"})
    for var, value in [
        ("GIT_DIR", other / ".git"),
        ("GIT_OBJECT_DIRECTORY", other / ".git/objects"),
        ("GIT_INDEX_FILE", other / ".git/index"),
        ("GIT_WORK_TREE", other),
    ]:
        monkeypatch.setenv(var, str(value))
    co = open_checkout(str(wanted))
    assert (co.sha, [f.data for f in co.files()], co.notes) == (sha, [b"wanted\n"], ())


def test_replace_refs_do_not_change_what_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"f": b"genuine\n", "g": b"replacement\n"})
    git(repo, "replace", git(repo, "rev-parse", "HEAD:f"), git(repo, "rev-parse", "HEAD:g"))
    assert git(repo, "cat-file", "-p", "HEAD:f") == "replacement"  # plain git is fooled
    assert open_checkout(str(repo)).read("f") == b"genuine\n"


def _cat_file_processes() -> list[int]:
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and b"cat-file" in cmd:
            found.append(int(entry.name))
    return found


assert git_env  # re-exported for tests that run git by hand


def test_a_linked_worktree_is_read_through_its_common_dir(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"f": b"main\n"})
    side = add_commit(repo, {"f": b"side\n"}, branch="side")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "side")
    (wt / "f").write_bytes(b"edited\n")
    co = open_checkout(str(wt))
    assert (co.sha, [f.data for f in co.files()]) == (side, [b"side\n"])
    assert co.git_dir == (repo / ".git" / "worktrees" / "wt").resolve()
    assert co.notes == (
        f"{wt} has 1 uncommitted change(s); scanned HEAD ({side[:12]}) as committed, "
        "not the working files",
    )


def test_a_sha256_repository_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    (repo / "f").write_bytes(b"sha256\n")
    git(repo, "add", "f")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    co = open_checkout(str(repo))
    assert len(co.sha) == 64 and co.sha == git(repo, "rev-parse", "HEAD")
    assert [(f.path, f.data) for f in co.files()] == [("f", b"sha256\n")]
