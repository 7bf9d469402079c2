"""The fixture helper programs, generated as POSIX sh so that they run under every backend.

- argv recorder: writes each argument NUL-terminated to `$BA_OBS/calls/<name>.<n>.argv`, so
  the exact bytes (empty arguments, newlines, non-UTF-8) are kept. `n` counts calls from 0;
  the slot is claimed with noclobber, so concurrent calls never share a file.
- env recorder: writes `NAME=value` NUL-terminated for each watched variable that is set (set
  but empty is kept apart from unset) to `$BA_OBS/calls/<name>.<n>.env`.
- remote: a local two-shell stand-in for `ssh host CMD`. Like the ssh client it joins its
  arguments with single spaces (empty arguments included) into one string, and like sshd it
  hands that string to `bash -c` on the "remote side": in the remote's home directory (a
  directory of the work dir), with HOME pointing there and the remote's own environment
  variables. Standard input is passed through, as ssh forwards it; with no arguments the
  remote shell reads its commands from stdin (`ssh host <script`). Each received command
  string is logged to `$BA_OBS/calls/<name>.<n>.cmd`.

Everything a helper records lives under the workspace's obs dir, outside the work dir, so it
never counts as a collateral file. The helpers find it through `$BA_OBS`, or, where a boundary
empties the environment (LangChain's shell tool starts bash with `env={}`), at the obs dir's
in-sandbox path written into the helper when it is installed: a harness that drops our
variables must not look like a harness that drops the call.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

_CLAIM = """\
d="${BA_OBS:-%(obs)s}/calls"
mkdir -p "$d" || exit 125
n=0
while ! (set -C; : > "$d/%(name)s.$n.%(ext)s") 2>/dev/null; do
  n=$((n + 1))
  [ "$n" -lt 10000 ] || exit 125
done
f="$d/%(name)s.$n.%(ext)s"
"""


def _claim(name: str, ext: str, obs: str) -> str:
    inside_double_quotes = "".join("\\" + c if c in '\\"$`' else c for c in obs)
    return _CLAIM % {"name": name, "ext": ext, "obs": inside_double_quotes}


def argv_recorder(name: str, obs: str) -> str:
    """The argv recorder installed as `name`; `obs`: the in-sandbox obs dir."""
    return (
        "#!/bin/sh\n"
        f"# {name}: boundary-audit argv recorder (records each argument, NUL-terminated)\n"
        + _claim(name, "argv", obs)
        + 'for a in "$@"; do printf \'%s\\000\' "$a"; done > "$f"\n'
    )


def env_recorder(name: str, watched: Sequence[str], obs: str) -> str:
    """The env recorder installed as `name`, watching the variables in `watched`."""
    lines = [
        "#!/bin/sh",
        f"# {name}: boundary-audit env recorder (records watched variables, NUL-terminated)",
        _claim(name, "env", obs).rstrip("\n"),
        ': > "$f"',
    ]
    lines += [
        f'if [ "${{{var}+set}}" = set ]; then printf \'{var}=%s\\000\' "${var}" >> "$f"; fi'
        for var in sorted(set(watched))
    ]
    return "\n".join(lines) + "\n"


def remote(name: str, home: str, env: Sequence[tuple[str, str]], obs: str) -> str:
    """The `remote` helper whose remote side runs in `home` (an absolute in-sandbox path)."""
    exports = "".join(f"{var}={shlex.quote(value)}; export {var}\n" for var, value in env)
    return (
        "#!/bin/sh\n"
        f"# {name}: boundary-audit two-shell stand-in for `ssh host CMD` (see tasks/helpers.py)\n"
        "cmd=\nsep=\n"
        'for a in "$@"; do cmd="$cmd$sep$a"; sep=\' \'; done\n'
        + _claim(name, "cmd", obs)
        + 'printf \'%s\' "$cmd" > "$f"\n'
        f"cd {shlex.quote(home)} || exit 255\n"
        f"HOME={shlex.quote(home)}; export HOME\n"
        + exports
        + 'if [ "$#" -eq 0 ]; then exec bash -s; fi\n'
        'exec bash -c "$cmd"\n'
    )


def split_records(data: bytes) -> tuple[bytes, ...]:
    """Split NUL-terminated records; a final unterminated record is kept (callers flag it)."""
    if not data:
        return ()
    parts = data.split(b"\0")
    if parts[-1] == b"":
        parts.pop()
    return tuple(parts)
