"""What each boundary class does to R, layer by layer, and what removes its damage.

Used where a Table-8 row comes from a static finding rather than an adapter (the specimens
demo): the adapter files describe their own layers and fixes; a finding only has its class.
"""

from __future__ import annotations

from boundary_audit.taxonomy import BoundaryClass

CLASS_LAYERS: dict[BoundaryClass, tuple[str, ...]] = {
    BoundaryClass.SHELL_STRING: ("one shell parses R as its -c string",),
    BoundaryClass.SHELL_STDIN: (
        "R written to a one-shot shell's stdin",
        "the shell reads its script from that stdin",
    ),
    BoundaryClass.SHELL_SESSION: (
        "R written into a persistent shell",
        "end-of-output marker",
        "the shell parses R; state and stdin persist",
    ),
    BoundaryClass.TTY_KEYSTROKES: (
        "tmux argv parse and key names",
        "pty line discipline",
        "readline",
        "interactive shell",
    ),
    BoundaryClass.ARGV_DIRECT: ("a tokenizer splits R into argv", "spawn without a shell"),
    BoundaryClass.SCRIPT_FILE: ("R written verbatim to a file", "the interpreter parses it"),
    BoundaryClass.REMOTE_STRING: (
        "R handed as one string to a remote runner",
        "the remote shell parses it",
    ),
    BoundaryClass.NESTED_STRING: (
        "R pasted into a larger quoted command",
        "the outer shell parses it",
        "an inner shell parses R again",
    ),
    BoundaryClass.SERIALIZED: (
        "R embedded in a JSON document",
        "the document is decoded",
        "a shell parses the decoded string",
    ),
}
"""Parse layers R crosses, per class (the typical case the class describes)."""

CLASS_FIX: dict[BoundaryClass, str] = {
    BoundaryClass.SHELL_STRING: "none needed for quoting: one parse of the model's own string",
    BoundaryClass.SHELL_STDIN: "pass R as `bash -c R` or a script file; give the command "
    "its own stdin (/dev/null)",
    BoundaryClass.SHELL_SESSION: "run each reply as its own process (or a script file) with "
    "stdin at /dev/null; keep markers on a side channel",
    BoundaryClass.TTY_KEYSTROKES: "write R to a script file and type only `bash FILE`; send "
    "text with `send-keys -l`",
    BoundaryClass.ARGV_DIRECT: "ask the model for an argv array, or run R with `bash -c` on "
    "purpose",
    BoundaryClass.SCRIPT_FILE: "none needed for quoting; run it with the shell the model "
    "wrote for (bash, not sh)",
    BoundaryClass.REMOTE_STRING: "quote R for the remote shell (shlex.quote), or send a "
    "script file",
    BoundaryClass.NESTED_STRING: "shlex.quote(R) at the interpolation point, or a temp script",
    BoundaryClass.SERIALIZED: "build the document with a serializer (json.dumps)",
}
"""What removes the damage at each class of boundary."""
