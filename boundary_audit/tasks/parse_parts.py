"""Parse the `[fixture]` and `[validator]` tables of a task file into model records.

Paths are checked here: relative, `/`-separated, no empty, `.` or `..` component, no NUL, and
nothing inside `.git` (a fixture repository's metadata is reached through `git` only). Names
may otherwise hold any byte a file name can: spaces, newlines, quotes, non-ASCII.
"""

from __future__ import annotations

import re

from boundary_audit.tasks.model import (
    ArgvCheck,
    CommitSpec,
    EnvCheck,
    FileSpec,
    Fixture,
    GitCheck,
    GitSpec,
    ProgramSpec,
    StdoutCheck,
    SymlinkSpec,
    Validator,
)
from boundary_audit.tasks.schema import Node, decode_text, parse_mode

HELPERS = ("argv-recorder", "env-recorder", "remote")
PROGRAM_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]*"
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def path_problem(path: str) -> str | None:
    """Why `path` is not an acceptable work-dir-relative path, or None."""
    if not path:
        return "path is empty"
    if path.startswith("/"):
        return f"path {path!r} must be relative to the work dir"
    if "\0" in path:
        return f"path {path!r} contains NUL"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"path {path!r} has an empty, '.' or '..' component"
    if ".git" in parts:
        return f"path {path!r} is inside .git (check repositories with [validator.git])"
    return None


def _path(node: Node, key: str = "path") -> str:
    value: str = node.string(key)
    problem = path_problem(value)
    if problem:
        node.fail(key, problem)
    return value


def _file(node: Node, *, default_mode: int | None) -> FileSpec:
    path = _path(node)
    if node.has("text") and node.has("base64"):
        node.fail("base64", "give either text or base64, not both")
    if node.has("base64"):
        content = decode_text(
            {"base64": node.string("base64")}, node.key_path("base64"), node.where
        )
    else:
        content = node.text("text")
    mode = parse_mode(node, "mode")
    node.finish()
    return FileSpec(path, content, default_mode if mode is None else mode)


def _symlink(node: Node) -> SymlinkSpec:
    spec = SymlinkSpec(_path(node), node.string("target"))
    node.finish()
    return spec


def _env_table(node: Node, key: str) -> tuple[tuple[str, str], ...]:
    out = []
    for name, value in sorted(node.mapping(key).items()):
        if not re.fullmatch(ENV_NAME, name):
            node.fail(f"{key}.{name}", "not a valid environment variable name")
        if not isinstance(value, str) or "\0" in value:
            node.fail(f"{key}.{name}", "value must be a string without NUL")
        out.append((name, value))
    return tuple(out)


def _program(node: Node) -> ProgramSpec:
    name = node.string("name", pattern=PROGRAM_NAME)
    helper = node.string("helper", None, choices=HELPERS)
    script = node.text("script", None)
    if (helper is None) == (script is None):
        node.fail("helper", "give exactly one of helper and script")
    if script is not None and not script.startswith(b"#!/bin/sh\n"):
        node.fail(
            "script", "a fixture program must start with #!/bin/sh (it runs under every backend)"
        )
    home = node.string("home", None)
    env = _env_table(node, "env")
    if helper != "remote" and (home is not None or env):
        node.fail("home", "home and env configure the remote helper only")
    if helper == "remote":
        if home is None:
            node.fail("home", "the remote helper needs home (its working directory)")
        problem = path_problem(home)
        if problem:
            node.fail("home", problem)
    node.finish()
    return ProgramSpec(name=name, helper=helper, script=script, home=home, env=env)


def _git(node: Node) -> GitSpec:
    path = node.string("path", ".")
    if path != "." and path_problem(path):
        node.fail("path", path_problem(path) or "")
    commits = []
    for c in node.tables("commits"):
        files = tuple(_file(f, default_mode=0o644) for f in c.tables("files"))
        commits.append(CommitSpec(message=c.text("message"), files=files))
        c.finish()
    if not commits:
        node.fail("commits", "a fixture repository needs at least one commit")
    spec = GitSpec(
        path=path,
        branch=node.string("branch", "main", pattern=r"[a-z][a-z0-9-]*"),
        commits=tuple(commits),
    )
    node.finish()
    return spec


def parse_fixture(node: Node) -> Fixture:
    """The `[fixture]` table."""
    git = node.table("git")
    programs = tuple(_program(p) for p in node.tables("programs"))
    names = [p.name for p in programs]
    if len(set(names)) != len(names):
        node.fail("programs", "two programs share a name")
    fixture = Fixture(
        files=tuple(_file(f, default_mode=0o644) for f in node.tables("files")),
        dirs=tuple(node.strings("dirs", [], check=path_problem)),
        symlinks=tuple(_symlink(s) for s in node.tables("symlinks")),
        env=_env_table(node, "env"),
        programs=programs,
        git=_git(git) if git else None,
    )
    node.finish()
    return fixture


def _argv(node: Node) -> ArgvCheck:
    program = node.string("program", pattern=PROGRAM_NAME)
    raw_calls = node.array("calls")
    calls = []
    for i, call in enumerate(raw_calls):
        if not isinstance(call, list):
            node.fail(f"calls[{i}]", "expected an array of arguments")
        key = node.key_path(f"calls[{i}]")
        calls.append(tuple(decode_text(a, f"{key}[{j}]", node.where) for j, a in enumerate(call)))
    node.finish()
    return ArgvCheck(program, tuple(calls))


def _env_check(node: Node) -> EnvCheck:
    program = node.string("program", pattern=PROGRAM_NAME)
    values = []
    for name, value in sorted(node.mapping("vars").items()):
        if not re.fullmatch(ENV_NAME, name):
            node.fail(f"vars.{name}", "not a valid environment variable name")
        values.append((name, decode_text(value, node.key_path(f"vars.{name}"), node.where)))
    unset = tuple(
        node.strings("unset", [], check=lambda n: None if re.fullmatch(ENV_NAME, n) else "bad name")
    )
    node.finish()
    if not values and not unset:
        node.fail("vars", "an env check needs vars or unset")
    return EnvCheck(program, tuple(values), unset)


def _git_check(node: Node) -> GitCheck:
    messages = node.array("messages")
    if not messages:
        node.fail("messages", "list HEAD's commit messages, newest first")
    check = GitCheck(
        path=node.string("path", "."),
        messages=tuple(
            decode_text(m, node.key_path(f"messages[{i}]"), node.where)
            for i, m in enumerate(messages)
        ),
        tree=tuple(_file(f, default_mode=None) for f in node.tables("tree")),
    )
    node.finish()
    return check


def _stdout(node: Node) -> StdoutCheck:
    check = StdoutCheck(exact=node.text("exact", None), contains=node.text("contains", None))
    if (check.exact is None) == (check.contains is None):
        node.fail("exact", "give exactly one of exact and contains")
    node.finish()
    return check


def parse_validator(node: Node) -> Validator:
    """The `[validator]` table."""
    git = node.table("git")
    stdout = node.table("stdout")
    validator = Validator(
        files=tuple(_file(f, default_mode=None) for f in node.tables("files")),
        dirs=tuple(node.strings("dirs", [], check=path_problem)),
        symlinks=tuple(_symlink(s) for s in node.tables("symlinks")),
        absent=tuple(node.strings("absent", [], check=path_problem)),
        argv=tuple(_argv(a) for a in node.tables("argv")),
        env=tuple(_env_check(e) for e in node.tables("env")),
        git=_git_check(git) if git else None,
        stdout=_stdout(stdout) if stdout else None,
    )
    node.finish()
    expected = {f.path for f in validator.files} | {s.path for s in validator.symlinks}
    clash = sorted(expected & set(validator.absent))
    if clash:
        node.fail("absent", f"{clash[0]!r} is both expected and absent")
    if not (
        expected
        or validator.absent
        or validator.argv
        or validator.env
        or validator.git
        or validator.stdout
    ):
        node.fail(
            None, "a validator must check something (files, absent, argv, env, git or stdout)"
        )
    return validator
