"""Canaries: replies whose own execve marks their arrival and whose effect is a file.

Each canary reply calls a **marker**: a program named by a token unique to that reply
(`bacanary` + 12 hex digits, letters and digits only, so that every tokenizer and shell keeps
it whole), installed in the workspace's bin dir (first on PATH, read-only inside) as the
fixture argv recorder (`tasks.helpers.argv_recorder`). So:

- **arrival**: the marker's execve is in the trace (its file name is the token), and every
  hop that carried the reply can be found by the token in its argv or in the bytes it wrote;
- **effect**: the recorder writes its argv, NUL-terminated, to `$BA_OBS/calls/<token>.<n>.argv`
  (or the obs dir's inner path, baked in, where a harness empties the environment).

Two kinds (`canaries.toml`):

- `arrival_canaries(n)`: the same simple command n times, labelled r0, r1...; its recorded
  argv against `parsed_once` says whether one lossless shell parse happened (`arrival_outcome`).
- `probe_canaries(probe)`: a fingerprint probe of probes/*.toml, each reply with its canary
  `printf` replaced by the marker; `probe_fact` rebuilds from the records what that printf
  would have printed (`ba-%s=%s\n` reused for every pair of arguments, as printf does, so a
  tokenizer's leftovers come out as they would) and reads it with the probes' own
  `read_fact`, so a probe means exactly what it means through a transport.
  `unsupported(probe)` says why a probe cannot be carried.
"""

from __future__ import annotations

import re
import secrets
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from boundary_audit._subprocess import write_executable
from boundary_audit.probes.model import Probe, ProbeFact
from boundary_audit.probes.run import read_fact
from boundary_audit.sandbox.interface import ExecResult, Workspace
from boundary_audit.tasks import helpers, wsfs

MARKER_PREFIX = "bacanary"
RECORD_LIMIT = 1 << 20
"""Bytes read of one marker record."""
RECORDS_PER_TOKEN = 64
"""Records read per token (a reply run in a loop cannot make the reading unbounded)."""

INTACT = "intact"
"""Arrival outcome: the marker got `parsed_once`: one lossless shell parse."""
UNPARSED = "unparsed"
"""Arrival outcome: the marker got the reply's words as a tokenizer splits them, no shell."""
ALTERED = "altered"
"""Arrival outcome: the marker ran with other arguments (a lossy parse on the way)."""
MISSING = "missing"
"""Arrival outcome: the marker never ran."""


@dataclass(frozen=True)
class Canary:
    """One reply sent through the harness."""

    token: str
    """The marker's name; unique per reply."""
    label: str
    """r0, r1, ... for arrival canaries; `<probe>.<i>` for a probe's replies."""
    reply: str
    probe: str | None = None
    parsed_once: tuple[str, ...] = ()
    """Arrival canaries: the marker's argv (after argv[0]) after one lossless shell parse."""

    @property
    def marks(self) -> bool:
        """The reply calls its marker (a probe's setup reply, like `exit`, may not)."""
        return self.token in self.reply


@cache
def _data() -> dict[str, Any]:
    text = resources.files("boundary_audit.observe").joinpath("canaries.toml").read_text("utf-8")
    return tomllib.loads(text)


def new_token() -> str:
    """A fresh marker name."""
    return f"{MARKER_PREFIX}{secrets.token_hex(6)}"


def arrival_canaries(count: int = 2) -> tuple[Canary, ...]:
    """`count` arrival canaries (r0, r1, ...), each with its own token."""
    spec = _data()["arrival"]
    found = []
    for i in range(count):
        token, label = new_token(), f"r{i}"
        reply = str(spec["reply"]).format(marker=token, label=label)
        once = tuple(str(w).format(label=label) for w in spec["parsed_once"])
        found.append(Canary(token, label, reply, None, once))
    return tuple(found)


def _printf() -> str:
    return str(_data()["probes"]["printf"])


def _canary_line() -> re.Pattern[str]:
    return re.compile(re.escape(_printf()) + r"(\S+) (\S+)(?=$|;|\n)")


def unsupported(probe: Probe) -> str | None:
    """Why `probe` cannot be carried by a marker, or None when it can."""
    printf = _printf()
    count = sum(r.count(printf) for r in probe.replies)
    if count == 0:
        return "no reply prints its canary line with the probes' printf"
    plain = sum(len(_canary_line().findall(r)) for r in probe.replies)
    if plain != count:
        return "its canary line is processed further (piped on), which a marker cannot carry"
    return None


def probe_canaries(probe: Probe) -> tuple[Canary, ...]:
    """The replies of `probe`, each with its canary printf replaced by its own marker."""
    why = unsupported(probe)
    if why:
        raise ValueError(f"probe {probe.id}: {why}")
    found = []
    for i, reply in enumerate(probe.replies):
        token = new_token()
        marked = reply.replace(_printf(), token + " ")
        found.append(Canary(token, f"{probe.id}.{i}", marked, probe.id))
    return tuple(found)


def install(ws: Workspace, canaries: Sequence[Canary]) -> None:
    """Put each canary's marker into the workspace's bin dir (read-only inside the sandbox)."""
    for canary in canaries:
        path = ws.bin / canary.token
        write_executable(path, helpers.argv_recorder(canary.token, ws.inner_obs).encode())


def records(ws: Workspace, token: str) -> tuple[tuple[bytes, ...], ...]:
    """Every argv (after argv[0]) the marker `token` recorded, in call order."""
    try:
        names = wsfs.listdir(ws.obs_fd, "calls")
    except OSError:
        return ()
    found: list[tuple[int, tuple[bytes, ...]]] = []
    pattern = re.compile(re.escape(token) + r"\.(\d{1,4})\.argv")
    for name in names:
        m = pattern.fullmatch(name)
        if m is None or len(found) >= RECORDS_PER_TOKEN:
            continue
        try:
            _, data = wsfs.read_prefix(ws.obs_fd, f"calls/{name}", RECORD_LIMIT)
        except (OSError, wsfs.NotRegular):
            continue
        words = data.split(b"\0")
        found.append((int(m.group(1)), tuple(words[:-1]) if words[-1] == b"" else tuple(words)))
    return tuple(argv for _, argv in sorted(found))


def arrival_outcome(canary: Canary, recorded: Sequence[tuple[bytes, ...]]) -> str:
    """INTACT, UNPARSED, ALTERED or MISSING for an arrival canary's first record."""
    if not recorded:
        return MISSING
    got = tuple(w.decode("utf-8", "surrogateescape") for w in recorded[0])
    if got == canary.parsed_once:
        return INTACT
    words = canary.reply.split(" ", 1)[1]
    try:
        shlexed = tuple(shlex.split(words))
    except ValueError:
        shlexed = ()
    if got in (shlexed, tuple(words.split())):
        return UNPARSED
    return ALTERED


def probe_fact(probe: Probe, canaries: Sequence[Canary], ws: Workspace) -> ProbeFact:
    """What the probe's markers recorded, read as the probe reads its canary line."""
    lines = []
    for canary in canaries:
        for argv in records(ws, canary.token):
            text = [w.decode("utf-8", "replace") for w in argv]
            # what `printf 'ba-%s=%s\n' ARGS...` prints: the format reused for each pair
            pairs = [
                text[i : i + 2] + [""] * (2 - len(text[i : i + 2])) for i in range(0, len(text), 2)
            ]
            lines += [f"ba-{name}={value}\n" for name, value in pairs]
    stdout = "".join(lines).encode("utf-8")
    return read_fact(probe, [ExecResult(exit_code=0, stdout=stdout, stderr=b"")])
