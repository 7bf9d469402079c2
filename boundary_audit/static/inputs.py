"""Values from outside the model: the environment, CLI flags, configuration, a person's text.

Read from the `[[input]]` and `[[input_key]]` entries of `catalogue/sources.toml`. A value
such a source yields carries a `values.Input` and no unknown part, so a command built only
from inputs and literals is `configured` (not a model boundary, see `Prov.configured`); a
value that mixes one with model output stays the model's, since its origins are kept.

`InputTables.call` recognises calls (`os.getenv("SHELL")`, `parser.parse_args()`,
`json.load(open("settings.json"))`), `read` the dotted names (`os.environ`, `process.env`,
`sys.argv`), `decorated` the functions whose parameters are CLI options (`@click.option`),
and `refine` names the input an attribute or key read takes out of it (`args.cmd` is the
CLI flag `--cmd`, `settings["hooks"]` a hook command).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from boundary_audit.static import catalogue
from boundary_audit.static.ir import Span
from boundary_audit.static.values import Input, Prov

S = catalogue.strings


@dataclass(frozen=True)
class Rule:
    """One `[[input]]` entry."""

    kind: str
    label: str
    read_label: str
    field: str
    names_like: re.Pattern[str] | None
    no_args: bool
    default: int
    """Index of a call's argument that is the value's default (`os.getenv("X", "bash")`)."""


@dataclass
class InputTables:
    """The `[[input]]` entries of one query dialect, indexed by the last name of a spelling."""

    calls: dict[str, list[tuple[str, Rule]]]
    methods: dict[str, Rule]
    reads: dict[str, Rule]
    files: dict[str, list[tuple[str, Rule]]]
    loaders: dict[str, list[tuple[str, Rule]]]
    wraps: dict[str, list[str]]
    decorators: list[tuple[str, Rule]]
    rust: bool

    def matches(self, table: dict[str, list[tuple[str, Rule]]], cn: str) -> Rule | None:
        """The rule whose spelling `cn` (a canonical callee) ends with, if any."""
        for spelling, rule in table.get(_last(cn), ()):
            if _suffix(cn, spelling, self.rust):
                return rule
        return None

    def wrap(self, cn: str) -> bool:
        """True if `cn` returns its first argument (`bufio.NewReader(os.Stdin)`)."""
        return any(_suffix(cn, s, self.rust) for s in self.wraps.get(_last(cn), ()))

    def decorated(self, decorators: tuple[str, ...]) -> tuple[Rule, str] | None:
        """The rule and decorator that make a function's parameters inputs (`@click.option`)."""
        for d in decorators:
            for want, rule in self.decorators:
                if d == want or d.endswith("." + want):
                    return rule, d
        return None


_SEPARATORS = re.compile(r"\.|::|/")


@lru_cache(maxsize=4096)
def _last(name: str) -> str:
    return _SEPARATORS.split(name)[-1]


def _suffix(cn: str, spelling: str, rust: bool) -> bool:
    if cn == spelling:
        return True
    if rust:
        return cn.endswith("::" + spelling)
    return cn.endswith("." + spelling) or cn.endswith("/" + spelling)


@cache
def tables(dialect: str) -> InputTables:
    """The input tables of `dialect` (python, javascript, go, rust, shell)."""
    out = InputTables({}, {}, {}, {}, {}, {}, [], dialect == "rust")
    for e in catalogue.entries("sources", "input"):
        if e.get("lang") != dialect:
            continue
        pattern = e.get("names_like")
        rule = Rule(
            str(e["kind"]),
            str(e.get("label", "{call}")),
            str(e.get("read_label", "{read}")),
            str(e.get("field", "")),
            re.compile(str(pattern)) if pattern else None,
            bool(e.get("no_args", False)),
            int(e.get("default", 0)),
        )
        for s in S(e, "calls"):
            out.calls.setdefault(_last(s), []).append((s, rule))
        for s in S(e, "methods"):
            out.methods[s] = rule
        for s in S(e, "reads"):
            out.reads[s] = rule
        for s in S(e, "files"):
            out.files.setdefault(_last(s), []).append((s, rule))
        for s in S(e, "loaders"):
            out.loaders.setdefault(_last(s), []).append((s, rule))
        for s in S(e, "wraps"):
            out.wraps.setdefault(_last(s), []).append(s)
        out.decorators.extend((s, rule) for s in S(e, "decorators"))
    return out


def _key(name: str) -> str:
    """`mcpServers`, `mcp_servers`, `MCP-Servers` → `mcpservers`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def make(rule: Rule, label: str, path: str, span: Span, keyed: bool = True) -> Prov:
    """The provenance of an input of `rule` named `label`."""
    return Prov(
        inputs=frozenset({Input(rule.kind, label, path, span, rule.field if keyed else "")})
    )


def fill(template: str, **parts: str) -> str:
    """`template` with `{arg}`, `{call}`, `{read}`, `{key}` filled (a missing `{arg}` drops
    its parentheses' content)."""
    out = template
    for k, v in parts.items():
        out = out.replace("{" + k + "}", v)
    out = re.sub(r"\{[a-z]+\}", "…", out)
    return out.replace("(…)", "").replace("  ", " ").strip()


def refine(prov: Prov, key: str, path: str, span: Span) -> Prov:
    """`prov` read at `key`: an input whose `field` names its parts becomes the part
    (`args.cmd` → CLI flag `--cmd`); a configured value's hook or MCP server key becomes
    that kind of input. Only a value with inputs and no other part is refined."""
    if not prov.inputs or not prov.constant:
        return prov
    found = tables_any().get(_key(key))
    changed: list[Input] = []
    for i in prov.inputs:
        if found is not None and i.kind == "config":
            kind, label = found
            named = f"{label.replace('{key}', key)} ({i.label})"
            changed.append(Input(kind, named, path, span))
        elif i.field:
            changed.append(Input(i.kind, i.field.replace("{key}", key), path, span))
        else:
            changed.append(i)
    return Prov(prov.origins, prov.unknown, prov.vars, prov.steps, frozenset(changed))


@cache
def tables_any() -> dict[str, tuple[str, str]]:
    """The `[[input_key]]` names (normalised) → (kind, label)."""
    out: dict[str, tuple[str, str]] = {}
    for e in catalogue.entries("sources", "input_key"):
        for name in S(e, "names"):
            out[_key(name)] = (str(e["kind"]), str(e["label"]))
    return out


def named_like(rule: Rule, text: str) -> bool:
    """True if a file path's text looks like a configuration file of `rule`."""
    return rule.names_like is None or bool(rule.names_like.search(text))


FILE_READ = re.compile(
    r"\b(open|read_to_string|readFileSync|readFile|ReadFile|read_text|read_bytes|read)\s*\("
)
"""A file read in a loader's argument text (`json.load(open(p))`, `toml::from_str(&fs::...)`)."""


__all__ = ["FILE_READ", "InputTables", "Rule", "fill", "make", "named_like", "refine", "tables"]
