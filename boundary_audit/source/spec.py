"""The target grammar: what `boundary-audit scan SPEC` accepts, parsed into a `RepoSpec`.

    spec      := target [ "@" rev ]
    target    := local-path | url | scp | shorthand
    url       := scheme "://" [ userinfo "@" ] host [ ":" port ] "/" path
                 scheme: https, http, ssh, git, file (also git+ssh, ssh+git)
    scp       := [ user "@" ] host ":" path        (git's scp-like form; no "/" before the ":")
    shorthand := owner "/" name [ ".git" ]        GitHub: https://github.com/owner/name.git
    rev       := a full or short sha (4-40 hex digits), a tag, a branch or a ref under refs/;
                 default HEAD (the remote's default branch, or a local repository's HEAD)

Where `@rev` starts (the one ambiguity, since URLs carry `@` themselves):
  1. the whole text names an existing path: a local repository, no rev (existing paths win,
     over the shorthand too: `owner/name` is a directory if such a directory exists);
  2. the text before the last `@` names an existing path: local repository at rev;
  3. url: the last `@` after the authority, so `https://user@host/r.git@main` and
     `ssh://git@host/r@abc123` split at the second `@`;
  4. scp: the last `@` after the host's `:`, so `git@host:o/r.git@v1` has rev `v1`;
  5. shorthand: its `@` (owner and name cannot contain one).
A rev never contains `@`; a URL whose path contains `@` needs an explicit rev (`...@HEAD`).
Local paths must exist; `/`, `./`, `../` or `~` mark a path, and a missing one is an error.
Whitespace, `transport::address` remote-helper syntax, hosts or users starting with `-` and
unknown schemes are errors. Every error is a one-line `SourceError` naming the spec.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from boundary_audit.errors import SourceError

SCHEMES = ("https", "http", "ssh", "git", "file", "git+ssh", "ssh+git")
GITHUB = "https://github.com/{owner}/{name}.git"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_SCP = re.compile(
    r"^(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^@/:\[\]\s]+):(?P<path>.*)$"
)
_SHORTHAND = re.compile(
    r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9-]{0,38})/(?P<name>[A-Za-z0-9._-]{1,100})$"
)
_HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")
_BAD_REV_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\@]")
_HOSTPORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::(?P<port>[0-9]*))?$")


@dataclass(frozen=True)
class RepoSpec:
    """A parsed target: where the repository is and which revision to audit."""

    kind: Literal["local", "url", "github"]
    location: str
    """Absolute path (local) or URL as normalized (scheme and host lower-cased)."""
    rev: str | None
    """The revision as written, or None for HEAD."""

    def __str__(self) -> str:
        return f"{redact(self.location)}@{self.rev}" if self.rev else redact(self.location)


def parse_spec(text: str, *, cwd: Path | None = None) -> RepoSpec:
    """Parse `text` by the grammar above; raise SourceError with a one-line message if invalid."""
    if not text:
        raise SourceError("invalid spec '': empty", hint="give a path, a git URL or owner/name")
    local = _local(text, cwd)
    if local is not None:
        return local
    if re.search(r"[\x00-\x20\x7f]", text):
        raise _invalid(text, "contains whitespace or a control character")
    if text.startswith("@"):
        raise _invalid(text, "nothing before '@'")
    if _HELPER.match(text):
        raise _invalid(text, "remote-helper syntax 'transport::address' is not supported")
    if _SCHEME.match(text):
        return _parse_url(text)
    scp = _SCP.match(text)
    if scp and not _looks_like_path(text):
        return _parse_scp(text, scp)
    target, _, rev = text.partition("@")
    if _looks_like_path(target):
        raise SourceError(f"no such path: {target!r}", hint="local repositories must exist")
    return _parse_shorthand(text, target, rev if "@" in text else None)


def check_rev(rev: str, text: str) -> str:
    """`rev` if it is a sha or a well-formed ref name (git check-ref-format rules), else raise."""
    if not rev:
        raise _invalid(text, "empty revision after '@'")
    if _HEX.match(rev):
        return rev
    bad = _BAD_REV_CHARS.search(rev)
    parts = rev.split("/")
    if (
        bad
        or rev.startswith("-")
        or rev.endswith(".")
        or ".." in rev
        or any(not p or p.startswith(".") or p.endswith(".lock") for p in parts)
    ):
        raise _invalid(text, f"invalid revision {rev!r}")
    return rev


def redact(location: str) -> str:
    """`location` with any password in a URL's userinfo replaced by `***`."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:***@", location)


def canonical_url(location: str) -> str:
    """The identity of a remote for the cache: no userinfo, default port, `.git` or final `/`.

    Host names are lower-cased; GitHub paths too (GitHub names are case-insensitive); the
    scp form `host:path` becomes `ssh://host/~/path` (relative to the login's home).
    """
    m = _SCHEME.match(location)
    if m:
        scheme = m.group(1).lower().replace("git+ssh", "ssh").replace("ssh+git", "ssh")
        authority, _, path = location[m.end() :].partition("/")
        hostport = authority.rpartition("@")[2].lower()
        default = {"https": ":443", "http": ":80", "ssh": ":22", "git": ":9418"}.get(scheme)
        if default and hostport.endswith(default):
            hostport = hostport[: -len(default)]
        if scheme == "file" and hostport == "localhost":
            hostport = ""
        path = "/" + path
    else:
        scp = _SCP.match(location)
        if scp is None:  # pragma: no cover - only called on parsed locations
            return location
        scheme, hostport, path = "ssh", scp["host"].lower(), scp["path"]
        path = path if path.startswith("/") else "/~/" + path
    path = path.rstrip("/")
    path = path[:-4] if path.endswith(".git") else path
    if hostport == "github.com":
        path = path.lower()
    return f"{scheme}://{hostport}{path}"


def _local(text: str, cwd: Path | None) -> RepoSpec | None:
    base = cwd or Path.cwd()
    candidates: list[tuple[str, str | None]] = [(text, None)]
    if "@" in text:
        head, _, tail = text.rpartition("@")
        if head:
            candidates.append((head, tail))
    for path_text, rev in candidates:
        try:  # expanduser looks `~name` up: a NUL in the name is a ValueError there too
            path = Path(os.path.expanduser(path_text))
            path = path if path.is_absolute() else base / path
            found = path.exists()
        except (OSError, ValueError):  # embedded NUL, name too long
            found = False
        if found:
            return RepoSpec(
                "local", str(path.resolve()), check_rev(rev, text) if rev is not None else None
            )
    return None


def _looks_like_path(text: str) -> bool:
    return text in (".", "..") or text.startswith(("/", "./", "../", "~"))


def _parse_url(text: str) -> RepoSpec:
    m = _SCHEME.match(text)
    assert m is not None
    scheme = m.group(1).lower()
    if scheme not in SCHEMES:
        raise _invalid(text, f"unsupported URL scheme {scheme!r} (use one of {', '.join(SCHEMES)})")
    rest = text[m.end() :]
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    rev = None
    if "@" in path:
        path, _, rev_text = path.rpartition("@")
        rev = check_rev(rev_text, text)
    if path.rstrip("/") == "":
        raise _invalid(text, "the URL names no repository path")
    userinfo, _, hostport = authority.rpartition("@")
    hp = _HOSTPORT.match(hostport)
    if scheme == "file":
        if hostport.lower() not in ("", "localhost") or userinfo:
            raise _invalid(text, "file:// URLs name a path on this machine (file:///path)")
    elif hp is None or not hp["host"] or hp["port"] == "":
        raise _invalid(text, f"invalid host {hostport!r}")
    elif hp["host"].startswith("-") or userinfo.startswith("-"):
        raise _invalid(text, "a host or user may not start with '-'")
    location = f"{scheme}://{userinfo + '@' if userinfo else ''}{hostport.lower()}{path}"
    return RepoSpec("url", location.rstrip("/"), rev)


def _parse_scp(text: str, m: re.Match[str]) -> RepoSpec:
    user, host, path = m["user"] or "", m["host"], m["path"]
    if host.startswith("-") or user.startswith("-"):
        raise _invalid(text, "a host or user may not start with '-'")
    rev = None
    if "@" in path:
        path, _, rev_text = path.rpartition("@")
        rev = check_rev(rev_text, text)
    if not path.strip("/"):
        raise _invalid(text, "no repository path after ':'")
    return RepoSpec("url", f"{user + '@' if user else ''}{host}:{path}", rev)


def _parse_shorthand(text: str, target: str, rev: str | None) -> RepoSpec:
    m = _SHORTHAND.match(target)
    name = m["name"] if m else ""
    if name.endswith(".git"):
        name = name[:-4]
    if m is None or name in ("", ".", ".."):
        if re.fullmatch(r"[^/]+/", target):
            raise _invalid(text, "owner/name shorthand without a name")
        why = "not an existing path, a git URL or a GitHub owner/name"
        raise _invalid(text, why)
    if rev is not None:
        check_rev(rev, text)
    return RepoSpec("github", GITHUB.format(owner=m["owner"], name=name), rev)


def _invalid(text: str, why: str) -> SourceError:
    return SourceError(
        f"invalid spec {redact(text)!r}: {why}",
        hint="SPEC is PATH, URL, user@host:path or owner/name, optionally followed by @REV",
    )
