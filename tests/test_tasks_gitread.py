"""gitread: the validator's git reader gives what real git gives, and nothing a hostile repo wants.

Exactness is checked against the host's git on repositories the tests build: `rev-list
--topo-order HEAD` on linear histories, merges, octopus and criss-cross merges and random DAGs;
`ls-tree -r --full-tree HEAD` and every blob; each loose, packed by `git gc`, and repacked with
deep delta chains as OFS_DELTA and as REF_DELTA (the test checks both kinds are in the pack).
The hostile half: links, FIFOs, alternates, replace refs, grafts, zip bombs, rewritten objects,
delta loops, sha256, and random corruption give a `GitReadError` reason, never an exception,
never a read outside the repository, never a hang.
"""

from __future__ import annotations

import hashlib
import os
import random
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundary_audit._subprocess import run
from boundary_audit.tasks.gitread import GitReadError, Limits, Repository, Unsupported
from tests.support.gitrepos import Executable, Submodule, Symlink, git, git_env, make_repo

WHEN = 1_700_000_000


@contextmanager
def reader(git_dir: Path, limits: Limits | None = None) -> Iterator[Repository]:
    fd = os.open(git_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        with Repository(fd, limits) as repo:
            yield repo
    finally:
        os.close(fd)


def ours(git_dir: Path, limits: Limits | None = None) -> list[str]:
    with reader(git_dir, limits) as repo:
        return repo.rev_list(repo.peel_commit(repo.head()))


def theirs(git_dir: Path) -> list[str]:
    return git(git_dir, "rev-list", "--topo-order", "HEAD").split()


def fast_import(repo: Path, parents: list[list[int]], branch_of_head: int | None = None) -> None:
    """Commit i has parents `parents[i]` (earlier indexes); HEAD is the last commit.

    Each commit changes one file, whose content grows slowly, so repacking makes deltas.
    """
    stream = bytearray()
    for i, ps in enumerate(parents):
        text = b"".join(b"line %d of a file that keeps most of its lines\n" % k for k in range(i))
        msg = f"commit {i}\n\nbody of {i}\n".encode()
        stream += b"commit refs/heads/c%d\nmark :%d\n" % (i, i + 1)
        stream += b"author A <a@x.invalid> %d +0000\n" % (WHEN + i * 7 % 5)
        stream += b"committer A <a@x.invalid> %d +0000\n" % (WHEN + i * 7 % 5)
        stream += b"data %d\n%s\n" % (len(msg), msg)
        if ps:
            stream += b"from :%d\n" % (ps[0] + 1)
            for p in ps[1:]:
                stream += b"merge :%d\n" % (p + 1)
        else:
            stream += b"deleteall\n"
        stream += b"M 100644 inline f%d.txt\ndata %d\n%s\n" % (i % 3, len(text), text)
        stream += b"M 100644 inline shared.txt\ndata %d\n%s\n" % (len(text), text)
    head = len(parents) - 1 if branch_of_head is None else branch_of_head
    stream += b"reset refs/heads/main\nfrom :%d\n\n" % (head + 1)
    git(repo, "fast-import", "--quiet", input=bytes(stream))
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    for i in range(len(parents)):
        git(repo, "update-ref", "-d", f"refs/heads/c{i}")


def init(path: Path, *extra: str) -> Path:
    run(["git", "init", "-q", "--bare", *extra, str(path)], env=git_env(), check=True)
    git(path, "config", "user.name", "A")
    git(path, "config", "user.email", "a@x.invalid")
    return path


DAGS = {
    "linear": [[], [0], [1], [2], [3]],
    "merge": [[], [0], [0], [1, 2], [3]],
    "merge-of-long-side": [[], [0], [1], [0], [3], [4], [2, 5], [6]],
    "octopus": [[], [0], [0], [0], [1, 2, 3], [4]],
    "criss-cross": [[], [0], [0], [1, 2], [2, 1], [3, 4]],
    "two-roots": [[], [], [0], [1, 2], [3]],
    "nested-merges": [[], [0], [1], [0], [3], [2, 4], [1], [5, 6], [0, 7]],
}


@pytest.mark.parametrize("name", sorted(DAGS))
def test_rev_list_order_is_gits_loose_and_packed(name: str, tmp_path: Path) -> None:
    repo = init(tmp_path / "r.git")
    fast_import(repo, DAGS[name])
    git(repo, "prune-packed")
    assert ours(repo) == theirs(repo)
    git(repo, "gc", "--quiet", "--prune=now")  # packs, packed-refs, commit-graph
    assert not list((repo / "refs" / "heads").iterdir())
    assert ours(repo) == theirs(repo)


@st.composite
def dags(draw: st.DrawFn) -> list[list[int]]:
    n = draw(st.integers(1, 24))
    out: list[list[int]] = []
    for i in range(n):
        if i == 0:
            out.append([])
            continue
        k = draw(st.sampled_from([0, 1, 1, 1, 2, 2, 3]) if i > 2 else st.just(1))
        out.append(draw(st.lists(st.integers(0, i - 1), min_size=k, max_size=k, unique=True)))
    return out


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dag=dags())
def test_rev_list_order_on_random_dags(
    dag: list[list[int]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = init(tmp_path_factory.mktemp("dag") / "r.git")
    fast_import(repo, dag)
    assert ours(repo) == theirs(repo)
    git(repo, "repack", "-a", "-d", "-q")
    assert ours(repo) == theirs(repo)


def _pack_entry_types(repo: Path) -> dict[int, int]:
    (idx,) = (repo / "objects" / "pack").glob("*.idx")
    pack = idx.with_suffix(".pack").read_bytes()
    counts: dict[int, int] = {}
    for line in git(repo, "verify-pack", "-v", str(idx)).splitlines():
        fields = line.split()
        if len(fields) >= 5 and len(fields[0]) == 40:
            typ = (pack[int(fields[4])] >> 4) & 7
            counts[typ] = counts.get(typ, 0) + 1
    return counts


def _everything(repo: Repository) -> tuple[list[str], list[tuple[bytes, int, str, bytes]]]:
    head = repo.peel_commit(repo.head())
    entries = repo.ls_tree(head)
    blobs = [(e.raw_path, e.mode, e.oid, repo.blob_prefix(e.oid, 1 << 30)[1])
             for e in entries if e.kind == "blob"]  # fmt: skip
    return repo.rev_list(head), blobs


def _gits_everything(repo: Path) -> tuple[list[str], list[tuple[bytes, int, str, bytes]]]:
    listing = run(["git", "-C", str(repo), "ls-tree", "-r", "-z", "--full-tree", "HEAD"],
                  env=git_env(), check=True).stdout  # fmt: skip
    blobs = []
    for record in listing.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            if kind == "blob":
                data = run(["git", "-C", str(repo), "cat-file", "blob", oid], env=git_env(),
                           check=True).stdout  # fmt: skip
                blobs.append((path, int(mode, 8), oid, data))
    return theirs(repo), blobs


@pytest.mark.parametrize("ofs", [True, False], ids=["ofs-delta", "ref-delta"])
def test_deep_delta_chains_read_exactly(ofs: bool, tmp_path: Path) -> None:
    repo = init(tmp_path / "r.git")
    fast_import(repo, [[]] + [[i] for i in range(40)])
    git(repo, "-c", f"repack.useDeltaBaseOffset={'true' if ofs else 'false'}",
        "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")  # fmt: skip
    types = _pack_entry_types(repo)
    assert types.get(6 if ofs else 7, 0) >= 20 and types.get(7 if ofs else 6, 0) == 0
    assert not list((repo / "objects").glob("??/*"))
    with reader(repo) as r:
        assert _everything(r) == _gits_everything(repo)


def test_ls_tree_modes_names_and_blobs_are_gits(tmp_path: Path) -> None:
    repo = tmp_path / "w"
    files: dict[str | bytes, object] = {
        "a.txt": b"a\n",
        "dir/sub dir/deep.txt": b"deep\n",
        "dir/run.sh": Executable(b"#!/bin/sh\n"),
        "link": Symlink("../../etc/shadow"),
        "vendor/mod": Submodule("1" * 40),
        b"caf\xe9 \n name": b"latin-1 and a newline\n",
        "empty": b"",
        "z-last": b"\0binary\xff",
    }
    make_repo(repo, files)  # type: ignore[arg-type]
    with reader(repo / ".git") as r:
        head = r.peel_commit(r.head())
        listing = [(e.raw_path, f"{e.mode:06o}", e.kind, e.oid) for e in r.ls_tree(head)]
        mine = _everything(r)
    raw = run(["git", "-C", str(repo), "ls-tree", "-r", "-z", "--full-tree", "HEAD"],
              env=git_env(), check=True).stdout  # fmt: skip
    want = []
    for record in raw.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            want.append((path, mode, kind, oid))
    assert listing == want
    assert ("160000", "commit") in {(m, k) for _, m, k, _ in listing}
    assert mine == _gits_everything(repo / ".git")
    git(repo, "gc", "-q")
    with reader(repo / ".git") as r:
        assert _everything(r) == mine


def test_head_detached_symref_chains_and_packed_refs(tmp_path: Path) -> None:
    repo = init(tmp_path / "r.git")
    fast_import(repo, [[], [0], [1]])
    main = git(repo, "rev-parse", "main")
    with reader(repo) as r:
        assert r.head() == main
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/alias")
    with reader(repo) as r:
        assert r.head() == main
    git(repo, "pack-refs", "--all")
    assert not (repo / "refs" / "heads" / "main").exists()
    with reader(repo) as r:
        assert r.head() == main
    first = git(repo, "rev-parse", "main~2")
    git(repo, "update-ref", "--no-deref", "HEAD", first)
    with reader(repo) as r:
        assert r.head() == first and ours(repo) == theirs(repo) == [first]
    git(repo, "symbolic-ref", "HEAD", "refs/heads/unborn")
    with (
        reader(repo) as r,
        pytest.raises(GitReadError, match=r"^refs/heads/unborn does not exist$"),
    ):
        r.head()


def test_annotated_tag_at_head_is_peeled(tmp_path: Path) -> None:
    repo = init(tmp_path / "r.git")
    fast_import(repo, [[], [0]])
    git(repo, "tag", "-a", "-m", "t", "v1", "main")
    tag = git(repo, "rev-parse", "v1")
    (repo / "HEAD").write_text(tag + "\n")  # git refuses to write it; a reply need not ask
    assert ours(repo) == theirs(repo) and len(theirs(repo)) == 2


def test_shallow_commits_have_no_parents_as_in_git(tmp_path: Path) -> None:
    src = init(tmp_path / "src.git")
    fast_import(src, [[], [0], [1], [2], [0, 3]])
    clone = tmp_path / "shallow.git"
    run(["git", "clone", "-q", "--bare", "--depth=2", src.as_uri(), str(clone)], env=git_env(),
        check=True)  # fmt: skip
    assert (clone / "shallow").is_file()
    assert ours(clone) == theirs(clone) and len(theirs(clone)) < 5


# -- hostile repositories -------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init(tmp_path / "r.git")
    fast_import(path, [[], [0], [1]])
    return path


def _loose(repo: Path, oid: str) -> Path:
    return repo / "objects" / oid[:2] / oid[2:]


def reason(git_dir: Path, limits: Limits | None = None) -> str:
    try:
        ours(git_dir, limits)
    except GitReadError as exc:
        return str(exc)
    raise AssertionError("no error")


def test_partial_clone_promisor_is_never_fetched_from(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.url", "/nonexistent")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "remote.origin.uploadpack", f'sh -c "id >> {marker}"; git-upload-pack')
    (repo / "refs" / "heads" / "main").write_text("1234567890123456789012345678901234567890\n")
    assert reason(repo) == "object 1234567890123456789012345678901234567890 is missing"
    assert not marker.exists()


def test_a_symlinked_object_is_not_followed(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    obj = _loose(repo, head)
    outside = tmp_path / "outside"
    outside.write_bytes(obj.read_bytes())  # a valid object: git would read it through the link
    obj.unlink()
    obj.symlink_to(outside)
    assert git(repo, "cat-file", "-t", head) == "commit"
    assert reason(repo) == f"objects/{head[:2]}/{head[2:]} is a symlink, not a regular file"
    obj.unlink()
    obj.symlink_to("/etc/shadow")
    assert reason(repo) == f"objects/{head[:2]}/{head[2:]} is a symlink, not a regular file"


def test_symlinked_objects_dir_refs_head_and_packed_refs(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    os.rename(repo / "objects", copy)
    (repo / "objects").symlink_to(copy)
    assert len(theirs(repo)) == 3  # git follows it
    assert reason(repo).startswith("cannot read the repository: a symlink or a non-directory")
    (repo / "objects").unlink()
    os.rename(copy, repo / "objects")
    main = repo / "refs" / "heads" / "main"
    (tmp_path / "ref").write_bytes(main.read_bytes())
    main.unlink()
    main.symlink_to(tmp_path / "ref")
    assert reason(repo) == "refs/heads/main is a symlink, not a regular file"
    main.unlink()
    (tmp_path / "packed").write_bytes(
        b"%s refs/heads/main\n" % (tmp_path / "ref").read_bytes()[:40]
    )
    (repo / "packed-refs").symlink_to(tmp_path / "packed")
    assert reason(repo) == "packed-refs is a symlink, not a regular file"
    (repo / "HEAD").unlink()
    (repo / "HEAD").symlink_to("/etc/shadow")
    assert reason(repo) == "HEAD is a symlink, not a regular file"


def _blocks(fn: object) -> bool:
    t = threading.Thread(target=fn, daemon=True)  # type: ignore[arg-type]
    t.start()
    t.join(10)
    return t.is_alive()


@pytest.mark.parametrize("where", ["object", "HEAD", "packed-refs", "config", "pack"])
def test_a_fifo_never_blocks(where: str, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    if where == "packed-refs":
        git(repo, "pack-refs", "--all")
    if where == "pack":
        git(repo, "repack", "-a", "-d", "-q")
        (pack,) = (repo / "objects" / "pack").glob("*.pack")
        target = pack
    else:
        named = {"HEAD": repo / "HEAD", "packed-refs": repo / "packed-refs"}
        target = named.get(where) or (repo / "config" if where == "config" else _loose(repo, head))
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    got: list[str] = []
    assert not _blocks(lambda: got.append(reason(repo)))
    rel = target.relative_to(repo)
    assert got == [f"{rel} is a special file, not a regular file"]


def test_alternates_replace_refs_grafts_and_commit_graph_are_ignored(
    repo: Path, tmp_path: Path
) -> None:
    honest = theirs(repo)
    other = init(tmp_path / "other.git")
    fast_import(other, [[], [0], [1], [2], [3]])
    (repo / "objects" / "info").mkdir(exist_ok=True)
    (repo / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    git(repo, "update-ref", "refs/heads/main", git(other, "rev-parse", "main"))
    assert len(theirs(repo)) == 5  # git reads the other repository's objects
    assert reason(repo) == f"object {git(other, 'rev-parse', 'main')} is missing"
    git(repo, "update-ref", "refs/heads/main", honest[0])
    (repo / "objects" / "info" / "alternates").unlink()
    fake = git(repo, "commit-tree", "-m", "forged\n", git(repo, "rev-parse", "HEAD^{tree}"))
    git(repo, "replace", honest[0], fake)
    (repo / "info").mkdir(exist_ok=True)
    (repo / "info" / "grafts").write_text(f"{honest[1]}\n")
    assert theirs(repo) != honest
    assert ours(repo) == honest
    with reader(repo) as r:
        assert r.commit(honest[0]).message == b"commit 2\n\nbody of 2\n"


def test_a_rewritten_object_does_not_pass_for_the_original(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    obj = _loose(repo, head)
    body = zlib.decompress(obj.read_bytes()).replace(b"commit 2", b"commit X")
    obj.chmod(0o644)
    obj.write_bytes(zlib.compress(body))
    assert reason(repo) == f"object {head} does not match its id (corrupt or rewritten)"


def _write_loose(repo: Path, kind: bytes, data: bytes, *, size: int | None = None) -> str:
    header = b"%s %d\0" % (kind, len(data) if size is None else size)
    oid = hashlib.sha1(header + data).hexdigest()
    path = _loose(repo, oid)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(header + data))
    return oid


def test_zip_bomb_and_object_bounds(repo: Path) -> None:
    bomb = _write_loose(repo, b"blob", b"\0" * (8 << 20))  # 8 MiB of zeros, 8 KiB on disk
    tree = _write_loose(repo, b"tree", b"100644 bomb\0" + bytes.fromhex(bomb))
    commit = _write_loose(repo, b"commit", b"tree %s\n\nbomb\n" % tree.encode())
    (repo / "refs" / "heads" / "main").write_text(commit + "\n")
    small = Limits(max_object_bytes=1 << 20, max_total_bytes=4 << 20)
    with reader(repo, small) as r:
        (entry,) = r.ls_tree(commit)
        size, prefix = r.blob_prefix(entry.oid, 100)  # too big: only the prefix is inflated
        assert (size, prefix) == (8 << 20, b"\0" * 100)
        with pytest.raises(GitReadError, match=f"^object {bomb} is larger than 1048576 bytes$"):
            r.read(bomb)
    with reader(repo, Limits(max_total_bytes=4 << 20)) as r:
        with pytest.raises(GitReadError, match="^reading needs more than 4194304 inflated bytes$"):
            r.read(bomb)
    assert reason(repo, Limits(max_commits=0)) == "history has more than 0 commits"


def test_header_size_lies_are_corruption(repo: Path) -> None:
    liar = _write_loose(repo, b"blob", b"abc", size=5)
    with reader(repo) as r, pytest.raises(GitReadError, match="shorter than its header says"):
        r.read(liar)


def _idx_v2(entries: list[tuple[bytes, int]], pack_sha: bytes) -> bytes:
    entries = sorted(entries)
    fanout = [sum(1 for raw, _ in entries if raw[0] <= b) for b in range(256)]
    out = b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout)
    out += b"".join(raw for raw, _ in entries) + b"\0\0\0\0" * len(entries)
    out += b"".join(struct.pack(">I", off) for _, off in entries)
    return out + pack_sha + hashlib.sha1(out + pack_sha).digest()


def test_a_ref_delta_loop_is_bounded(repo: Path) -> None:
    # Two REF_DELTA entries whose bases are each other: reading either never ends in git's
    # own terms; here the depth bound stops it with a reason.
    a, b = hashlib.sha1(b"a").digest(), hashlib.sha1(b"b").digest()
    delta = zlib.compress(b"\x01\x01\x90\x01")  # src 1 byte, dst 1 byte, copy 1 byte
    body = b""
    offsets = []
    for base in (b, a):
        offsets.append(12 + len(body))
        body += bytes([(7 << 4) | 4]) + base + delta
    head = b"PACK" + struct.pack(">II", 2, 2)
    pack = head + body
    pack += hashlib.sha1(pack).digest()
    pack_dir = repo / "objects" / "pack"
    pack_dir.mkdir(exist_ok=True)
    (pack_dir / "pack-loop.pack").write_bytes(pack)
    (pack_dir / "pack-loop.idx").write_bytes(
        _idx_v2(list(zip((a, b), offsets, strict=True)), pack[-20:])
    )
    with reader(repo, Limits(max_delta_depth=50)) as r:
        with pytest.raises(GitReadError, match=f"^object {a.hex()}: delta chain deeper than 50$"):
            r.read(a.hex())


def test_sha256_repository_is_refused_clearly(tmp_path: Path) -> None:
    repo = init(tmp_path / "r.git", "--object-format=sha256")
    with pytest.raises(Unsupported, match="^unsupported object format sha256$"):
        ours(repo)


def _corrupt(repo: Path, rng: random.Random) -> None:
    files = sorted(p for p in repo.rglob("*") if p.is_file() and not p.is_symlink())
    for _ in range(rng.randint(1, 4)):
        victim = rng.choice(files)
        data = bytearray(victim.read_bytes())
        victim.chmod(0o644)
        if not data:
            continue
        how = rng.randrange(3)
        at = rng.randrange(len(data))
        if how == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif how == 1:
            del data[at:]
        else:
            data[at:at] = rng.randbytes(rng.randint(1, 16))
        victim.write_bytes(bytes(data))


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_random_corruption_is_a_reason_never_an_exception(packed: bool, tmp_path: Path) -> None:
    base = init(tmp_path / "base.git")
    fast_import(base, DAGS["nested-merges"])
    if packed:
        git(base, "gc", "-q", "--prune=now")
    honest = theirs(base)
    rng = random.Random(13)
    outcomes = {"ok": 0, "reason": 0}
    for i in range(60):
        copy = tmp_path / f"c{i}.git"
        run(["cp", "-a", str(base), str(copy)], check=True)
        _corrupt(copy, rng)
        try:
            with reader(copy) as r:
                got, _ = _everything(r)
            assert got == honest  # verified objects: corruption either fails or did not matter
            outcomes["ok"] += 1
        except GitReadError:
            outcomes["reason"] += 1
    assert outcomes["reason"] > 10
