"""The small shell programs that stand between the host and a reply, and the limit prefix.

Two pieces:

- `limit_prefix`: host side. Joins the run's cgroup (`echo $$` into each controller's
  `cgroup.procs`, then exec), applies RLIMIT_CPU / RLIMIT_AS / RLIMIT_FSIZE / RLIMIT_NPROC /
  no core files through util-linux `prlimit`, which takes exact byte values (the shells'
  `ulimit` units differ), and drops to the workspace's identity (`identity.drop_prefix`) as the
  last step, so the run itself never holds root. A failure to join is reported on stderr as
  `boundary-audit: cannot join the run's cgroup` with exit 125 before anything runs.
- `REAPER`: sandbox side, a bash program (bash because the status descriptor's number may
  exceed 9, which dash cannot redirect), run as pid 1 of the run's own pid namespace (bwrap
  `--as-pid-1`, a container's entry point). It runs the argv with the status descriptor
  closed, counts the processes still alive in the namespace, kills them all (`kill -9 -1` is
  safe only here, as pid 1 of a private namespace), writes `escaped N` on the status
  descriptor and exits with the argv's status. Being pid 1, it survives a reply's own
  `kill -9 -1`. Its own stderr goes to /dev/null (so no "Killed" notice of its own lands in
  the reply's stderr); the argv gets the real one, and exactly the run's environment, read
  NUL-separated from ENV (`env -i`: not bash's own, which adds PWD, SHLVL and _, nor the
  backend's additions, bwrap's PWD and Docker's HOSTNAME).
  Arguments: `STATUS INPUT ENV ARGV...`: STATUS and ENV each a descriptor number or a file
  path (Docker cannot pass descriptors), INPUT `-` or a file to read stdin from.
  The reaper runs from an execute-only copy of bash (`REAPER_PROGRAM`, mode 0111, root's):
  the kernel makes a process whose program it cannot read non-dumpable, so the reply (same
  uid) can neither ptrace it nor write its memory through /proc/1/mem to forge its count.
  That is also why the environment comes from ENV: a non-dumpable process cannot read its
  own /proc/self/environ.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Mapping

from boundary_audit.sandbox._cgroup import RunCgroup
from boundary_audit.sandbox.identity import Identity, drop_prefix
from boundary_audit.sandbox.interface import Limits

JOIN_CGROUP = (
    'while [ "$1" != -- ]; do echo $$ > "$1" || '
    '{ echo "boundary-audit: cannot join the run\'s cgroup ($1)" >&2; exit 125; }; '
    'shift; done; shift; exec "$@"'
)
JOIN_FAILED = b"boundary-audit: cannot join the run's cgroup"

REAPER = r"""status=$1 input=$2 envsrc=$3; shift 3
case $status in *[!0-9]*) exec {fd}>"$status" ;; *) fd=$status ;; esac
case $input in -) ;; *) exec 0<"$input" ;; esac
exec {err}>&2 2>/dev/null
case $envsrc in
  *[!0-9]*) mapfile -d '' -t keep < "$envsrc" ;;
  *) mapfile -d '' -t keep <&"$envsrc"; exec {envsrc}<&- ;;
esac
eval "env -i \"\${keep[@]}\" \"\$@\" 2>&$err $err>&- $fd>&-"
st=$?
n=0
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  if [ "$p" = "$$" ]; then continue; fi
  read -r line < "$d/stat" || continue
  s=${line##*) }; s=${s%% *}
  if [ "$s" != Z ]; then n=$((n+1)); fi
done
if [ "$n" -gt 0 ]; then kill -9 -1; fi
echo "escaped $n" >&"$fd"
exit "$st"
"""


@functools.cache
def prlimit_path() -> str | None:
    """util-linux prlimit on the host, or None (then only the cgroup and timeout apply)."""
    return shutil.which("prlimit")


def rlimit_argv(limits: Limits, prlimit: str = "prlimit") -> list[str]:
    """`prlimit` options for `limits`, ending in `--`.

    The CPU hard limit is one second above the soft one, so that a busy run gets SIGXCPU
    (exit 152) first, and SIGKILL only if it ignores that.
    """
    return [
        prlimit,
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
        f"--as={limits.address_space_bytes or limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        f"--nproc={limits.max_procs}",
        "--core=0",
        "--",
    ]


def limit_prefix(
    limits: Limits,
    cgroup: RunCgroup | None,
    env: Mapping[str, str] | None = None,
    ident: Identity | None = None,
    groups: tuple[int, ...] = (),
) -> list[str]:
    """The host-side argv prefix: join `cgroup`, apply the rlimits of `limits`, become `ident`.

    The joining shell exports PWD (dash always does); unless `env` sets PWD itself, `env -u`
    removes it again so that the command sees exactly `env`.
    """
    prefix: list[str] = []
    if cgroup is not None:
        prefix += ["/bin/sh", "-c", JOIN_CGROUP, "ba-join", *map(str, cgroup.procs_files), "--"]
        if env is not None and "PWD" not in env:
            prefix += ["/usr/bin/env", "-u", "PWD"]
    tool = prlimit_path()
    if tool is not None:
        prefix += rlimit_argv(limits, tool)
    if ident is not None and ident.uid >= 0:
        prefix += drop_prefix(ident, groups)
    return prefix


REAPER_PROGRAM = "/run/ba-reaper"
"""Where the execute-only bash the reaper runs from sits inside a sandbox."""


def env_bytes(env: Mapping[str, str]) -> bytes:
    """The run's environment as the reaper reads it: NUL-terminated `NAME=value` entries."""
    return b"".join(f"{k}={v}".encode("utf-8", "surrogateescape") + b"\0" for k, v in env.items())


def env_fd(env: Mapping[str, str]) -> int:
    """A fresh readable descriptor holding `env_bytes(env)` (a memfd; pass it by number)."""
    fd = os.memfd_create("ba-env", os.MFD_CLOEXEC)
    os.write(fd, env_bytes(env))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def parse_escaped(status: str) -> int:
    """The N of the reaper's `escaped N` line; 0 when the line is missing or malformed."""
    for line in status.splitlines():
        word, _, num = line.partition(" ")
        if word == "escaped" and num.strip().isdigit():
            return int(num)
    return 0
