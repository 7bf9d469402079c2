"""Classification: from the value that reaches a sink to one of the nine boundary classes.

Each sink kind starts from a class (a shell string is `shell-string`, a write into a
persistent shell is `shell-session`, a string handed to ssh is `remote-string`...), then
the value's shape refines it: an argv whose head is `bash -c` carries a shell string, `ssh`
makes the rest remote, `tmux send-keys` makes keystrokes, a tokenizer makes `argv-direct`,
a file written with model output and run by an interpreter makes `script-file`, and a hole
that a second parser reads (`bash -c "{R}"`, `ssh h '{R}'`) without a shell quote at the
interpolation point makes `nested-string`. A result is `fixed` when the command is constant
or a literal program whose model-free arguments are data: not a model boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from boundary_audit.static import knowledge as K
from boundary_audit.static import programs as P
from boundary_audit.static.checks import record_of
from boundary_audit.static.handles import join_list
from boundary_audit.static.shellsyntax import shell_holes
from boundary_audit.static.values import (
    EMPTY,
    UNKNOWN,
    AValue,
    Hole,
    Lst,
    Obj,
    Prov,
    Ser,
    Str,
    Text,
    Tok,
    as_str,
    join_all,
    options,
    prov_of,
)
from boundary_audit.taxonomy import BoundaryClass as BC

FAMILY_CLASS = {"shell": BC.SHELL_STRING, "remote": BC.REMOTE_STRING, "tty": BC.TTY_KEYSTROKES}


@dataclass(frozen=True)
class Verdict:
    """The class of one sink, with what supports it."""

    boundary_class: BC
    parse_layers: int
    prov: Prov
    detail: str = ""
    sanitizer: str | None = None
    fixed: bool = False
    wrap: Text | None = None
    """The literal that launches the second parser (nested-string)."""
    write: object | None = None
    """The file write a script-file verdict depends on (a `WriteSite`)."""
    notes: tuple[str, ...] = field(default=())
    route: BC | None = None
    """The class whose mechanics replay this sink, when the reported class is the taxonomy's
    name for where the boundary is rather than how R is parsed there: an argv given to a
    container or sandbox exec API is `remote-string` (parsed as `argv-direct` inside it), R
    spliced inside the quotes of a command string is `nested-string` (parsed by the string's
    own shell). None: the reported class is also the mechanics."""

    @property
    def mechanics(self) -> BC:
        """The class that says how R is parsed: what routes, fixes and severity follow."""
        return self.route or self.boundary_class

    @property
    def rank(self) -> tuple[int, int, int, int, int]:
        """Ordering of verdicts for one sink: model-controlled, not fixed, severity of class."""
        return (
            int(self.prov.traced),
            int(self.prov.model),
            int(bool(self.prov.origins)),
            int(not self.fixed),
            record_of(self.mechanics).rank,
        )


ScriptMatch = Callable[[AValue], "tuple[object, Prov] | None"]
"""Returns (write site, content provenance) if this argv element names a written file."""


@dataclass(frozen=True)
class Context:
    """What classification needs from the file: written files and the second-parser gate."""

    script: ScriptMatch
    gate: Callable[[Text | None], bool]
    """True if a launching literal was matched by the nested-shell-string query."""


NO_CONTEXT = Context(lambda _v: None, lambda _t: True)


def best(verdicts: list[Verdict]) -> Verdict | None:
    """The verdict that matters most among alternatives."""
    return max(verdicts, key=lambda v: v.rank) if verdicts else None


def shell_string(value: AValue, base: BC, ctx: Context = NO_CONTEXT) -> Verdict:
    """A string that a shell parses: `base` class, or nested/inner class per its holes."""
    s = as_str(value)
    base_layers = base.parse_layers
    every = shell_holes(s)
    holes = [
        h if h.inner is None or ctx.gate(h.inner.text) else replace(h, inner=None)
        for h in every
        if not h.hole.prov.constant
    ]
    if not holes:
        return Verdict(base, base_layers, configured(h.hole.prov for h in every), fixed=True)
    for h in holes:
        if h.inner is None:
            continue
        sane = _shell_safe(h.hole) and h.quote == "none"
        if not sane:
            return Verdict(
                BC.NESTED_STRING,
                base_layers + 1,
                h.hole.prov,
                h.inner.parser,
                h.hole.sanitizer,
                wrap=h.inner.text,
                notes=(f"inside {h.quote} quotes" if h.quote != "none" else "unquoted",),
            )
    inner = [h for h in holes if h.inner is not None]
    if inner:
        h = inner[0]
        assert h.inner is not None
        cls = FAMILY_CLASS[h.inner.family]
        if cls == BC.SHELL_STRING and base == BC.REMOTE_STRING:
            cls = BC.REMOTE_STRING
        return Verdict(
            cls, base_layers, join_all(x.hole.prov for x in inner), h.inner.parser, h.hole.sanitizer
        )
    raw = [h for h in holes if not _shell_safe(h.hole)]
    # the model controls the command only through the holes no shell quoting guards: a quoted
    # value of the model beside a hole of unknown origin is that hole's boundary, not the model's
    prov = join_all(h.hole.prov for h in (raw or holes))
    sanitizers = {h.hole.sanitizer for h in holes}
    sanitizer = sanitizers.pop() if len(sanitizers) == 1 else None
    data_only = all(
        _shell_safe(h.hole) and h.quote == "none" for h in holes
    ) and not _starts_with_hole(s)
    # the holes that carry the model's value decide; the others only when none does
    deciding = [h for h in holes if h.hole.prov.origins] or holes
    quoted = [h for h in deciding if h.quote != "none" and not _shell_safe(h.hole)]
    if quoted and all(h.quote != "none" for h in deciding):
        # R only inside the string's own quotes (`rg '{q}'`): nested-string by the taxonomy
        # (`"ssh h '" + R + "'"`), parsed by this one shell, so its route stays the base's
        quote = quoted[0].quote
        return Verdict(
            BC.NESTED_STRING,
            base_layers,
            prov,
            f"inside {quote} quotes of the command",
            sanitizer,
            route=base,
        )
    return Verdict(base, base_layers, prov, sanitizer=sanitizer, fixed=data_only)


def configured(provs: Iterable[Prov]) -> Prov:
    """The non-model inputs of constant parts (`Prov.configured`), without their variables
    and steps: what a fixed verdict names as configured."""
    found = frozenset(i for p in provs if p.constant for i in p.inputs)
    return Prov(inputs=found) if found else EMPTY


def _shell_safe(hole: Hole) -> bool:
    if hole.sanitizer is not None and hole.sanitizer.endswith((K.QUOTING_HELPER, K.ENCODED)):
        return True
    entry = next((v for v in K.SANITIZERS.values() if v[0] == hole.sanitizer), None)
    return entry is not None and entry[1] in K.SHELL_SAFE


def _starts_with_hole(s: Str) -> bool:
    for p in s.pieces:
        if isinstance(p, Text):
            if p.text.strip():
                return False
            continue
        return True
    return False


def literal(value: AValue) -> str | None:
    """The literal text of a fully constant string value."""
    return value.literal() if isinstance(value, Str) else None


def argv(value: AValue, remote: bool, ctx: Context = NO_CONTEXT) -> Verdict:
    """An argv spawned without a shell (locally, or inside a container when `remote`).

    Inside a container or sandbox an argv that no shell parses is reported `remote-string`
    (the taxonomy's class of every container and sandbox exec API), replayed as `argv-direct`.
    """
    v = _argv(value, remote, ctx)
    if remote and v.boundary_class == BC.ARGV_DIRECT:
        return replace(v, boundary_class=BC.REMOTE_STRING, route=BC.ARGV_DIRECT)
    return v


def _argv(value: AValue, remote: bool, ctx: Context) -> Verdict:
    if isinstance(value, Tok):
        script = script_words(value, remote, ctx)
        if script is not None:
            return script
        prov = prov_of(value.source)
        return Verdict(BC.ARGV_DIRECT, 0, prov, f"{value.tokenizer} then exec", fixed=prov.constant)
    if not isinstance(value, Lst):
        prov = prov_of(value)
        if isinstance(value, Str) and prov.constant:
            return Verdict(BC.ARGV_DIRECT, 0, configured([prov]), "constant program", fixed=True)
        return Verdict(BC.ARGV_DIRECT, 0, prov, "argv from a value", fixed=prov.constant)
    items = list(value.items)
    words = [literal(i) for i in items]
    i = _skip_wrappers(words)
    if i >= len(items):
        return Verdict(BC.ARGV_DIRECT, 0, value.rest or EMPTY, "argv", fixed=not value.rest)
    head = words[i]
    prog = P.program_name(head) if head is not None else None
    if head is None and i + 1 < len(items) and _login_flag(items[i + 1]):
        prog = "<shell>"
    rest_items, rest_words = items[i + 1 :], words[i + 1 :]
    chosen = head is None and prog is None and _c_flag(rest_words)
    if chosen:
        prog = _shell_choice(items[i])
    base_remote = BC.REMOTE_STRING if remote else BC.SHELL_STRING
    if prog in P.SHELLS or prog == "<shell>":
        if prog == "<shell>":
            rest_words = ["-c", *rest_words[1:]]
        for j, w in enumerate(rest_words):
            if w is None or (chosen and not _SHORT_C.fullmatch(w)):
                continue
            if w.startswith("-") and not w.startswith("--") and "c" in w[1:]:
                if j + 1 < len(rest_items):
                    forwarded = _runs_positionals(rest_words[j + 1], rest_items[j + 2 :], value)
                    if forwarded is not None:
                        v = argv(forwarded, remote, ctx)
                        return replace(v, detail=f"{prog} {w} '… exec \"$@\"' {v.detail}".strip())
                    v = shell_string(rest_items[j + 1], base_remote, ctx)
                    return replace(v, detail=v.detail or f"{prog} {w}")
                return Verdict(
                    base_remote, 1, value.rest or EMPTY, f"{prog} {w}", fixed=not value.rest
                )
    if prog == "eval":
        return shell_string(join_list(Lst(tuple(rest_items), value.rest), " "), base_remote, ctx)
    if prog == "ssh":
        return _ssh(rest_items, rest_words, value, ctx)
    if prog in ("docker", "podman", "kubectl") and rest_words[:1] == ["exec"]:
        sub = _container_command(prog, rest_items, rest_words)
        if sub is not None:
            v = argv(sub, True, ctx)
            return replace(v, detail=f"{prog} exec … {v.detail}".strip())
    if prog == "tmux" and rest_words[:1] and rest_words[0] in ("send-keys", "send"):
        return _tmux_keys(rest_items[1:], rest_words[1:], value.rest)
    if (
        prog == "tmux"
        and rest_words[:1]
        and rest_words[0] in ("new-session", "new-window", "split-window", "respawn-pane")
    ):
        tail = [
            x for x, w in zip(rest_items[1:], rest_words[1:]) if w is None or not w.startswith("-")
        ]
        if tail and not prov_of(tail[-1]).constant:
            v = shell_string(tail[-1], BC.SHELL_STRING, ctx)
            return replace(v, detail=v.detail or f"tmux {rest_words[0]}")
    bridge = _argv_bridge(
        prog or _program_choice(items[i], P.INTERPRETERS), rest_items, rest_words, value
    )
    if bridge is not None:
        interp, forwarded = bridge
        v = argv(forwarded, remote, ctx)
        return replace(v, detail=f"{interp} -c '<runs its arguments>' {v.detail}".strip())
    written = _script_target(prog, items[i], rest_items, rest_words, ctx.script)
    if written is not None:
        site, content = written
        name = head or "interpreter"
        return Verdict(
            BC.SCRIPT_FILE, 1, content, f"{name} <file>", write=site, fixed=content.constant
        )
    head_prov = prov_of(items[i])
    if head is None and not head_prov.constant:
        return Verdict(
            BC.ARGV_DIRECT, 0, head_prov.join(value.rest or EMPTY), "program chosen by the value"
        )
    code_at = P.code_argument(prog or "", rest_words) if prog in P.INTERPRETERS else None
    if code_at is not None and code_at < len(rest_items):
        code = prov_of(rest_items[code_at])
        if not code.constant:
            # `python3 -c CODE`: the value is a program for the interpreter, not data
            cls = BC.REMOTE_STRING if remote else BC.SCRIPT_FILE
            flag = rest_words[code_at - 1] if code_at else "-c"
            return Verdict(cls, 1, code, f"{head} {flag} <code>")
    data = join_all([*(prov_of(x) for x in rest_items), value.rest or EMPTY])
    if head is None and head_prov.configured and not data.constant:
        # A configured program (`process.env.PYTHON ?? "python3"`) whose arguments are not
        # constant: reported as before inputs were known, a program chosen by a value of
        # unknown role (its arguments may be a command for it); the program is the user's.
        prov = configured([head_prov]).join(value.rest or EMPTY).join(UNKNOWN)
        return Verdict(BC.ARGV_DIRECT, 0, prov, "configured program, arguments not constant")
    if (
        value.rest is not None
        and not value.rest.constant
        and i == len(items) - 1
        and not rest_items
    ):
        return Verdict(BC.ARGV_DIRECT, 0, value.rest, f"{head} + argv from a value")
    return Verdict(BC.ARGV_DIRECT, 0, data, f"{head or '?'} with fixed program", fixed=True)


_SHORT_C = re.compile(r"-[a-z]{0,3}c[a-z]{0,3}")


_RUNS_ALL = re.compile(r'(?:^|[;&|\n(]|\bexec|\bcommand|\bnohup)\s*"\$@"')
_SHIFT = re.compile(r"(?:^|[;&|\n]|&&)\s*shift(?:\s+(\d+))?\s*(?=$|[;&|\n])")


def _runs_positionals(script: str | None, after: list[AValue], whole: Lst) -> Lst | None:
    """The argv a fixed `sh -c SCRIPT $0 ARGS...` runs when SCRIPT executes its positional
    parameters (`exec "$@"`, after `shift N`): ARGS without the shifted ones. None when the
    script is not literal or does not run `"$@"` as a command."""
    if script is None or not after or not _RUNS_ALL.search(script):
        return None
    shifted = sum(int(m.group(1) or 1) for m in _SHIFT.finditer(script))
    return Lst(tuple(after[1 + shifted :]), whole.rest, whole.path, whole.span)


def _argv_bridge(
    prog: str | None, items: list[AValue], words: list[str | None], whole: Lst
) -> tuple[str, Lst] | None:
    """`python3 -c BRIDGE PROG ARGS...` whose constant code runs its arguments as an argv
    (`programs.ARGV_BRIDGES`): the interpreter and the argv it runs (PROG ARGS...)."""
    if prog is None or prog not in P.INTERPRETERS:
        return None
    at = P.code_argument(prog, words)
    if at is None or at >= len(items):
        return None
    code = literal(items[at])
    if code is None or not P.runs_its_arguments(prog, code) or at + 1 >= len(items):
        return None
    return prog, Lst(tuple(items[at + 1 :]), whole.rest, whole.path, whole.span)


def _c_flag(words: list[str | None]) -> bool:
    """True if a word is a short shell flag that contains `c` (`-c`, `-lc`, `-ic`, `-ec`;
    not PowerShell's `-ExecutionPolicy`)."""
    return any(w is not None and _SHORT_C.fullmatch(w) for w in words)


def _shell_choice(value: AValue) -> str | None:
    """The shell a computed program falls back to: `process.env.SHELL || "/bin/bash"`,
    `os.environ.get("SHELL", "/bin/sh")`, a config value or `"zsh"` (the first literal
    alternative that is a shell; None if no alternative is one)."""
    return _program_choice(value, P.SHELLS)


def _program_choice(value: AValue, among: frozenset[str]) -> str | None:
    """The program name of the first literal alternative of `value` that is one of `among`."""
    for o in options(value):
        text = literal(o)
        if text is not None and P.program_name(text) in among:
            return P.program_name(text)
    return None


def _login_flag(value: AValue) -> bool:
    """True if `value` is (a choice of) shell flags ending in `c` with at least one like `-lc`.

    NOTE(h2): `[shell_path, "-lc", cmd]` with a computed shell path is how Codex builds its
    argv; a plain `-c` after an unknown program is not enough (`[cc, "-c", file]`).
    """
    texts = [literal(o) for o in options(value)]
    if not texts or any(t is None for t in texts):
        return False
    flags = [t for t in texts if t is not None]
    shaped = all(f.startswith("-") and not f.startswith("--") and f.endswith("c") for f in flags)
    return shaped and any(len(f) > 2 for f in flags)


def _skip_wrappers(words: list[str | None]) -> int:
    return P.skip_wrappers(words)


def _ssh(items: list[AValue], words: list[str | None], whole: Lst, ctx: Context) -> Verdict:
    j = 0
    while j < len(words) and words[j] is not None and (words[j] or "").startswith("-"):
        flag = words[j] or ""
        j += 2 if len(flag) == 2 and flag[1] in "bcDEeFIiJLlmOopQRSWw" else 1
    command = items[j + 1 :]
    if not command:
        rest = whole.rest or EMPTY
        return Verdict(BC.REMOTE_STRING, 1, rest, "ssh", fixed=rest.constant)
    joined = (
        command[0]
        if len(command) == 1 and whole.rest is None
        else join_list(Lst(tuple(command), whole.rest), " ")
    )
    v = shell_string(joined, BC.REMOTE_STRING, ctx)
    notes = v.notes + ("ssh joins its arguments with spaces for the remote shell",)
    return replace(
        v, detail=v.detail if v.boundary_class == BC.NESTED_STRING else "ssh", notes=notes
    )


def _container_command(prog: str, items: list[AValue], words: list[str | None]) -> Lst | None:
    if prog == "kubectl":
        dash = next((j for j, w in enumerate(words) if w == "--"), None)
        return Lst(tuple(items[dash + 1 :])) if dash is not None else None
    j = 1
    while j < len(words) and words[j] is not None and (words[j] or "").startswith("-"):
        j += 2 if words[j] in ("-e", "--env", "-u", "--user", "-w", "--workdir") else 1
    return Lst(tuple(items[j + 1 :])) if j + 1 < len(items) else None


def _tmux_keys(items: list[AValue], words: list[str | None], rest: Prov | None) -> Verdict:
    j = 0
    literal_flag = False
    while j < len(words) and words[j] is not None and (words[j] or "").startswith("-"):
        flag = words[j] or ""
        literal_flag = literal_flag or "l" in flag[1:]
        j += 2 if flag in ("-t", "-N", "-c") else 1
    keys = items[j:]
    prov = join_all(prov_of(k) for k in keys).join(rest or EMPTY)
    detail = "tmux send-keys -l" if literal_flag else "tmux send-keys"
    return Verdict(BC.TTY_KEYSTROKES, 1, prov, detail, fixed=prov.constant)


def _script_target(
    prog: str | None,
    head: AValue,
    items: list[AValue],
    words: list[str | None],
    script: ScriptMatch,
) -> tuple[object, Prov] | None:
    """The file write that the program file of an interpreter's argv names.

    For a known interpreter that is its first positional argument, unless a flag makes it
    run code or a module instead (`python -c`, `node -e`, `python -m`: `programs.script_position`).
    A program whose name is not known (`[interpreter, path]`) may run any written file it is
    given, or be the written file itself.
    """
    if prog is None:
        candidates = items or [head]
    elif prog in P.INTERPRETERS:
        pos = P.script_position(prog, words)
        candidates = items[pos : pos + 1] if pos is not None else []
    else:
        return None
    for item in candidates:
        found = script(item)
        if found is not None:
            return found
    return None


def split_words(value: AValue) -> Lst | None:
    """A command string as the argv a tokenizer makes of it (`shlex.split("python {p}")`), when
    its literal text has no quotes or escapes; each hole stays inside the word it touches.
    None when the split cannot be known."""
    if not isinstance(value, Str):
        return None
    words: list[AValue] = []
    cur: list[Text | Hole] = []
    for piece in value.pieces:
        if isinstance(piece, Hole):
            cur.append(piece)
            continue
        if any(c in piece.text for c in "'\"\\$`"):
            return None
        parts = re.split(r"(\s+)", piece.text)
        for part in parts:
            if not part:
                continue
            if part.isspace():
                if cur:
                    words.append(Str(tuple(cur)))
                    cur = []
                continue
            cur.append(Text(part, piece.path, piece.span))
    if cur:
        words.append(Str(tuple(cur)))
    return Lst(tuple(words)) if words else None


def script_words(value: AValue, remote: bool, ctx: Context) -> Verdict | None:
    """A script-file verdict if a command string or its tokens (`shlex.split(s)`, a docker
    SDK string) name an interpreter and a file written in this file; None otherwise."""
    verdicts = []
    for o in options(value.source if isinstance(value, Tok) else value):
        lst = split_words(o)
        if lst is None:
            continue
        v = argv(lst, remote, ctx)
        if v.boundary_class == BC.SCRIPT_FILE:
            tokenizer = value.tokenizer if isinstance(value, Tok) else "split"
            verdicts.append(replace(v, detail=f"{tokenizer}: {v.detail}"))
    return best(verdicts)


def process(obj: Obj, ctx: Context = NO_CONTEXT) -> Verdict:
    """A spawned process or command builder: shell string or argv."""
    if obj.argv is None:
        return Verdict(BC.ARGV_DIRECT, 0, EMPTY, obj.api, fixed=True)
    results = []
    for o in options(obj.argv):
        if obj.shell:
            results.append(shell_string(o, BC.SHELL_STRING, ctx))
        else:
            results.append(argv(o, False, ctx))
    return best(results) or Verdict(BC.ARGV_DIRECT, 0, EMPTY, obj.api, fixed=True)


def receiver_shell(receiver: AValue) -> tuple[bool | None, Obj | None]:
    """Whether a stdin/pty receiver is a shell (None: not resolved) and the handle found."""
    for o in options(receiver):
        if isinstance(o, Obj) and o.kind in ("process", "stdin", "command"):
            argv_value = o.argv
            words: list[str | None] = []
            if o.shell:
                text = literal(argv_value) if argv_value is not None else None
                if text is None:
                    return False, o
                argv_value = Str((Text(text),))
            for a in options(argv_value) if argv_value is not None else ():
                if isinstance(a, Lst):
                    words = [literal(i) for i in a.items]
                elif isinstance(a, (Str, Tok)):
                    text = literal(a.source if isinstance(a, Tok) else a)
                    words = list(text.split()) if text else [None]
            i = _skip_wrappers(words)
            if i < len(words) and words[i] is not None:
                prog = P.program_name(words[i] or "")
                has_c = any(
                    w and w.startswith("-") and "c" in w[1:] and not w.startswith("--")
                    for w in words[i + 1 :]
                )
                return (prog in P.SHELLS and not has_c), o
            return None, o
    return None, None


def kernel_input(value: AValue, ctx: Context = NO_CONTEXT) -> Verdict:
    """Code run by a Jupyter-style kernel: a persistent session, unless a cell prefix hands
    the text to a shell (`!cmd` is parsed again by a shell, `%%bash` feeds it to bash)."""
    verdicts = []
    for o in options(value):
        s = as_str(o)
        head = s.pieces[0] if s.pieces else None
        text = head.text.lstrip() if isinstance(head, Text) else ""
        prefix = next((p for p in P.KERNEL_PREFIXES if text.startswith(p)), None)
        if prefix is None or prov_of(o).constant:
            verdicts.append(written_value(o, BC.SHELL_SESSION, ctx))
            continue
        cls, layers, detail = P.KERNEL_PREFIXES[prefix]
        verdicts.append(Verdict(BC(cls), layers, prov_of(o), detail))
    return best(verdicts) or written_value(value, BC.SHELL_SESSION, ctx)


def written_value(value: AValue, base: BC, ctx: Context = NO_CONTEXT) -> Verdict:
    """Text written into a shell (stdin, session, pty, tmux): serialized or a shell string."""
    for o in options(value):
        if isinstance(o, Ser):
            return Verdict(BC.SERIALIZED, 0, o.prov, "serialized before writing", o.serializer)
    # each alternative on its own (a helper's callers): joined, their holes would be one
    # opaque hole, unquoted and unsanitized whatever each caller wrote
    return max((shell_string(o, base, ctx) for o in options(value)), key=lambda v: v.rank)
