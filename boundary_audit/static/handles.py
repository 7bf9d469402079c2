"""Handles: the values of process, file, command-builder and connection constructors.

`HANDLE_CONSTRUCTORS` maps a canonical callee (`subprocess.Popen`, `child_process.spawn`,
`std::process::Command::new`, `os/exec.Command`, `open`, `paramiko.SSHClient`...) to a function
that builds the `Obj` the call returns, with the program and arguments it will run.
`handle_method` models builder and accessor methods on those handles (`.arg`, `.args`,
`.spawn`, `.StdinPipe`, `.NewSession`). Sinks later ask what a receiver is: a shell process,
a pty, a file written with model output, an ssh session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from boundary_audit.static import knowledge as K
from boundary_audit.static.ir import Call, Expr, Function, Lit, Map, Seq, Span
from boundary_audit.static.values import (
    UNKNOWN,
    AValue,
    Hole,
    Lst,
    Obj,
    Opq,
    Origin,
    Prov,
    Str,
    Text,
    Tok,
    alts,
    options,
    prov_of,
)
from boundary_audit.taxonomy import Contract

if TYPE_CHECKING:
    from boundary_audit.static.dataflow import Engine

Ctor = Callable[["Engine", Call, Function, str], AValue]


def _argv_list(engine: Engine, exprs: tuple[Expr, ...], fn: Function, span: Span) -> AValue:
    """The argv of `f(program, *args)`: a list, or one list per alternative of a spread."""
    return engine.sequence_options(exprs, fn, span)


def _with_args(
    engine: Engine, call: Call, fn: Function, program: Expr | None, args: Expr | None
) -> AValue:
    """[program, *args] for APIs of the form f(program, [args...])."""
    head: list[AValue] = [engine.eval(program, fn)] if program is not None else []
    if args is None or isinstance(args, Map):
        return Lst(tuple(head), None, engine.path, call.span)
    value = engine.eval(args, fn)
    lists = [
        Lst((*head, *o.items), o.rest, engine.path, call.span)
        for o in options(value)
        if isinstance(o, Lst)
    ]
    if lists:
        # NOTE(h2): one argv per alternative (`powershell -Command c` on Windows, `bash -l -c
        # c` elsewhere): the classifier judges each, not the first with the others' program.
        return lists[0] if len(lists) == 1 else alts(lists)
    return Lst(tuple(head), prov_of(value), engine.path, call.span)


def _truthy_option(call: Call, key: str) -> bool:
    """True if a keyword or a trailing options object sets `key` to something other than false."""
    value = call.kwarg(key)
    if value is None:
        for a in call.args:
            if isinstance(a, Map) and a.get(key) is not None:
                value = a.get(key)
    if value is None:
        return False
    if not isinstance(value, Lit):
        return True  # not known statically: a shell may be asked for
    if value.is_str:
        return value.text != ""  # `shell=""` is falsy; any other string is truthy
    return value.text not in FALSY_LITERALS


FALSY_LITERALS = frozenset({"False", "false", "None", "null", "undefined", "0", "0.0", "0n"})
"""Non-string literals a language evaluates as false (`shell=0` runs no shell)."""


def _arg(call: Call, i: int, key: str | None = None) -> Expr | None:
    if key is not None and call.kwarg(key) is not None:
        return call.kwarg(key)
    if i < len(call.args) and not isinstance(call.args[i], Map):
        return call.args[i]
    return None


def popen(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    argv = _arg(call, 0, "args")
    shell = _truthy_option(call, "shell")
    value = engine.eval(argv, fn) if argv is not None else Opq(UNKNOWN)
    return Obj("process", cn, value, shell=shell, path=engine.path, span=call.span)


_OS_EXEC_SKIP = {
    "execv": (1, True),
    "execve": (1, True),
    "execvp": (1, True),
    "execvpe": (1, True),
    "execl": (1, False),
    "execle": (1, False),
    "execlp": (1, False),
    "execlpe": (1, False),
    "spawnv": (2, True),
    "spawnve": (2, True),
    "spawnvp": (2, True),
    "spawnvpe": (2, True),
    "spawnl": (2, False),
    "spawnle": (2, False),
    "spawnlp": (2, False),
    "spawnlpe": (2, False),
    "posix_spawn": (1, True),
    "posix_spawnp": (1, True),
}


def os_exec(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """os.exec*/os.spawn*: the argv is one list argument (v-forms) or the trailing arguments."""
    skip, is_list = _OS_EXEC_SKIP[cn.rsplit(".", 1)[-1]]
    if is_list:
        arg = _arg(call, skip)
        value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    else:
        end = -1 if cn.endswith("e") else None
        value = _argv_list(engine, call.args[skip:end], fn, call.span)
    return Obj("process", cn, value, path=engine.path, span=call.span)


def auto_shell(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """anyio/trio run_process: a string runs through a shell, a list does not."""
    arg = _arg(call, 0, "command")
    value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    shell = not any(isinstance(o, Lst) for o in options(value)) or _truthy_option(call, "shell")
    return Obj("process", cn, value, shell=shell, path=engine.path, span=call.span)


def exec_argv_first(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """A shell command as a process: its single argument is the argv sequence."""
    argv = engine.eval(call.args[0], fn) if call.args else Opq(UNKNOWN)
    return Obj("process", "command", argv, path=engine.path, span=call.span)


def exec_argv(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    skip = 1 if cn.endswith(("CommandContext",)) else 0
    argv = _argv_list(engine, call.args[skip:], fn, call.span)
    kind = "command" if cn.startswith("os/exec.") else "process"
    return Obj(kind, cn, argv, path=engine.path, span=call.span)


def shell_string(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    arg = _arg(call, 0)
    value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    return Obj("process", cn, value, shell=True, path=engine.path, span=call.span)


def program_args(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    program, args = _arg(call, 0), _arg(call, 1)
    pty = "pty" in cn
    if _truthy_option(call, "shell"):
        return Obj(
            "process",
            cn,
            join_list(_with_args(engine, call, fn, program, args), " "),
            shell=True,
            path=engine.path,
            span=call.span,
        )
    return Obj(
        "process",
        cn,
        _with_args(engine, call, fn, program, args),
        pty=pty,
        path=engine.path,
        span=call.span,
    )


def pexpect_spawn(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    program, args = _arg(call, 0, "command"), _arg(call, 1, "args")
    if args is not None and isinstance(args, Seq):
        argv: AValue = _with_args(engine, call, fn, program, args)
    else:
        argv = (
            Tok(engine.eval(program, fn), "pexpect", engine.path, call.span)
            if program
            else Opq(UNKNOWN)
        )
    return Obj("process", cn, argv, pty=True, path=engine.path, span=call.span)


def tokenized(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    arg = _arg(call, 0)
    value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    return Obj(
        "process",
        cn,
        Tok(value, cn.rsplit(".", 1)[-1], engine.path, call.span),
        path=engine.path,
        span=call.span,
    )


def builder(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    program = _arg(call, 0)
    head = (engine.eval(program, fn),) if program is not None else ()
    return Obj(
        "command", cn, Lst(head, None, engine.path, call.span), path=engine.path, span=call.span
    )


def file_handle(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    target = _arg(call, 0, "file")
    if target is None or cn.startswith("tempfile.") or cn.endswith("CreateTemp"):
        unique = Prov(
            unknown=True, vars=frozenset({(engine.path, call.span.start_byte, "<tempfile>")})
        )
        return Obj("file", cn, target=Opq(unique), path=engine.path, span=call.span)
    return Obj("file", cn, target=engine.eval(target, fn), path=engine.path, span=call.span)


def execa_template(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """execa's $`cmd ${x}`: literal text split on spaces, each interpolation one argument."""
    value = engine.eval(call.args[0], fn) if call.args else Opq(UNKNOWN)
    if not isinstance(value, Str):
        return Obj(
            "process",
            cn,
            Tok(value, "execa $", engine.path, call.span),
            path=engine.path,
            span=call.span,
        )
    words: list[list[Text | Hole]] = [[]]
    for piece in value.pieces:
        if isinstance(piece, Hole):
            words[-1].append(piece)
            continue
        for i, chunk in enumerate(piece.text.split(" ")):
            if i:
                words.append([])
            if chunk:
                words[-1].append(Text(chunk, piece.path, piece.span))
    items = tuple(Str(tuple(w)) for w in words if w)
    return Obj(
        "process", cn, Lst(items, None, engine.path, call.span), path=engine.path, span=call.span
    )


def zx_template(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """zx's $`cmd ${x}`: bash runs the text, each interpolation quoted by zx."""
    value = engine.eval(call.args[0], fn) if call.args else Opq(UNKNOWN)
    if isinstance(value, Str):
        value = Str(
            tuple(
                Hole(p.prov, p.sanitizer or "zx quote", p.span) if isinstance(p, Hole) else p
                for p in value.pieces
            )
        )
    return Obj("process", cn, value, shell=True, path=engine.path, span=call.span)


def llm_client(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """An LLM SDK client (`OpenAI()`, `ChatOpenAI(...)`): its response methods are sources."""
    return Obj("llm", cn, path=engine.path, span=call.span)


def loop_shell(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """`loop.subprocess_shell(protocol_factory, cmd)`: the command is the second argument."""
    arg = call.args[1] if len(call.args) > 1 else call.kwarg("cmd")
    value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    return Obj("process", cn, value, shell=True, path=engine.path, span=call.span)


def loop_exec(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """`loop.subprocess_exec(protocol_factory, program, *args)`."""
    argv = _argv_list(engine, call.args[1:], fn, call.span)
    return Obj("process", cn, argv, path=engine.path, span=call.span)


def startfile(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """`os.startfile(path)`: the file runs with the program associated with its type."""
    argv = _argv_list(engine, call.args[:1], fn, call.span)
    return Obj("process", cn, argv, path=engine.path, span=call.span)


def exec_struct(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """Go `exec.Cmd{Path: p, Args: argv}`: `Args` holds argv[0] too; `Path` runs."""
    args = call.kwarg("Args")
    path = call.kwarg("Path")
    if args is not None:
        argv = engine.eval(args, fn)
        if isinstance(argv, Lst) and path is not None and argv.items:
            argv = Lst((engine.eval(path, fn), *argv.items[1:]), argv.rest, argv.path, argv.span)
    elif path is not None:
        argv = _argv_list(engine, (path,), fn, call.span)
    else:
        argv = Opq(UNKNOWN)
    return Obj("command", cn, argv, path=engine.path, span=call.span)


def argv_at(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """`syscall.Exec(argv0, argv, env)`: the second argument is the argv."""
    arg = call.args[1] if len(call.args) > 1 else None
    value = engine.eval(arg, fn) if arg is not None else Opq(UNKNOWN)
    return Obj("process", cn, value, path=engine.path, span=call.span)


def option_argv(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
    """`Deno.run({cmd: [...]})`, `Bun.spawn([...])` / `Bun.spawn({cmd: [...]})`."""
    first = call.args[0] if call.args else None
    if isinstance(first, Map):
        first = first.get("cmd") or first.get("args")
    value = engine.eval(first, fn) if first is not None else Opq(UNKNOWN)
    return Obj("process", cn, value, path=engine.path, span=call.span)


HANDLERS: dict[str, Ctor] = {}
"""Handler name -> constructor, for the catalogue's `[[api]]` entries (filled below)."""


def connection(kind: str) -> Ctor:
    def make(engine: Engine, call: Call, fn: Function, cn: str) -> AValue:
        return Obj(kind, cn, path=engine.path, span=call.span)

    return make


HANDLE_CONSTRUCTORS: dict[str, Ctor] = {
    "subprocess.Popen": popen,
    "subprocess.run": popen,
    "subprocess.call": popen,
    "subprocess.check_call": popen,
    "subprocess.check_output": popen,
    "pty.spawn": popen,
    "os.system": shell_string,
    "os.popen": shell_string,
    "subprocess.getoutput": shell_string,
    "subprocess.getstatusoutput": shell_string,
    "commands.getoutput": shell_string,
    "anyio.run_process": auto_shell,
    "anyio.open_process": auto_shell,
    "trio.run_process": auto_shell,
    "pexpect.run": tokenized,
    **{f"os.{name}": os_exec for name in _OS_EXEC_SKIP},
    "asyncio.create_subprocess_exec": exec_argv,
    "asyncio.create_subprocess_shell": shell_string,
    "pexpect.spawn": pexpect_spawn,
    "pexpect.spawnu": pexpect_spawn,
    "pexpect.pty_spawn.spawn": pexpect_spawn,
    "wexpect.spawn": pexpect_spawn,
    "ptyprocess.PtyProcess.spawn": pexpect_spawn,
    "ptyprocess.PtyProcessUnicode.spawn": pexpect_spawn,
    "open": file_handle,
    "io.open": file_handle,
    "codecs.open": file_handle,
    "builtins.open": file_handle,
    "os.fdopen": file_handle,
    "tempfile.NamedTemporaryFile": file_handle,
    "tempfile.TemporaryFile": file_handle,
    "paramiko.SSHClient": connection("ssh"),
    "paramiko.client.SSHClient": connection("ssh"),
    "asyncssh.connect": connection("ssh"),
    "fabric.Connection": connection("ssh"),
    "docker.from_env": connection("docker"),
    "docker.DockerClient": connection("docker"),
    # javascript / typescript
    "child_process.spawn": program_args,
    "child_process.spawnSync": program_args,
    "child_process.execFile": program_args,
    "child_process.execFileSync": program_args,
    "child_process.fork": program_args,
    "child_process.exec": shell_string,
    "child_process.execSync": shell_string,
    "execa.execa": program_args,
    "execa.execaSync": program_args,
    "execa": program_args,
    "execa.execaCommand": tokenized,
    "execa.execaCommandSync": tokenized,
    "node-pty.spawn": program_args,
    "@lydell/node-pty.spawn": program_args,
    "execa.$": execa_template,
    "execa.$$": execa_template,
    "zx.$": zx_template,
    "ssh2.Client": connection("ssh"),
    "node-ssh.NodeSSH": connection("ssh"),
    "fs.createWriteStream": file_handle,
    # shell: a command node seen as the process it starts
    "<spawn>": exec_argv_first,
    # rust
    "std::process::Command::new": builder,
    "tokio::process::Command::new": builder,
    "async_process::Command::new": builder,
    "std::fs::File::create": file_handle,
    "tokio::fs::File::create": file_handle,
    "ssh2::Session::new": connection("ssh"),
    # go
    "os/exec.Command": exec_argv,
    "os/exec.CommandContext": exec_argv,
    "os.Create": file_handle,
    "os.OpenFile": file_handle,
    "os.CreateTemp": file_handle,
    "golang.org/x/crypto/ssh.Dial": connection("ssh-client"),
    **dict.fromkeys(K.LLM_CLIENTS, llm_client),
}

HANDLERS.update(
    {
        f.__name__: f
        for f in (
            popen,
            shell_string,
            program_args,
            exec_argv,
            exec_struct,
            tokenized,
            os_exec,
            loop_shell,
            loop_exec,
            startfile,
            argv_at,
            option_argv,
        )
    }
)


def _catalogue_apis() -> None:
    from boundary_audit.static.apis import api_handlers, sdks
    from boundary_audit.static.parsing import QUERY_DIALECT

    for name, handler in api_handlers().items():
        if "." in name or "/" in name or "-" in name:
            HANDLE_CONSTRUCTORS.setdefault(name, HANDLERS[handler])
        else:
            METHOD_HANDLERS[name] = HANDLERS[handler]
    for dialect in sorted(set(QUERY_DIALECT.values())):
        for sdk in sdks(dialect):
            for call, handler in sdk.builders:
                BUILDERS[call] = HANDLERS[handler]


BUILDERS: dict[str, Ctor] = {}
"""Dotted suffixes of command builders an SDK provides (`ChildProcess.make`)."""
METHOD_HANDLERS: dict[str, Ctor] = {}
"""Process APIs called as a method of any receiver (`loop.subprocess_exec`): catalogue
`[[api]]` names without a dot."""
_catalogue_apis()

_BUILDER_KEEP = frozenset(
    {
        "current_dir",
        "env",
        "envs",
        "env_clear",
        "env_remove",
        "stdin",
        "stdout",
        "stderr",
        "kill_on_drop",
        "process_group",
        "uid",
        "gid",
        "pre_exec",
        "arg0",
        "creation_flags",
    }
)


def handle_method(engine: Engine, obj: Obj, name: str, call: Call, fn: Function) -> AValue | None:
    """The value of method `name` called on handle `obj`, or None if not modelled."""
    if obj.kind == "command":
        argv = (
            obj.argv
            if isinstance(obj.argv, Lst)
            else Lst((), prov_of(obj.argv) if obj.argv else None)
        )
        if name == "arg" and call.args:
            item = engine.eval(call.args[0], fn)
            return Obj(
                "command",
                obj.api,
                Lst((*argv.items, item), argv.rest, argv.path, argv.span),
                path=obj.path,
                span=obj.span,
            )
        if name == "args" and call.args:
            more = _with_args(engine, call, fn, None, call.args[0])
            assert isinstance(more, Lst)
            rest = (
                argv.rest.join(more.rest) if argv.rest and more.rest else (argv.rest or more.rest)
            )
            return Obj(
                "command",
                obj.api,
                Lst((*argv.items, *more.items), rest, argv.path, argv.span),
                path=obj.path,
                span=obj.span,
            )
        if name in _BUILDER_KEEP:
            return obj
        if name in ("spawn", "output", "status", "Start", "Run", "Output", "CombinedOutput"):
            return Obj("process", obj.api, obj.argv, path=obj.path, span=obj.span)
        if name == "StdinPipe":
            return Obj("stdin", obj.api, obj.argv, path=obj.path, span=obj.span)
    if obj.kind == "llm" and name in K.LLM_CLIENTS.get(obj.api, ()):
        origin = Origin("llm-response", f"{call.name}(…)", engine.path, call.span, Contract.RAW)
        return Opq(Prov(frozenset({origin})))
    if obj.kind == "ssh-client" and name == "NewSession":
        return Obj("ssh", obj.api, path=obj.path, span=obj.span)
    if obj.kind in ("process", "stdin") and name in ("take", "as_mut", "unwrap", "expect", "lock"):
        return obj
    return None


def join_list(value: AValue, sep: str) -> AValue:
    """`sep.join(value)`: a template when the list is known, else one hole."""
    results: list[AValue] = []
    for o in options(value):
        if isinstance(o, Lst) and o.rest is None:
            from boundary_audit.static.shapes import merge_text, str_pieces

            pieces: list[Text | Hole] = []
            for i, item in enumerate(o.items):
                if i:
                    pieces.append(Text(sep))
                pieces.extend(str_pieces(item))
            results.append(Str(tuple(merge_text(pieces))))
        elif isinstance(o, Str):
            results.append(o)
        else:
            results.append(Str((Hole(prov_of(o)),)))
    from boundary_audit.static.values import alts

    return alts(results)
