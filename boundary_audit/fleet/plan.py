"""The fleet plan: a TOML file naming targets, reply sets, transports, tasks and the store.

```toml
name = "nightly"              # default: the file's stem
store = "nightly.store"       # default: <stem>.store beside the plan (relative to the plan)
select = "core"               # tasks, as `--select` takes them (default: all)
sandbox = "bwrap"             # auto (default), bwrap, docker; tempdir only with allow_tempdir
timeout = 10.0                # seconds one run may take
jobs = 2                      # runs in parallel on one worker
transports = ["as-found"]     # each target's derived boundary paths, and/or transport names
fixes = true                  # also measure each path with its class's fix
adapters = true               # measure an audited system's adapter path beside it
probes = true                 # fingerprint every route with the probes of probes/
replies = ["oracle", "naive", "replies/gpt.jsonl"]   # built-in sets or JSONL files

[[targets]]
repo = "https://github.com/org/harness@v1.2"   # any spec `scan` takes
name = "harness"                               # optional label (default: the spec)

[[generate]]                  # replies asked of a model before any run (resumed on rerun)
model = "gpt-x"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "OPENAI_API_KEY"    # the NAME of the variable: a key never sits in a plan
contracts = ["raw", "disclosed"]
draws = 1
```

`load_plan` reads and checks all of it before anything runs: an unknown key, a wrong type, a
missing file or a duplicate name is a `PlanError` (exit 4) naming the file and the key. Paths
are relative to the plan's directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from boundary_audit.errors import BoundaryAuditError, ExitCode, UsageError
from boundary_audit.probes.fields import Table, read_file, read_toml
from boundary_audit.sandbox import SandboxChoice
from boundary_audit.source.spec import parse_spec
from boundary_audit.tasks import load_tasks
from boundary_audit.tasks.replies import BUILTIN_SETS
from boundary_audit.transports import TRANSPORTS

AS_FOUND = "as-found"
"""The transports entry that means: each target's own derived boundary paths."""
DEFAULT_SELECT = "all"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class PlanError(BoundaryAuditError):
    """A fleet plan that cannot be read or is not valid."""

    exit_code = ExitCode.INPUT


@dataclass(frozen=True)
class Target:
    """One harness to audit: a spec `scan` takes, and the label the report shows."""

    name: str
    repo: str


@dataclass(frozen=True)
class Generate:
    """Replies to ask of one model before the runs (`boundary-audit generate` settings)."""

    model: str
    base_url: str
    api: str = "chat"
    api_key_env: str = "OPENAI_API_KEY"
    contracts: tuple[str, ...] = ("raw", "disclosed")
    draws: int = 1
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    disclose_for: str | None = None
    concurrency: int = 4


@dataclass(frozen=True)
class FleetPlan:
    """A checked plan (see the module docstring)."""

    path: Path
    name: str
    store: Path
    targets: tuple[Target, ...]
    replies: tuple[str, ...]
    """Built-in set names and absolute paths of reply files, in plan order."""
    generate: tuple[Generate, ...] = ()
    transports: tuple[str, ...] = (AS_FOUND,)
    select: str = DEFAULT_SELECT
    sandbox: str = SandboxChoice.AUTO.value
    timeout_s: float = 10.0
    jobs: int = 2
    fixes: bool = True
    adapters: bool = True
    probes: bool = True
    allow_tempdir: bool = False
    named: tuple[str, ...] = field(init=False)
    """The transport names of `transports` (without `as-found`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "named", tuple(t for t in self.transports if t != AS_FOUND))

    @property
    def as_found(self) -> bool:
        """True when each target's derived paths are measured."""
        return AS_FOUND in self.transports


def _number(table: Table, key: str, default: float, low: float, high: float) -> float:
    value = table.get(key, (int, float), default)
    if not low <= float(value) <= high:
        raise table.fail(key, f"must be between {low:g} and {high:g}")
    return float(value)


def _count(table: Table, key: str, default: int, low: int, high: int) -> int:
    value = table.get(key, int, default)
    if not low <= value <= high:
        raise table.fail(key, f"must be between {low} and {high}")
    return int(value)


def _targets(top: Table, base: Path) -> tuple[Target, ...]:
    out: list[Target] = []
    for t in top.tables("targets", []):
        repo = t.text("repo")
        try:
            spec = parse_spec(repo, cwd=base)
        except BoundaryAuditError as exc:
            raise t.fail("repo", exc.message) from None
        name = t.text("name", repo)
        t.done()
        if any(o.name == name for o in out):
            raise t.fail("name", f"{name!r} names two targets")
        if spec.kind == "local":  # workers do not share the plan's directory as their cwd
            repo = spec.location + (f"@{spec.rev}" if spec.rev else "")
        out.append(Target(name, repo))
    return tuple(out)


def _replies(top: Table, base: Path) -> tuple[str, ...]:
    out: list[str] = []
    for i, spec in enumerate(top.strings("replies", ("oracle", "naive"))):
        if spec in BUILTIN_SETS:
            chosen = spec
        else:
            path = (base / spec).resolve()
            if not path.is_file():
                raise top.fail(f"replies[{i}]", f"{spec}: no such reply file")
            chosen = str(path)
        if chosen in out:
            raise top.fail(f"replies[{i}]", f"{spec} is listed twice")
        out.append(chosen)
    return tuple(out)


def _generate(top: Table) -> tuple[Generate, ...]:
    from boundary_audit.llm.generate import APIS

    out: list[Generate] = []
    for g in top.tables("generate", []):
        api = g.text("api", "chat")
        if api not in APIS:
            raise g.fail("api", f"must be one of {', '.join(APIS)}")
        seed = g.get("seed", int, None)
        tokens = g.get("max_tokens", int, None)
        temperature = g.get("temperature", (int, float), None)
        item = Generate(
            model=g.text("model"),
            base_url=g.text("base_url"),
            api=api,
            api_key_env=g.text("api_key_env", "OPENAI_API_KEY"),
            contracts=g.strings("contracts", ("raw", "disclosed")),
            draws=_count(g, "draws", 1, 1, 100),
            temperature=None if temperature is None else float(temperature),
            max_tokens=tokens,
            seed=seed,
            disclose_for=g.text("disclose_for", None),
            concurrency=_count(g, "concurrency", 4, 1, 256),
        )
        g.done()
        if any(o.model == item.model for o in out):
            raise g.fail("model", f"{item.model!r} is asked twice")
        out.append(item)
    return tuple(out)


def _transports(top: Table) -> tuple[str, ...]:
    names = top.strings("transports", (AS_FOUND,))
    if not names:
        raise top.fail("transports", "must name at least one transport or as-found")
    for i, name in enumerate(names):
        if name != AS_FOUND and name not in TRANSPORTS:
            raise top.fail(
                f"transports[{i}]", f"unknown transport {name!r} (as-found or a transport name)"
            )
    return tuple(dict.fromkeys(names))


def load_plan(path: Path) -> FleetPlan:
    """Read and check the plan at `path` (see the module docstring); raises PlanError."""
    where = str(path)
    data = read_toml(read_file(path, PlanError), where, PlanError)
    top = Table(data, where, "", PlanError)
    base = path.resolve().parent
    name = top.text("name", path.stem)
    if not _NAME.match(name):
        raise top.fail("name", "letters, digits, '.', '_' and '-' only (at most 64)")
    store = base / top.text("store", f"{name}.store")
    sandbox = top.text("sandbox", SandboxChoice.AUTO.value)
    if sandbox not in {c.value for c in SandboxChoice}:
        raise top.fail("sandbox", f"must be one of {', '.join(c.value for c in SandboxChoice)}")
    allow_tempdir = bool(top.get("allow_tempdir", bool, False))
    if sandbox == SandboxChoice.TEMPDIR.value and not allow_tempdir:
        raise top.fail(
            "sandbox", "tempdir runs replies with NO isolation; set allow_tempdir = true to mean it"
        )
    select = top.text("select", DEFAULT_SELECT)
    try:
        load_tasks(select)
    except UsageError as exc:
        raise top.fail("select", exc.message) from None
    plan = FleetPlan(
        path=path.resolve(),
        name=name,
        store=store.resolve(),
        targets=_targets(top, base),
        replies=_replies(top, base),
        generate=_generate(top),
        transports=_transports(top),
        select=select,
        sandbox=sandbox,
        timeout_s=_number(top, "timeout", 10.0, 0.1, 3600),
        jobs=_count(top, "jobs", 2, 1, 256),
        fixes=bool(top.get("fixes", bool, True)),
        adapters=bool(top.get("adapters", bool, True)),
        probes=bool(top.get("probes", bool, True)),
        allow_tempdir=allow_tempdir,
    )
    top.done()
    if not plan.targets and not plan.named:
        raise PlanError(f"{where}: no [[targets]] and no named transports: nothing to audit")
    if plan.as_found and not plan.targets:
        raise PlanError(f"{where}: transports has as-found but the plan names no [[targets]]")
    return plan
