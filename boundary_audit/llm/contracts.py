"""Generation contracts as data: what a model is asked, read from the packaged contracts/ folder.

One TOML file per contract (`raw.toml`, `disclosed.toml`, `native.toml`; format in
docs/models.md): `name` (= the file name), `title`, `form` (`text`: the command comes back as
text; `tool`: as the arguments of one call of `[tool]`), `disclose` (whether the prompt holds
the boundary's description), `extract` (how the command is taken out of the answer, one of
`extract.METHODS`), `system` and `user` templates. Templates name `{{instruction}}` (the
task's text) and, where `disclose` is true, `{{disclosure}}`; any other `{{...}}` is an error,
and so is a disclosing contract without `{{disclosure}}` or a plain one with it.

`Prompt` is what one request asks, independent of the API that carries it (`chat_messages`,
`responses_input`, the tool in both APIs' spellings), and `Prompt.sha256` fingerprints it:
resume compares it, so a changed contract or disclosure is never mixed into an old file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from boundary_audit._data import iter_files
from boundary_audit.errors import BoundaryAuditError, ExitCode, UsageError
from boundary_audit.llm.extract import METHODS
from boundary_audit.probes.fields import Table, read_toml

FORMS = ("text", "tool")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")


class ContractError(BoundaryAuditError):
    """A contract or disclosure data file is invalid; the message names the file and key."""

    exit_code = ExitCode.INPUT


@dataclass(frozen=True)
class Tool:
    """The one tool a `tool`-form contract offers: a function with one string argument."""

    name: str
    description: str
    argument: str
    argument_description: str

    def parameters(self) -> dict[str, Any]:
        """Its JSON schema."""
        return {
            "type": "object",
            "properties": {
                self.argument: {"type": "string", "description": self.argument_description}
            },
            "required": [self.argument],
            "additionalProperties": False,
        }

    def chat(self) -> dict[str, Any]:
        """The tool as chat completions spells it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters(),
            },
        }

    def responses(self) -> dict[str, Any]:
        """The tool as the Responses API spells it."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(),
            "strict": False,
        }


@dataclass(frozen=True)
class Contract:
    """One generation contract (see the module docstring)."""

    name: str
    title: str
    form: str
    disclose: bool
    extract: str
    system: str
    user: str
    source_file: str
    tool: Tool | None = None

    def prompt(self, instruction: str, disclosure: str = "") -> Prompt:
        """The prompt for one task; `disclosure` is required exactly when `disclose` is set."""
        if self.disclose and not disclosure:
            raise UsageError(f"contract {self.name!r} needs a boundary description")
        values = {"instruction": instruction, "disclosure": disclosure}
        return Prompt(
            contract=self.name,
            system=fill(self.system, values),
            user=fill(self.user, values),
            tool=self.tool,
        )


@dataclass(frozen=True)
class Prompt:
    """What one request asks: a system text, a user text, and the tool when there is one."""

    contract: str
    system: str
    user: str
    tool: Tool | None = None

    def chat_messages(self) -> list[dict[str, str]]:
        """Chat-completions `messages`."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    def responses_input(self) -> list[dict[str, str]]:
        """Responses-API `input` (the system text goes into `instructions`)."""
        return [{"role": "user", "content": self.user}]

    @property
    def sha256(self) -> str:
        """A fingerprint of everything the prompt says."""
        doc = {
            "system": self.system,
            "user": self.user,
            "tool": self.tool.chat() if self.tool else None,
        }
        data = json.dumps(doc, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(data).hexdigest()


def fill(template: str, values: Mapping[str, str]) -> str:
    """`template` with every `{{name}}` replaced by `values[name]` (one pass: a value's own
    braces are never expanded)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def parse_contract(data: bytes, where: str, stem: str) -> Contract:
    """One contract from the bytes of `where`; a ContractError names the file and key."""
    top = Table(read_toml(data, where, ContractError), where, "", ContractError)
    if top.get("schema", int) != 1:
        raise top.fail("schema", "must be 1")
    name = top.text("name")
    if name != stem:
        raise top.fail("name", f"{name!r} must equal the file name {stem!r}")
    form = top.text("form")
    if form not in FORMS:
        raise top.fail("form", f"{form!r} is not one of {', '.join(FORMS)}")
    disclose = top.get("disclose", bool)
    extract = top.text("extract")
    if extract not in METHODS:
        raise top.fail("extract", f"{extract!r} is not one of {', '.join(METHODS)}")
    if (form == "tool") != (extract == "tool-call"):
        raise top.fail("extract", "`tool-call` is the method of the tool form, and only of it")
    templates = {key: top.text(key).strip("\n") for key in ("system", "user")}
    allowed = {"instruction", "disclosure"} if disclose else {"instruction"}
    for key, text in templates.items():
        for used in _PLACEHOLDER.findall(text):
            if used not in allowed:
                raise top.fail(
                    key, f"unknown placeholder {{{{{used}}}}} (allowed: {sorted(allowed)})"
                )
    joined = templates["system"] + templates["user"]
    if "{{instruction}}" not in joined:
        raise top.fail("user", "the templates never name {{instruction}}")
    if disclose and "{{disclosure}}" not in joined:
        raise top.fail("system", "a disclosing contract must name {{disclosure}}")
    tool = None
    if form == "tool":
        t = top.table("tool")
        tool = Tool(
            name=t.text("name"),
            description=t.text("description"),
            argument=t.text("argument"),
            argument_description=t.text("argument_description"),
        )
        t.done()
    elif "tool" in top.data:
        raise top.fail("tool", "only a contract of form `tool` offers a tool")
    contract = Contract(
        name=name,
        title=top.text("title"),
        form=form,
        disclose=disclose,
        extract=extract,
        system=templates["system"],
        user=templates["user"],
        source_file=where,
        tool=tool,
    )
    top.done()
    return contract


@cache
def load_contracts() -> dict[str, Contract]:
    """Every packaged contract by name (the files of contracts/ except disclosures.toml)."""
    found: dict[str, Contract] = {}
    for rel, node in iter_files("contracts", ".toml"):
        stem = rel.rsplit("/", 1)[-1].removesuffix(".toml")
        if "/" in rel or stem == "disclosures":
            continue
        found[stem] = parse_contract(node.read_bytes(), f"contracts/{rel}", stem)
    return found


def contract(name: str) -> Contract:
    """The packaged contract `name`; an unknown name is a usage error naming the known ones."""
    known = load_contracts()
    if name not in known:
        raise UsageError(f"unknown contract {name!r} (known: {', '.join(sorted(known))})")
    return known[name]
