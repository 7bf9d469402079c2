"""How source/ runs the git program: never prompting, never fetching by surprise, bounded in time.

Every git call of this package goes through `run_git`, which uses `_subprocess.run` (own
process group, timeout kills the group, so an `ssh` or `git-remote-https` grandchild dies
too) with an environment built here:

- inherited `GIT_*` variables are dropped except an allow-list (tracing, TLS, the user's
  `GIT_SSH_COMMAND`), so running inside a git hook (`GIT_DIR`, `GIT_INDEX_FILE`,
  `GIT_OBJECT_DIRECTORY` set) cannot redirect us to another repository;
- no credential prompt can appear: `GIT_TERMINAL_PROMPT=0`, `GIT_ASKPASS` and `SSH_ASKPASS`
  name a program that fails, `SSH_ASKPASS_REQUIRE=never`, ssh runs with `BatchMode=yes`, and
  `-c credential.helper=` empties the helper list (global and URL-specific helpers alike);
- network calls allow only `https:http:ssh:git:file` (never `ext::`); every other call allows
  no protocol at all, so a partial clone's lazy fetch of a missing object fails instead of
  touching the network (`GIT_NO_LAZY_FETCH` is set too: git 2.45+ and the 2.39.4+ security
  releases honour it);
- replace refs are ignored (`GIT_NO_REPLACE_OBJECTS`): we read the objects the sha names;
- a call that does not use the network reads no global or system config either
  (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`): it runs in a git directory whose
  config is ours (a cached mirror, or a local repository's `shadow`), so no filter, hook,
  fsmonitor, pager or textconv driver is configured anywhere a scanned tree's
  `.gitattributes` could select it, and hooks and fsmonitor are pinned off on the command line.

Every git child is started by `_subprocess.run` (or `_subprocess.popen` for the streaming
`cat-file --batch` in `objects`) in a session of its own, so its whole process group is killed
on timeout, on an exception in the caller, and when the call returns. Each is registered with
the supervisor; only a network call (clone, fetch) is `guarded`, i.e. needs the guardian to
kill it if we are killed: a local call ends by itself once we are gone, and a static scan of a
local repository starts no guardian process.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from boundary_audit._subprocess import ProcessResult, run
from boundary_audit.errors import SourceError

NETWORK_PROTOCOLS = "https:http:ssh:git:file"
NO_PROTOCOL = "boundary-audit-no-network"
"""A protocol name that does not exist: allowing only it forbids every transport."""

_KEEP = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_CAPATH",
        "GIT_SSL_CERT",
        "GIT_SSL_KEY",
        "GIT_SSL_NO_VERIFY",
        "GIT_CURL_VERBOSE",
        "GIT_TRACE",
        "GIT_TRACE_PACKET",
        "GIT_TRACE_PERFORMANCE",
        "GIT_TRACE2",
        "GIT_TRACE2_EVENT",
        "GIT_TRACE2_PERF",
    }
)

_CONFIG = (
    "credential.helper=",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "gc.auto=0",
    "maintenance.auto=false",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
)


def failing_program() -> str:
    """A program that exits non-zero at once (the askpass that answers nothing)."""
    return shutil.which("false") or "/bin/false"


def ssh_command(timeout: float, inherited: str | None) -> str:
    """`GIT_SSH_COMMAND` that never asks: BatchMode, a connect timeout, dead-peer detection.

    The options go right after the program when the user's own command is `ssh ...`, because
    ssh keeps the first value it sees for an option.
    """
    ours = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, int(min(timeout, 30)))}"]
    ours += ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"]
    words = shlex.split(inherited) if inherited else ["ssh"]
    if Path(words[0]).name == "ssh":
        words[1:1] = ours
    else:
        words += ours
    return shlex.join(words)


def git_env(
    *, network: bool, timeout: float, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for one git call; `network` says whether it may use a transport."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if not k.startswith("GIT_") or k in _KEEP}
    fail = failing_program()
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS=fail,
        SSH_ASKPASS=fail,
        SSH_ASKPASS_REQUIRE="never",
        GCM_INTERACTIVE="never",
        GIT_LFS_SKIP_SMUDGE="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_ALLOW_PROTOCOL=NETWORK_PROTOCOLS if network else NO_PROTOCOL,
    )
    if not network:
        env.update(GIT_NO_LAZY_FETCH="1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        env.pop("GIT_CONFIG_SYSTEM", None)
    env["GIT_SSH_COMMAND"] = ssh_command(timeout, base.get("GIT_SSH_COMMAND"))
    return env


def git_argv(args: Sequence[str], *, git_dir: Path | None, timeout: float) -> list[str]:
    """`git -c ... [--git-dir=DIR] ARGS` with the hardening config and HTTP stall limits."""
    argv = ["git"]
    for item in (*_CONFIG, "http.lowSpeedLimit=1000", f"http.lowSpeedTime={max(1, int(timeout))}"):
        argv += ["-c", item]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    return argv + list(args)


def run_git(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    network: bool = False,
    timeout: float = 60.0,
    input: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
    output_cap: int = 1 << 30,
) -> ProcessResult:
    """Run git with the hardened environment; never raises for a non-zero exit (see `failed`)."""
    env = git_env(network=network, timeout=timeout)
    env.update(extra_env or {})
    argv = git_argv(args, git_dir=git_dir, timeout=timeout)
    result = run(
        argv,
        timeout=timeout,
        input=input,
        env=env,
        error=SourceError,
        what="git",
        output_cap=output_cap,
        # NOTE: a local call reads our own git dir with no network and no lazy fetch: it ends
        # by itself if we die (a FIFO planted as a loose object is left to the next reap).
        guarded=network,
    )
    if result.truncated:
        raise SourceError(f"git {args[0]}: output larger than {output_cap} bytes")
    return result


def failed(result: ProcessResult, doing: str, timeout: float) -> SourceError:
    """A one-line SourceError for a git call that did not succeed: `doing: reason`."""
    if result.timed_out:
        return SourceError(
            f"{doing}: no result within {timeout:g}s (timed out)",
            hint="check that the remote is reachable, or raise the timeout",
        )
    detail = reason(result.stderr) or f"git exited with status {result.returncode}"
    hint = None
    if any(
        k in detail
        for k in (
            "could not read Username",
            "could not read Password",
            "Permission denied",
            "Authentication failed",
        )
    ):
        hint = (
            "boundary-audit never prompts for credentials: use an ssh agent or key, "
            "or a URL that needs none"
        )
    return SourceError(f"{doing}: {detail}", hint=hint)


_GENERIC = ("could not read from remote repository", "the remote end hung up unexpectedly")


def reason(stderr: bytes) -> str:
    """The informative line of git's stderr: the first specific `fatal:` line, else `error:` ...

    git often ends with boilerplate ("Could not read from remote repository. Please make sure
    you have the correct access rights..."), so the last line is not the reason; a line that
    ends with ':' continues on the next one (`unable to connect to HOST:` + errno line).
    """
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    ranked = []
    for rank, prefixes in enumerate((("fatal:",), ("error:", "ssh:", "remote:"))):
        for i, ln in enumerate(lines):
            if ln.startswith(prefixes) and not any(g in ln.lower() for g in _GENERIC):
                ranked.append((rank, i))
    i = min(ranked)[1] if ranked else len(lines) - 1
    if i < 0:
        return ""
    pick = lines[i]
    if pick.endswith(":") and i + 1 < len(lines):
        pick = f"{pick} {lines[i + 1]}"
    for prefix in ("fatal: ", "error: "):
        pick = pick.removeprefix(prefix)
    return pick
