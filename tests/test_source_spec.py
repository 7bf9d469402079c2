"""The target grammar, table-driven: every form, every `@` ambiguity, every invalid spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from boundary_audit.errors import ExitCode, SourceError
from boundary_audit.source.cache import mirror_key
from boundary_audit.source.spec import RepoSpec, canonical_url, parse_spec, redact

VALID = [
    # shorthand
    ("openai/codex", RepoSpec("github", "https://github.com/openai/codex.git", None)),
    ("openai/codex@v1.2", RepoSpec("github", "https://github.com/openai/codex.git", "v1.2")),
    (
        "openai/codex.git@abc1234",
        RepoSpec("github", "https://github.com/openai/codex.git", "abc1234"),
    ),
    (
        "SWE-agent/SWE-agent@release/1.0",
        RepoSpec("github", "https://github.com/SWE-agent/SWE-agent.git", "release/1.0"),
    ),
    ("o/r.js@main", RepoSpec("github", "https://github.com/o/r.js.git", "main")),
    # https / http, with and without userinfo
    ("https://github.com/o/r.git", RepoSpec("url", "https://github.com/o/r.git", None)),
    ("https://GitHub.com/o/r.git/", RepoSpec("url", "https://github.com/o/r.git", None)),
    ("https://user@host/r.git@main", RepoSpec("url", "https://user@host/r.git", "main")),
    ("https://u:pw@host:8443/g/r@v1", RepoSpec("url", "https://u:pw@host:8443/g/r", "v1")),
    ("http://host/a@b/r.git@HEAD", RepoSpec("url", "http://host/a@b/r.git", "HEAD")),
    ("HTTPS://host/r", RepoSpec("url", "https://host/r", None)),
    # ssh:// and scp-like
    ("ssh://git@host/r@abc123", RepoSpec("url", "ssh://git@host/r", "abc123")),
    ("ssh://git@host:2222/o/r.git", RepoSpec("url", "ssh://git@host:2222/o/r.git", None)),
    ("git+ssh://host/r.git@v2", RepoSpec("url", "git+ssh://host/r.git", "v2")),
    ("git@host:o/r.git@v1", RepoSpec("url", "git@host:o/r.git", "v1")),
    ("git@github.com:o/r.git", RepoSpec("url", "git@github.com:o/r.git", None)),
    ("host:/srv/r.git@refs/pull/7/head", RepoSpec("url", "host:/srv/r.git", "refs/pull/7/head")),
    ("git@[::1]:r.git@main", RepoSpec("url", "git@[::1]:r.git", "main")),
    # git:// and file://
    (
        "git://127.0.0.1:9418/r.git@0123456789abcdef0123456789abcdef01234567",
        RepoSpec("url", "git://127.0.0.1:9418/r.git", "0123456789abcdef0123456789abcdef01234567"),
    ),
    ("file:///srv/git/r.git@feature/x-1", RepoSpec("url", "file:///srv/git/r.git", "feature/x-1")),
    ("file://localhost/srv/r", RepoSpec("url", "file://localhost/srv/r", None)),
]

INVALID = [
    ("", "invalid spec '': empty"),
    ("@", "invalid spec '@': nothing before '@'"),
    ("@main", "invalid spec '@main': nothing before '@'"),
    ("owner/", "invalid spec 'owner/': owner/name shorthand without a name"),
    ("owner/name@", "invalid spec 'owner/name@': empty revision after '@'"),
    ("owner/name@a@b", "invalid spec 'owner/name@a@b': invalid revision 'a@b'"),
    ("owner/name @v1", "invalid spec 'owner/name @v1': contains whitespace or a control character"),
    (" owner/name", "invalid spec ' owner/name': contains whitespace or a control character"),
    ("owner/na\nme", "invalid spec 'owner/na\\nme': contains whitespace or a control character"),
    ("a/b/c", "invalid spec 'a/b/c': not an existing path, a git URL or a GitHub owner/name"),
    (
        "justaword",
        "invalid spec 'justaword': not an existing path, a git URL or a GitHub owner/name",
    ),
    ("-rf/x", "invalid spec '-rf/x': not an existing path, a git URL or a GitHub owner/name"),
    ("o/..", "invalid spec 'o/..': not an existing path, a git URL or a GitHub owner/name"),
    ("owner/name@-x", "invalid spec 'owner/name@-x': invalid revision '-x'"),
    ("owner/name@a..b", "invalid spec 'owner/name@a..b': invalid revision 'a..b'"),
    ("owner/name@HEAD~1", "invalid spec 'owner/name@HEAD~1': invalid revision 'HEAD~1'"),
    ("owner/name@x.lock", "invalid spec 'owner/name@x.lock': invalid revision 'x.lock'"),
    ("owner/name@a//b", "invalid spec 'owner/name@a//b': invalid revision 'a//b'"),
    ("owner/name@.hidden", "invalid spec 'owner/name@.hidden': invalid revision '.hidden'"),
    (
        "ftp://host/r.git",
        "invalid spec 'ftp://host/r.git': unsupported URL scheme 'ftp' "
        "(use one of https, http, ssh, git, file, git+ssh, ssh+git)",
    ),
    (
        "ext::sh -c touch% /tmp/pwned",
        "invalid spec 'ext::sh -c touch% /tmp/pwned': contains whitespace or a control character",
    ),
    (
        "ext::nc%20evil",
        "invalid spec 'ext::nc%20evil': remote-helper syntax 'transport::address' is not supported",
    ),
    ("https://host", "invalid spec 'https://host': the URL names no repository path"),
    ("https://host/", "invalid spec 'https://host/': the URL names no repository path"),
    ("https://host@v1", "invalid spec 'https://host@v1': the URL names no repository path"),
    ("https://host/r.git@", "invalid spec 'https://host/r.git@': empty revision after '@'"),
    ("https://:443/r", "invalid spec 'https://:443/r': invalid host ':443'"),
    ("https://host:/r", "invalid spec 'https://host:/r': invalid host 'host:'"),
    (
        "ssh://-oProxyCommand=x/r",
        "invalid spec 'ssh://-oProxyCommand=x/r': a host or user may not start with '-'",
    ),
    (
        "-oProxyCommand=x:r",
        "invalid spec '-oProxyCommand=x:r': a host or user may not start with '-'",
    ),
    (
        "file://otherhost/r",
        "invalid spec 'file://otherhost/r': file:// URLs name a path on this machine (file:///path)",
    ),
    ("git@host:", "invalid spec 'git@host:': no repository path after ':'"),
    ("git@host:@v1", "invalid spec 'git@host:@v1': no repository path after ':'"),
    (
        "https://u:secret@host/r@a b",
        "invalid spec 'https://u:***@host/r@a b': contains whitespace or a control character",
    ),
]


@pytest.mark.parametrize(("text", "expected"), VALID, ids=[t for t, _ in VALID])
def test_valid_spec(text: str, expected: RepoSpec, tmp_path: Path) -> None:
    assert parse_spec(text, cwd=tmp_path) == expected


@pytest.mark.parametrize(("text", "message"), INVALID, ids=[repr(t) for t, _ in INVALID])
def test_invalid_spec_is_one_line_source_error(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(SourceError) as err:
        parse_spec(text, cwd=tmp_path)
    assert err.value.message == message
    assert "\n" not in err.value.message
    assert err.value.exit_code == ExitCode.SOURCE


def test_missing_local_paths_are_errors_not_shorthand(tmp_path: Path) -> None:
    for text, shown in [
        ("./nope", "./nope"),
        ("../nope@v1", "../nope"),
        ("/no/such/dir", "/no/such/dir"),
        ("~/no-such-boundary-audit-dir", "~/no-such-boundary-audit-dir"),
    ]:
        with pytest.raises(SourceError) as err:
            parse_spec(text, cwd=tmp_path)
        assert err.value.message == f"no such path: {shown!r}"


def test_existing_path_wins_over_shorthand_and_at(tmp_path: Path) -> None:
    (tmp_path / "owner" / "name").mkdir(parents=True)
    (tmp_path / "dir@weird").mkdir()
    real = tmp_path.resolve()
    assert parse_spec("owner/name", cwd=tmp_path) == RepoSpec(
        "local", str(real / "owner/name"), None
    )
    assert parse_spec("owner/name@v1", cwd=tmp_path) == RepoSpec(
        "local", str(real / "owner/name"), "v1"
    )
    assert parse_spec("dir@weird", cwd=tmp_path) == RepoSpec("local", str(real / "dir@weird"), None)
    assert parse_spec("dir@weird@main", cwd=tmp_path) == RepoSpec(
        "local", str(real / "dir@weird"), "main"
    )
    assert parse_spec(".", cwd=tmp_path) == RepoSpec("local", str(real), None)
    assert parse_spec(f"{tmp_path}/owner/../owner/name@abc1", cwd=Path("/")) == RepoSpec(
        "local", str(real / "owner/name"), "abc1"
    )
    with pytest.raises(SourceError, match=r"invalid revision 'x y'"):
        parse_spec("owner/name@x y", cwd=tmp_path)


def test_str_redacts_password() -> None:
    spec = parse_spec("https://u:secret@host/r.git@main")
    assert spec.location == "https://u:secret@host/r.git"
    assert str(spec) == "https://u:***@host/r.git@main"
    assert redact("git@host:o/r") == "git@host:o/r"


@pytest.mark.parametrize(
    ("location", "canonical"),
    [
        ("https://user:pw@GitHub.com:443/Owner/Repo.git/", "https://github.com/owner/repo"),
        ("https://github.com/owner/repo", "https://github.com/owner/repo"),
        ("https://gitlab.example/Group/Repo.git", "https://gitlab.example/Group/Repo"),
        ("ssh://git@host:22/o/r.git", "ssh://host/o/r"),
        ("git+ssh://host/o/r", "ssh://host/o/r"),
        ("git@host:o/r.git", "ssh://host/~/o/r"),
        ("host:/srv/r.git", "ssh://host/srv/r"),
        ("git://127.0.0.1:9418/r.git", "git://127.0.0.1/r"),
        ("git://127.0.0.1:9419/r.git", "git://127.0.0.1:9419/r"),
        ("file://localhost/srv/r", "file:///srv/r"),
    ],
)
def test_canonical_url(location: str, canonical: str) -> None:
    assert canonical_url(location) == canonical


def test_mirror_key_is_readable_safe_and_distinct() -> None:
    a = mirror_key("https://github.com/Owner/Repo.git")
    assert a == mirror_key("https://x@github.com/owner/repo")
    assert a.startswith("github.com_owner_repo-") and len(a.rsplit("-", 1)[1]) == 16
    assert mirror_key("https://evil/../../etc") != mirror_key("https://evil/etc")
    assert "/" not in mirror_key("file:///../../x") and ".." not in mirror_key("https://h/..")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
@example("~\x00")  # expanduser's ~name lookup raised ValueError: a traceback, not a SourceError
@example("~ab\x00@x")
def test_any_text_parses_or_fails_with_one_line(text: str) -> None:
    try:
        spec = parse_spec(text, cwd=Path("/nonexistent-boundary-audit-cwd"))
    except SourceError as err:
        assert err.message and "\n" not in err.message and err.exit_code == ExitCode.SOURCE
    else:
        assert spec.kind in ("local", "url", "github") and spec.location


_REV = st.from_regex(
    r"[A-Za-z0-9_][A-Za-z0-9_-]{0,10}(/[A-Za-z0-9_][A-Za-z0-9_-]{0,10}){0,2}", fullmatch=True
)
_BASES = {
    "https://u@h.example/o/r.git": RepoSpec("url", "https://u@h.example/o/r.git", None),
    "ssh://git@h:2222/srv/a@b/r": RepoSpec("url", "ssh://git@h:2222/srv/a@b/r", None),
    "git@h:o/r.git": RepoSpec("url", "git@h:o/r.git", None),
    "o/r": RepoSpec("github", "https://github.com/o/r.git", None),
    "git://h/r": RepoSpec("url", "git://h/r", None),
}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(_BASES)), _REV)
def test_the_rev_is_always_what_follows_the_last_at(base: str, rev: str) -> None:
    spec = parse_spec(f"{base}@{rev}", cwd=Path("/nonexistent-boundary-audit-cwd"))
    assert spec == RepoSpec(_BASES[base].kind, _BASES[base].location, rev)
