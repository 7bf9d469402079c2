"""What the dataflow engine knows about library APIs, as data.

Canonical names are dotted paths after import aliases are resolved (`shlex.quote`,
`child_process.spawn`, `os/exec.Command`); Rust keeps its `::` paths (`std::process::Command::new`)
so that its crates never collide with Python modules of the same name (`shlex`).
Tables: quoting/serialising sanitizers, tokenizers, model-output sources (LLM clients and
their wrappers, decoders, action parsers: read from `catalogue/sources.toml`), tool-call
argument reads, and parameter names that hint at a command.
"""

from __future__ import annotations

import re

from boundary_audit.static import catalogue
from boundary_audit.static.programs import program_name

SHELL_QUOTE = "shell-quote"
"""Sanitizer kind: produces one shell word (safe at an unquoted interpolation point)."""
SERIALIZER = "serializer"
"""Sanitizer kind: JSON/YAML serializer (safe inside the format it produces, not for a shell)."""
LANG_QUOTE = "lang-quote"
"""Sanitizer kind: a programming-language string quote (`repr`, `strconv.Quote`, `{:?}`)."""
ENCODER = "encoder"
"""Sanitizer kind: an encoding whose output alphabet no shell parses (base64, hex): safe at
any interpolation point, like a shell quote."""
SHELL_SAFE = frozenset({SHELL_QUOTE, ENCODER})
"""Sanitizer kinds whose output is one inert shell word."""

SANITIZERS: dict[str, tuple[str, str]] = {
    # python
    "shlex.quote": ("shlex.quote", SHELL_QUOTE),
    "pipes.quote": ("pipes.quote", SHELL_QUOTE),
    "shlex.join": ("shlex.join", SHELL_QUOTE),
    "json.dumps": ("json.dumps", SERIALIZER),
    "yaml.dump": ("yaml.dump", SERIALIZER),
    "yaml.safe_dump": ("yaml.safe_dump", SERIALIZER),
    "repr": ("repr", LANG_QUOTE),
    # javascript / typescript
    "shell-quote.quote": ("shell-quote quote", SHELL_QUOTE),
    "shell-escape": ("shell-escape", SHELL_QUOTE),
    "shescape.quote": ("shescape quote", SHELL_QUOTE),
    "shescape.Shescape.quote": ("shescape quote", SHELL_QUOTE),
    "shell-escape-tag": ("shell-escape-tag", SHELL_QUOTE),
    "zx quote": ("zx quote", SHELL_QUOTE),
    "JSON.stringify": ("JSON.stringify", SERIALIZER),
    # rust
    "shell_escape::escape": ("shell_escape::escape", SHELL_QUOTE),
    "shell_escape::unix::escape": ("shell_escape::unix::escape", SHELL_QUOTE),
    "shlex::try_quote": ("shlex::try_quote", SHELL_QUOTE),
    "shlex::quote": ("shlex::quote", SHELL_QUOTE),
    "shlex::try_join": ("shlex::try_join", SHELL_QUOTE),
    "shell_words::quote": ("shell_words::quote", SHELL_QUOTE),
    "shell_words::join": ("shell_words::join", SHELL_QUOTE),
    "serde_json::to_string": ("serde_json::to_string", SERIALIZER),
    "serde_json::to_string_pretty": ("serde_json::to_string_pretty", SERIALIZER),
    "serde_json::to_vec": ("serde_json::to_vec", SERIALIZER),
    # go
    "strconv.Quote": ("strconv.Quote", LANG_QUOTE),
    "github.com/alessio/shellescape.Quote": ("shellescape.Quote", SHELL_QUOTE),
    "github.com/alessio/shellescape.QuoteCommand": ("shellescape.QuoteCommand", SHELL_QUOTE),
    "mvdan.cc/sh/v3/syntax.Quote": ("syntax.Quote", SHELL_QUOTE),
    "encoding/json.Marshal": ("json.Marshal", SERIALIZER),
    "encoding/json.MarshalIndent": ("json.Marshal", SERIALIZER),
    # encoders (every language): base64 and hex text holds no shell metacharacter
    "base64.b64encode": ("base64.b64encode", ENCODER),
    "base64.standard_b64encode": ("base64.standard_b64encode", ENCODER),
    "base64.urlsafe_b64encode": ("base64.urlsafe_b64encode", ENCODER),
    "binascii.hexlify": ("binascii.hexlify", ENCODER),
    "binascii.b2a_hex": ("binascii.b2a_hex", ENCODER),
    "btoa": ("btoa", ENCODER),
    "encoding/base64.StdEncoding.EncodeToString": ("base64.EncodeToString", ENCODER),
    "encoding/base64.URLEncoding.EncodeToString": ("base64.EncodeToString", ENCODER),
    "encoding/hex.EncodeToString": ("hex.EncodeToString", ENCODER),
    "base64::encode": ("base64::encode", ENCODER),
    "hex::encode": ("hex::encode", ENCODER),
}

ENCODING_METHODS: dict[str, frozenset[str]] = {
    "toString": frozenset({"base64", "base64url", "hex"})
}
"""Methods that encode their receiver when given one of these encodings as a literal
(`Buffer.from(content).toString("base64")`): sanitizers of kind ENCODER."""
ENCODED = " (encoded)"
"""Suffix of the sanitizer name of an encoding method's call (`ENCODING_METHODS`)."""

QUOTING_HELPER = " (quotes like shlex.quote)"
"""Suffix of the sanitizer name of a project's own quoting helper (`static/quoters.py`)."""

JOINERS = frozenset(
    {"shlex.join", "shlex::try_join", "shell_words::join", "shellescape.QuoteCommand"}
)
"""Sanitizers that quote each word of an argv into one command line (by display name). The
line's program is the argv's first word: quoting holds only where that word is a fixed
program that is not a shell (`shlex.join(["grep", pat])`); an argv whose program is not
fixed (`shlex.join(command)` of a caller's argv, `[shell, "-c", cmd]`) is a command chosen
by whoever chose the argv."""
"""Canonical callee → (display name, kind)."""

TOKENIZERS: dict[str, str] = {
    "shlex.split": "shlex.split",
    "shell-quote.parse": "shell-quote parse",
    "string-argv": "string-argv",
    "string-argv.parseArgsStringToArgv": "string-argv",
    "shell_words::split": "shell_words::split",
    "shlex::Shlex::new": "shlex::Shlex",
    "shlex::split": "shlex::split",
    "strings.Fields": "strings.Fields",
    "github.com/google/shlex.Split": "shlex.Split",
    "github.com/mattn/go-shellwords.Parse": "shellwords.Parse",
}
"""Canonical callee → tokenizer name (a string becomes argv words without a shell)."""

TOKENIZERS["<word-split>"] = "shell word splitting"
SANITIZERS["bash @Q"] = ("${x@Q}", SHELL_QUOTE)
SANITIZERS["printf %q"] = ("printf %q", SHELL_QUOTE)

SHELL_LLM_COMMANDS = frozenset(
    {
        "llm",
        "aichat",
        "sgpt",
        "ollama",
        "mods",
        "chatgpt",
        "gpt",
        "claude",
        "gemini",
        "codex",
        "openai",
        "tgpt",
        "shell-gpt",
    }
)
"""Command-line programs whose output is model text."""
LLM_API_URL = re.compile(
    r"api\.openai\.com|api\.anthropic\.com|generativelanguage\.googleapis|"
    r"/v1/chat/completions|/v1/messages|/v1/responses|/api/generate|/api/chat"
)
JQ_MODEL_FIELDS = re.compile(
    r"choices|\.content|tool_calls|\.arguments|output_text|\.completion|\.response"
)


def shell_source(name: str, literals: list[str]) -> str | None:
    """`llm-response` or `tool-call` if a shell command's output is model text, else None."""
    prog = program_name(name)
    if prog in SHELL_LLM_COMMANDS:
        return "llm-response"
    if prog in ("curl", "wget", "http", "xh") and any(LLM_API_URL.search(a) for a in literals):
        return "llm-response"
    if prog in ("jq", "yq") and any(JQ_MODEL_FIELDS.search(a) for a in literals):
        return (
            "tool-call"
            if any("arguments" in a or "tool_calls" in a for a in literals)
            else "llm-response"
        )
    return None


TOKENIZER_METHODS: dict[str, str] = {"split": "str.split", "split_whitespace": "split_whitespace"}
"""Methods on a string that split it into words (`cmd.split()`)."""


def _llm_tables() -> tuple[
    tuple[str, ...], dict[str, frozenset[str]], frozenset[str], frozenset[str], frozenset[str]
]:
    calls: list[str] = []
    clients: dict[str, frozenset[str]] = {}
    by_dialect: dict[str, list[str]] = {}
    receivers: set[str] = set()
    methods: set[str] = set()
    callables: set[str] = set()
    for e in catalogue.entries("sources", "llm"):
        calls.extend(catalogue.strings(e, "calls"))
        by_dialect.setdefault(str(e.get("lang", "")), []).extend(catalogue.strings(e, "calls"))
        for ctor in catalogue.strings(e, "constructors"):
            clients[ctor] = frozenset(catalogue.strings(e, "methods"))
    for e in catalogue.entries("sources", "llm_wrapper"):
        receivers.update(r.lower() for r in catalogue.strings(e, "receivers"))
        methods.update(catalogue.strings(e, "methods"))
        callables.update(catalogue.strings(e, "callables"))
    _CALLS_BY_DIALECT.update({d: tuple(dict.fromkeys(c)) for d, c in by_dialect.items()})
    return (
        tuple(dict.fromkeys(calls)),
        clients,
        frozenset(receivers),
        frozenset(methods),
        frozenset(callables),
    )


_CALLS_BY_DIALECT: dict[str, tuple[str, ...]] = {}
"""Each `[[llm]]` entry's `calls` under its own `lang`: a bare `complete` is Rust's
`CompletionModel::complete`, not any `x.complete()` of Python, TypeScript or Go."""

LLM_CALL_SUFFIXES, LLM_CLIENTS, LLM_RECEIVERS, LLM_WRAPPER_METHODS, LLM_CALLABLES = _llm_tables()
"""From `catalogue/sources.toml`: dotted-name suffixes of calls whose result is model output;
client constructors (canonical) and the methods that return a response on their clients; the
receiver names (last component, lower case), methods and plain callables of harness-side
wrappers around a client (`self.llm.inference(...)`, `await llm(convo)`)."""

TOOL_ARG_ATTRS = frozenset(
    {
        "arguments",
        "tool_calls",
        "tool_input",
        "function_call",
        "tool_call",
        "toolCalls",
        "tool_use",
        "input_json",
        "partial_json",
    }
)
"""Attribute (or key) reads that yield tool-call arguments."""
PERSON_INPUTS = frozenset({"input", "argv", "cli", "program"})
"""Receivers whose `arguments` a person or a command line gives (a slash command's
`input.arguments`, commander's `program.arguments`), not a model's tool call."""
TOOL_INPUT_ATTRS = frozenset({"input", "args", "params", "parameters"})
TOOL_RECEIVER = re.compile(r"(tool|block|call|function|fc|use|invocation)", re.I)
"""`.input`/`.args` count as tool-call arguments only on receivers named like a tool call."""

_ATTR_ALIASES = {
    "toolcalls": "tool_calls",
    "toolinput": "tool_input",
    "functioncall": "function_call",
    "tooluse": "tool_use",
    "tool_calls": "tool_calls",
    "bashcommand": "bash_command",
    "codeblocks": "code_blocks",
}


def normal_attr(name: str) -> str:
    """An attribute or key in snake case (`Arguments` → `arguments`, `toolCalls` → `tool_calls`)."""
    low = name.lower()
    return _ATTR_ALIASES.get(low.replace("_", ""), low)


ACTION_ATTRS = frozenset({"action", "keystrokes", "actions", "code_blocks", "bash_command"})
"""Attribute reads that yield a parsed action or keystrokes."""

ACTION_PARSERS = frozenset(
    name for e in catalogue.entries("sources", "parser") for name in catalogue.strings(e, "calls")
)
"""Functions that pull an action or a code block out of a model reply."""

REGEX_CALLS = frozenset(
    {
        "findall",
        "search",
        "match",
        "finditer",
        "fullmatch",
        "exec",
        "matchAll",
        "FindStringSubmatch",
        "FindAllStringSubmatch",
        "captures",
        "find_iter",
    }
)
"""Regex calls; a fenced-code pattern (```) among their arguments marks a parsed code block."""


COMMAND_NAME = re.compile(
    r"^(?:.*_)?(cmd|cmds|command|commands|cmdline|cmdstr|code|script|action|keystrokes|keys)"
    r"(?:_.*)?$|^(?:.*[a-z])?(Cmd|Command|Commands|Script|Keystrokes)(?:[A-Z].*)?$",
)
"""Names that hint at a command (name-only evidence when no caller is traced)."""

TOOL_PARAM = re.compile(
    r"^_?(tool_?(input|args|arguments|params|call)|arguments|function_?args|call_?args)$", re.I
)
"""Parameter names that hint at decoded tool-call arguments."""


def is_tool_param(name: str) -> bool:
    """True if a parameter name hints at tool-call arguments."""
    return bool(TOOL_PARAM.match(name))


def is_command_name(name: str) -> bool:
    """True if a parameter or variable name hints at a command."""
    return bool(COMMAND_NAME.match(name))


_SUFFIX_BY_LAST: dict[str, dict[str, tuple[str, ...]]] = {}
for _dialect, _calls in _CALLS_BY_DIALECT.items():
    _table = _SUFFIX_BY_LAST.setdefault(_dialect, {})
    for _s in _calls:
        _last = _s.rsplit(".", 1)[-1]
        _table[_last] = (*_table.get(_last, ()), _s)


def llm_call(name: str, dialect: str) -> bool:
    """True if a dotted callee name is an LLM client call of `dialect` (a `queries/` dialect:
    python, javascript, go, rust), or a harness wrapper's."""
    suffixes = _SUFFIX_BY_LAST.get(dialect, {}).get(name.rsplit(".", 1)[-1], ())
    if any(name == s or name.endswith("." + s) for s in suffixes):
        return True
    receiver, _, method = name.rpartition(".")
    if not receiver:
        return method in LLM_CALLABLES
    last = receiver.rsplit(".", 1)[-1].lower()
    return method in LLM_WRAPPER_METHODS and last in LLM_RECEIVERS


DECODERS = frozenset(
    name for e in catalogue.entries("sources", "decoder") for name in catalogue.strings(e, "calls")
)
"""Decoders of tool-call arguments (`json.loads`, `Model.model_validate_json`, `JSON.parse`):
canonical names, or a method's name; the result is the decoded first argument."""
