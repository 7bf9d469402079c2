"""What the classifier knows about programs in an argv: shells, interpreters, wrappers.

`skip_wrappers` finds the real program behind `sudo -u x`, `env A=1`, `timeout 60`, `nice`,
`nohup`...; `program_name` normalises `/usr/bin/python3.11` to `python3`. Also the calls
whose results cannot carry model text (ids, clocks, hashes) and attribute reads that name a
fixed program of the running system (`sys.executable`).
"""

from __future__ import annotations

import re

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox"})


INTERPRETER_FLAGS: dict[str, tuple[str, str]] = {
    "python": ("c m", "W X Q"),
    "python3": ("c m", "W X Q"),
    "python2": ("c m", "W X Q"),
    "pypy": ("c m", "W X"),
    "pypy3": ("c m", "W X"),
    "node": ("e p -eval -print", "r -require -import -loader -experimental-loader"),
    "nodejs": ("e p -eval -print", "r -require -import -loader"),
    "deno": ("eval", ""),
    "bun": ("e p -eval -print", "r -preload"),
    "ruby": ("e", "I r C"),
    "perl": ("e E M", "I"),
    "php": ("r B R E", "d c"),
    "pwsh": (
        "c Command -Command EncodedCommand -EncodedCommand e",
        "ExecutionPolicy -ExecutionPolicy",
    ),
    "powershell": (
        "c Command -Command EncodedCommand -EncodedCommand e",
        "ExecutionPolicy -ExecutionPolicy",
    ),
    "Rscript": ("e", ""),
    "lua": ("e l", ""),
    "luajit": ("e l", ""),
    "tclsh": ("", ""),
    "bash": ("c", "o O"),
    "sh": ("c", "o"),
    "zsh": ("c", "o"),
    "dash": ("c", "o"),
    "ksh": ("c", "o"),
    "fish": ("c -command", ""),
    "julia": ("e E -eval", ""),
    "go": ("", ""),
    "ts-node": ("e p -eval -print", "r -require"),
    "tsx": ("e p -eval -print", ""),
    "java": ("", "cp classpath -cp -classpath -class-path p -module-path"),
    "groovy": ("e", "cp classpath"),
    "scala": ("e", "cp classpath"),
    "elixir": ("e", "r"),
    "swift": ("e", ""),
    "osascript": ("e", "l"),
}
"""Interpreters that run a program file named by their first positional argument (`python f.py`,
`node f.js`, `java F.java`, `Rscript f.R`): (flags after which the next word is code or a
module, not a file; flags that take a value), each a space-separated list of option names
without their first dash (`c` is `-c`, `-eval` is `--eval`). `go` runs a file with `go run`."""

INTERPRETERS = frozenset(INTERPRETER_FLAGS)


CODE_FLAGS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("python", "python2", "python3", "pypy", "pypy3"), frozenset({"-c"})),
    **dict.fromkeys(("node", "nodejs", "bun"), frozenset({"-e", "-p", "--eval", "--print"})),
    "deno": frozenset({"eval"}),
    "ruby": frozenset({"-e"}),
    "perl": frozenset({"-e", "-E"}),
    "php": frozenset({"-r"}),
    **dict.fromkeys(
        ("pwsh", "powershell"),
        frozenset({"-c", "-Command", "-command", "-EncodedCommand", "-e"}),
    ),
    "Rscript": frozenset({"-e"}),
    **dict.fromkeys(("lua", "luajit"), frozenset({"-e"})),
}
"""Per interpreter, the flags whose next argument is code it runs (`python3 -c CODE`)."""


ARGV_BRIDGES: dict[str, tuple[re.Pattern[str], ...]] = {
    **dict.fromkeys(
        ("python", "python2", "python3", "pypy", "pypy3"),
        (
            re.compile(r"\bsys\.argv\[1"),
            re.compile(r"\b(?:os\.exec[lv]p?e?|os\.spawn[lv]p?e?|pty\.spawn|subprocess\.\w+)\s*\("),
        ),
    ),
    **dict.fromkeys(
        ("node", "nodejs", "bun"),
        (
            re.compile(r"\bprocess\.argv\.slice\(|\bprocess\.argv\[[12]\]"),
            re.compile(r"\b(?:spawn|spawnSync|execFile|execFileSync)\s*\("),
        ),
    ),
}
"""Constant interpreter code that runs its own arguments as an argv (a PTY or privilege
bridge: `python3 -c "…os.execvpe(sys.argv[1], sys.argv[1:])…" PROG ARGS`): every pattern
of the interpreter's entry is found in the code. The arguments after the code are then the
argv that runs, like `sh -c 'exec "$@"' $0 ARGS`."""


def runs_its_arguments(prog: str, code: str) -> bool:
    """True if constant code `code` for interpreter `prog` runs its arguments (`ARGV_BRIDGES`)."""
    patterns = ARGV_BRIDGES.get(program_name(prog))
    return bool(patterns) and all(p.search(code) for p in patterns or ())


def code_argument(prog: str, words: list[str | None]) -> int | None:
    """Index in `words` (the arguments after interpreter `prog`) of the code a flag makes it
    run (`-c CODE`, `-e CODE`, `deno eval CODE`); None when there is none."""
    flags = CODE_FLAGS.get(program_name(prog))
    if not flags:
        return None
    for j, w in enumerate(words):
        if w in flags:
            return j + 1
        if w is None or not w.startswith("-"):
            return None
    return None


def script_position(prog: str, words: list[str | None]) -> int | None:
    """Index in `words` (the arguments after interpreter `prog`) of the program file it runs;
    None when a flag makes it run code or a module instead (`-c`, `-e`, `-m`, `--eval`) or
    no positional word is left. Unknown words (None) count as positional."""
    code, valued = (set(t.split()) for t in INTERPRETER_FLAGS.get(prog, ("", "")))
    j = 0
    if prog == "go":
        if not words or words[0] != "run":
            return None
        j = 1
    while j < len(words):
        w = words[j]
        if w is None or not w.startswith("-") or w == "-":
            return j
        if w == "--":
            return j + 1 if j + 1 < len(words) else None
        name = w[1:].split("=", 1)[0]
        if name in code or (len(name) <= 3 and name.isalpha() and name[-1] in code):
            return None
        j += 2 if name in valued and "=" not in w else 1
    return None


WRAPPERS = {
    "timeout": 1,
    "nice": 0,
    "nohup": 0,
    "stdbuf": 0,
    "exec": 0,
    "command": 0,
    "sudo": 0,
    "doas": 0,
    "time": 0,
    "setsid": 0,
    "unbuffer": 0,
    "script": 0,
    "env": 0,
    "ionice": 0,
    "chroot": 1,
    "flock": 1,
    "xvfb-run": 0,
    "firejail": 0,
}
"""Programs that run the rest of argv; the number is how many positional arguments they take."""


WRAPPER_ARG_OPTS = {
    "sudo": "ugCDhprtU",
    "doas": "uC",
    "timeout": "sk",
    "nice": "n",
    "env": "uCS",
    "ionice": "cnp",
    "flock": "wE",
    "stdbuf": "ioe",
}
"""Single-letter options of those wrappers that take a value (`sudo -u user`)."""


def skip_wrappers(words: list[str | None]) -> int:
    """Index of the real program in an argv that may start with wrappers and env assignments."""
    i = 0
    while (
        i < len(words)
        and words[i] is not None
        and "=" in (words[i] or "")
        and not (words[i] or "").startswith("-")
    ):
        i += 1
    while i < len(words) and words[i] is not None:
        prog = program_name(words[i] or "")
        if prog not in WRAPPERS:
            break
        i += 1
        takes = WRAPPER_ARG_OPTS.get(prog, "")
        while i < len(words) and words[i] is not None and (words[i] or "").startswith("-"):
            flag = words[i] or ""
            i += 2 if len(flag) == 2 and flag[1] in takes else 1
        i += WRAPPERS[prog]
        while prog == "env" and i < len(words) and "=" in (words[i] or ""):
            i += 1
    return i


INERT_CALLS = (
    "uuid.",
    "secrets.token_",
    "time.",
    "os.getpid",
    "random.",
    "datetime.",
    "len",
    "crypto.randomUUID",
    "randomUUID",
    "Date.now",
    "uuid::Uuid::new_v4",
    "Uuid::new_v4",
    "uuid.New",
    "rand.",
    "process.pid",
    "os.Getpid",
    "hash",
    "hashlib.",
    "id",
    "int",
    "float",
)
"""Callee-name prefixes whose results cannot carry model text (ids, times, counts, hashes)."""


_INERT_EXACT = frozenset(p for p in INERT_CALLS if not p.endswith((".", "_")))
_INERT_PREFIXES = tuple(p for p in INERT_CALLS if p.endswith((".", "_")))


def inert_call(name: str) -> bool:
    """True if the call's result is computed data that cannot carry a command."""
    return name in _INERT_EXACT or name.startswith(_INERT_PREFIXES)


CONSTANT_ATTRS: dict[str, str] = {
    "sys.executable": "python3",
    "os.devnull": "/dev/null",
    "process.execPath": "node",
    "process.argv0": "node",
}
"""Attribute reads whose value is a fixed program or path of the running system."""


def program_name(text: str) -> str:
    """`/usr/bin/bash` → `bash`; `python3.11` → `python3`."""
    base = text.rsplit("/", 1)[-1]
    m = re.match(r"^(python\d?)(?:\.\d+)?$", base)
    return m.group(1) if m else base


def is_shell(text: str) -> bool:
    """True if `text` names a POSIX-like shell program."""
    return program_name(text) in SHELLS


KERNEL_PREFIXES: dict[str, tuple[str, int, str]] = {
    "%%bash": ("shell-stdin", 1, "a %%bash cell: bash reads the code on its stdin"),
    "%%sh": ("shell-stdin", 1, "a %%sh cell: sh reads the code on its stdin"),
    "%%script": ("shell-stdin", 1, "a %%script cell: the program reads the code on its stdin"),
    "%sx": ("nested-string", 2, "a %sx line: the kernel hands the rest to a shell"),
    "%system": ("nested-string", 2, "a %system line: the kernel hands the rest to a shell"),
    "!": ("nested-string", 2, "a `!` line: the kernel hands the rest to a shell"),
}
"""Cell prefixes that make a kernel hand its code to a shell: (class, parse layers, detail).
Longer prefixes first (`%%bash` before `%`, `!!` is a `!`)."""
