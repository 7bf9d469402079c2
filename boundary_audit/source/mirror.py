"""Remote repositories: a cached bare mirror per URL, cloned once, fetched only when needed.

Policy (`offline`, `refresh`, neither):
- `offline=True`: never touches the network and takes no lock (a published mirror is
  immutable except for atomic ref updates). No mirror, or a rev the mirror lacks, is an error
  that says so.
- `refresh=True`: fetch (heads and tags, pruned) before resolving.
- neither: clone if there is no mirror; fetch only if the rev does not resolve in the mirror.
  A branch name that resolves is used as cached: pass `refresh` to move it.
A rev that is still missing after the fetch is fetched by name when it is a full sha or a ref
under `refs/` (servers that allow it serve unadvertised commits and pull-request refs);
otherwise it is an unknown revision. With no rev the mirror's HEAD (the remote's default
branch at clone time) is used.

Mirrors are configured with gitpython (fetch refspecs for heads and tags, `gc.auto=0` so a
fetch never repacks under a concurrent reader). Clone and fetch run through `run_git` with
the network allowed; see `_git` for the no-prompt environment and `cache` for locking.

A `file://` URL names a local repository, and `git clone file://...` would run upload-pack
(and pack-objects) in it, under its config (alternates pointing out, includes, a promisor's
lazy fetch). So a `file://` remote is cloned and fetched from a `shadow` of that repository
instead: our config, its refs, its own object files; the mirror still records the real URL.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from boundary_audit.errors import SourceError
from boundary_audit.progress import Say
from boundary_audit.source import _git, _gitpython
from boundary_audit.source.cache import MirrorSlot, ensure_root, locked
from boundary_audit.source.shadow import Shadow, discover
from boundary_audit.source.spec import RepoSpec, redact

_FULL_SHA = re.compile(r"^[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?$")
_HEADS = "+refs/heads/*:refs/heads/*"
_TAGS = "+refs/tags/*:refs/tags/*"


def resolve(git_dir: Path, rev: str, timeout: float = 60.0) -> str | None:
    """The full sha of the commit `rev` names in `git_dir`, or None (no network, ever)."""
    res = _git.run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        git_dir=git_dir,
        timeout=timeout,
    )
    sha = res.stdout.decode("ascii", "replace").strip()
    return sha if res.returncode == 0 and _FULL_SHA.match(sha) else None


def open_mirror(
    spec: RepoSpec,
    *,
    offline: bool,
    refresh: bool,
    cache_dir: Path | None,
    timeout: float,
    progress: Say,
) -> tuple[Path, str]:
    """(mirror git dir, full sha of the spec's rev), cloning or fetching per the policy above."""
    slot = MirrorSlot.for_url(spec.location, cache_dir)
    url = redact(spec.location)
    rev = spec.rev or "HEAD"
    if offline:
        if not slot.is_complete():
            raise SourceError(
                f"{url} is not in the cache ({slot.root}) and offline mode forbids cloning",
                hint="run once without --offline to fill the cache",
            )
        return slot.path, _resolved(slot.path, spec, url, offline=True)
    ensure_root(slot.root)
    with locked(slot.lock_path, timeout, progress, keep=slot.is_complete) as env:
        slot.clean_temps()
        fetched = False
        if not slot.is_complete():
            slot.discard()
            _clone(spec.location, slot, timeout, progress, env)
            fetched = True
        elif refresh:
            _fetch(slot.path, spec.location, timeout, progress, env)
            fetched = True
        sha = resolve(slot.path, rev)
        if sha is None and not fetched:
            _fetch(slot.path, spec.location, timeout, progress, env)
            sha = resolve(slot.path, rev)
        if sha is None and (_FULL_SHA.match(rev) or rev.startswith("refs/")):
            _fetch_one(slot.path, spec.location, rev, timeout, progress, env)
        return slot.path, _resolved(slot.path, spec, url, offline=False)


def _resolved(git_dir: Path, spec: RepoSpec, url: str, *, offline: bool) -> str:
    sha = resolve(git_dir, spec.rev or "HEAD")
    if sha is not None:
        return sha
    if spec.rev is None:
        raise SourceError(f"{url} has no commits on its default branch")
    where = "the cached mirror of " if offline else ""
    hint = "run again without --offline to fetch it" if offline else None
    if hint is None and re.fullmatch(r"[0-9a-fA-F]{4,39}", spec.rev):
        hint = "a short sha must be unambiguous and reachable from a branch or tag"
    raise SourceError(f"unknown revision {spec.rev!r} in {where}{url}", hint=hint)


@contextlib.contextmanager
def _source(location: str) -> Iterator[tuple[str, bool]]:
    """(URL to fetch from, whether it is a shadow): `location` itself, or for a `file://`
    URL the shadow of the local repository it names (see the module docstring)."""
    if not location.lower().startswith("file:"):
        yield location, False
        return
    path = Path(unquote(urlsplit(location).path))
    try:
        layout = discover(path)
    except SourceError as exc:
        raise SourceError(f"cannot clone {redact(location)}: {exc.message}") from exc
    with Shadow(layout) as shadow:
        yield shadow.path.as_uri(), True


def _clone(
    location: str, slot: MirrorSlot, timeout: float, progress: Say, env: Mapping[str, str]
) -> None:
    url = redact(location)
    progress(f"cloning {url}")
    tmp = slot.new_temp()
    try:
        with _source(location) as (source, _):
            res = _git.run_git(
                ["clone", "--bare", "--quiet", "--", source, str(tmp)],
                network=True,
                timeout=timeout,
                extra_env=env,
            )
        if res.returncode != 0 or res.timed_out:
            raise _git.failed(res, f"cannot clone {url}", timeout)
        _configure(tmp, location)
        slot.publish(tmp)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _configure(git_dir: Path, location: str) -> None:
    """The real URL, refspecs for heads and tags, and no automatic gc or reflogs."""
    git = _gitpython.load()
    try:
        with git.Repo(git_dir).config_writer() as cfg:
            cfg.set_value('remote "origin"', "url", location)
            cfg.set_value('remote "origin"', "fetch", _HEADS)
            cfg.add_value('remote "origin"', "fetch", _TAGS)
            cfg.set_value("gc", "auto", 0)
            cfg.set_value("maintenance", "auto", "false")
            cfg.set_value("core", "logAllRefUpdates", "false")
    except (git.GitError, OSError) as exc:
        raise SourceError(f"cannot configure the new mirror in {git_dir}: {exc}") from exc


def _fetch(
    git_dir: Path, location: str, timeout: float, progress: Say, env: Mapping[str, str]
) -> None:
    url = redact(location)
    progress(f"fetching {url}")
    with _source(location) as (source, shadowed):
        remote = [source, _HEADS, _TAGS] if shadowed else ["origin"]
        res = _git.run_git(
            ["fetch", "--quiet", "--prune", "--atomic", "--no-write-fetch-head", *remote],
            git_dir=git_dir,
            network=True,
            timeout=timeout,
            extra_env=env,
        )
    if res.returncode != 0 or res.timed_out:
        raise _git.failed(res, f"cannot fetch {url}", timeout)


def _fetch_one(
    git_dir: Path,
    location: str,
    rev: str,
    timeout: float,
    progress: Say,
    env: Mapping[str, str],
) -> None:
    """Ask for one commit or ref by name; failure just leaves the rev unknown."""
    progress(f"fetching {rev}")
    dst = rev if rev.startswith("refs/") else f"refs/boundary-audit/pins/{rev.lower()}"
    with _source(location) as (source, shadowed):
        res = _git.run_git(
            [
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                source if shadowed else "origin",
                f"+{rev}:{dst}",
            ],
            git_dir=git_dir,
            network=True,
            timeout=timeout,
            extra_env=env,
        )
    if res.timed_out:
        raise _git.failed(res, f"cannot fetch {rev}", timeout)
