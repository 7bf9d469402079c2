"""The declarative validator: decide pass/fail from the exact final state of one run.

Checks, in the order their problems are reported: the boundary did not refuse the reply (a
transport result's `rejected`); the run did not time out nor hit its memory limit; the work dir
holds exactly the expected tree (`tree.compare_tree`); the fixture repository's HEAD history
and tree; the calls recorded by argv recorders; the environment seen by env recorders; stdout.
A failing verdict's reason lists the first three problems (each saying exactly what differed:
byte offset with escaped excerpts, the unexpected or missing path, the argv index) and how
many more there were.

Everything here runs on the host over a workspace a hostile reply has had its way with, so the
work and obs dirs are read through the descriptors the workspace took before the reply ran
(`Workspace.work_fd` / `obs_fd`), never their paths, and no link is ever followed (`wsfs`);
the fixture repository is read without running git (`gitread`).
"""

from __future__ import annotations

import os
import re
from contextlib import nullcontext
from dataclasses import dataclass

from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.tasks import gitops, gitread, wsfs
from boundary_audit.tasks.diff import describe_difference, quoted
from boundary_audit.tasks.helpers import split_records
from boundary_audit.tasks.model import ArgvCheck, EnvCheck, GitCheck, StdoutCheck, Task
from boundary_audit.tasks.tree import compare_tree, show

SHOWN_PROBLEMS = 3


@dataclass(frozen=True)
class Verdict:
    """Whether a run reached the task's exact target state; `reason` says why not ("ok" if so)."""

    passed: bool
    reason: str

    @classmethod
    def from_problems(cls, problems: list[str]) -> Verdict:
        """Pass when there are no problems, else fail with the first few as the reason."""
        if not problems:
            return cls(True, "ok")
        reason = "; ".join(problems[:SHOWN_PROBLEMS])
        if len(problems) > SHOWN_PROBLEMS:
            reason += f" (+{len(problems) - SHOWN_PROBLEMS} more)"
        return cls(False, reason)


def validate(task: Task, ws: Workspace, result: ExecResult) -> Verdict:
    """Compare the state `result` left in `ws` with `task.validator`."""
    return Verdict.from_problems(problems(task, ws, result))


def problems(task: Task, ws: Workspace, result: ExecResult) -> list[str]:
    """Every difference between the run's final state and the expected one."""
    found: list[str] = []
    refused = getattr(result, "rejected", "")  # transports.interface.TransportResult
    if refused:
        found.append(f"the boundary refused the reply: {refused}")
    if result.timed_out:
        # NOTE: no elapsed time here: reasons must be byte-identical between identical runs
        # (the record's duration_s carries it).
        found.append("timed out")
    if "memory" in result.limits_hit:
        found.append("the run hit its memory limit (the kernel killed a process of it)")
    v = task.validator
    try:
        with wsfs.root(ws.work_fd, ws.work) as work:
            found.extend(compare_tree(task, work))
            if v.git is not None:
                found.extend(check_git(v.git, work))
    except OSError as exc:  # only without a descriptor (a hand-made workspace)
        found.append(f"the work dir cannot be opened ({os.strerror(exc.errno or 0)})")
    try:
        with wsfs.root(ws.obs_fd, ws.obs) if v.argv or v.env else nullcontext(-1) as obs:
            for argv in v.argv:
                found.extend(check_argv(argv, obs))
            for env in v.env:
                found.extend(check_env(env, obs))
    except OSError as exc:
        found.append(f"the obs dir cannot be opened ({os.strerror(exc.errno or 0)})")
    if v.stdout is not None:
        found.extend(check_stdout(v.stdout, result.stdout))
    return found


RECORD_LIMIT = 16 << 20
"""The most bytes of one recorder file that are read (four times the kernel's usual ARG_MAX);
a reply can write obs/calls/ itself, and a longer record is reported, not read."""


def recorded(obs_fd: int, program: str, ext: str) -> list[str]:
    """The recorder files of `program` in call order: `calls/<program>.<n>.<ext>` relative to
    the obs dir (descriptor `obs_fd`); [] when `calls` is missing or not a real directory."""
    pattern = re.compile(rf"{re.escape(program)}\.(\d+)\.{ext}")
    try:
        names = wsfs.listdir(obs_fd, "calls")
    except OSError:
        return []
    found = []
    for name in names:
        m = pattern.fullmatch(name)
        if m:
            found.append((int(m.group(1)), f"calls/{name}"))
    return [p for _, p in sorted(found)]


def read_record(obs_fd: int, rel: str, label: str) -> tuple[bytes | None, str]:
    """The bytes of recorder file `rel`; or (None, why not) for a link, a FIFO, a directory, an
    unreadable or an oversized record (never blocks, never follows a link)."""
    try:
        st, data = wsfs.read_prefix(obs_fd, rel, RECORD_LIMIT + 1)
    except wsfs.NotRegular as exc:
        return None, f"{label}: record is a {exc.kind}, not a regular file"
    except OSError as exc:
        return None, f"{label}: record cannot be read ({os.strerror(exc.errno or 0)})"
    if len(data) > RECORD_LIMIT:
        return None, f"{label}: record is larger than {RECORD_LIMIT} bytes ({st.st_size})"
    return data, ""


def check_argv(check: ArgvCheck, obs_fd: int) -> list[str]:
    """The recorder `check.program` was called exactly as `check.calls` says."""
    files = recorded(obs_fd, check.program, "argv")
    if len(files) != len(check.calls):
        return [f"{check.program} was called {len(files)} time(s), expected {len(check.calls)}"]
    problems = []
    for i, (path, want) in enumerate(zip(files, check.calls, strict=True)):
        label = f"{check.program} call #{i + 1}"
        data, why = read_record(obs_fd, path, label)
        if data is None:
            problems.append(why)
            continue
        if data and not data.endswith(b"\0"):
            problems.append(f"{label}: record is truncated")
            continue
        problems.extend(_compare_args(label, want, split_records(data)))
    return problems


def _compare_args(label: str, want: tuple[bytes, ...], got: tuple[bytes, ...]) -> list[str]:
    for j, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            return [f"{label}: argv[{j + 1}]: {describe_difference(w, g)}"]
    if len(got) > len(want):
        extra = ", ".join(quoted(a, 30) for a in got[len(want) :][:4])
        return [
            f"{label}: {len(got)} arguments, expected {len(want)} "
            f"(extra from argv[{len(want) + 1}]: {extra})"
        ]
    if len(got) < len(want):
        missing = ", ".join(quoted(a, 30) for a in want[len(got) :][:4])
        return [
            f"{label}: {len(got)} arguments, expected {len(want)} "
            f"(missing from argv[{len(got) + 1}]: {missing})"
        ]
    return []


def check_env(check: EnvCheck, obs_fd: int) -> list[str]:
    """The env recorder `check.program` ran once and saw exactly the expected variables."""
    files = recorded(obs_fd, check.program, "env")
    if len(files) != 1:
        return [f"{check.program} was called {len(files)} time(s), expected 1"]
    data, why = read_record(obs_fd, files[0], check.program)
    if data is None:
        return [why]
    seen: dict[str, bytes] = {}
    for record in split_records(data):
        raw_name, _, value = record.partition(b"=")
        seen[raw_name.decode("ascii", "replace")] = value
    problems = []
    for name, want in check.vars:
        if name not in seen:
            problems.append(f"{check.program}: {name} is not set, expected {quoted(want)}")
        elif seen[name] != want:
            problems.append(f"{check.program}: {name}: {describe_difference(want, seen[name])}")
    problems.extend(
        f"{check.program}: {name} is set to {quoted(seen[name])}, expected unset"
        for name in check.unset
        if name in seen
    )
    return problems


def check_git(check: GitCheck, work_fd: int) -> list[str]:
    """HEAD's messages and tree in the fixture repository, read without running git.

    The `.git` directory is opened from the work dir's descriptor without following a link
    (`wsfs`), and read by `gitread` (see `gitops`): nothing the reply configured runs.
    """
    rel = os.path.normpath(os.path.join(check.path, ".git"))
    try:
        with wsfs.opened_dir(work_fd, rel) as git_dir:
            repo, why = gitops.open_repository(git_dir)
    except OSError:
        return [f"git: {show(rel)} is not a directory any more"]
    if repo is None:
        return [why]
    with repo:
        return _check_git(check, repo)


def _check_git(check: GitCheck, repo: gitread.Repository) -> list[str]:
    messages, why = gitops.head_messages(repo)
    if messages is None:
        return [why]
    problems = []
    if len(messages) != len(check.messages):
        shown = ", ".join(quoted(m, 40) for m in messages[:4])
        problems.append(
            f"git: HEAD has {len(messages)} commit(s), expected {len(check.messages)} ({shown})"
        )
    else:
        for i, (want, got) in enumerate(zip(check.messages, messages, strict=True)):
            if want != got:
                problems.append(f"git: message of HEAD~{i}: {describe_difference(want, got)}")
    if check.tree:
        problems.extend(_check_git_tree(check, repo))
    return problems


def _check_git_tree(check: GitCheck, repo: gitread.Repository) -> list[str]:
    tree, why = gitops.head_tree(repo)
    if tree is None:
        return [why]
    problems = []
    want_paths = {f.path for f in check.tree}
    for f in check.tree:
        if f.path not in tree:
            problems.append(f"git: HEAD's tree lacks {show(f.path)}")
            continue
        entry = tree[f.path]
        read, why = gitops.blob_prefix(repo, entry, len(f.content) + 64)
        if read is None:
            return [why]
        size, blob = read
        if size != len(f.content) or blob != f.content:
            problems.append(
                f"git: {show(f.path)} in HEAD: {describe_difference(f.content, blob, size)}"
            )
        mode = f"{entry.mode:06o}"
        if f.mode is not None and mode != ("100755" if f.mode & 0o111 else "100644"):
            problems.append(f"git: {show(f.path)} in HEAD has mode {mode}, expected {f.mode:04o}")
    problems.extend(
        f"git: unexpected {show(p)} in HEAD's tree" for p in sorted(set(tree) - want_paths)
    )
    return problems


def check_stdout(check: StdoutCheck, stdout: bytes) -> list[str]:
    """stdout is exactly, or contains, the expected bytes."""
    if check.exact is not None and stdout != check.exact:
        return [f"stdout: {describe_difference(check.exact, stdout)}"]
    if check.contains is not None and check.contains not in stdout:
        return [f"stdout {quoted(stdout)} does not contain {quoted(check.contains)}"]
    return []
