"""Script files: which argv word an interpreter runs as its program, how a command template
becomes words, and the values that spell it (class attributes, dict tables, `str.format`)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from boundary_audit.static import ScanOptions, scan_files
from boundary_audit.static import classify as C
from boundary_audit.static import programs as P
from boundary_audit.static.shapes import format_template
from boundary_audit.static.values import EMPTY, Hole, Prov, Str, Text
from boundary_audit.taxonomy import BoundaryClass


@dataclass(frozen=True)
class SourceFile:
    path: str
    data: bytes | None
    skipped: str | None = None


def scan(path: str, text: str, include_constant: bool = False):  # type: ignore[no-untyped-def]
    return scan_files(
        [SourceFile(path, text.encode())],
        commit=None,
        options=ScanOptions(jobs=1, include_constant=include_constant),
    ).findings


@pytest.mark.parametrize(
    ("prog", "words", "expected"),
    [
        ("python3", ["f.py"], 0),
        ("python3", ["-u", "-W", "ignore", "f.py", "x"], 3),
        ("python3", ["-c", "print(1)", "f.py"], None),
        ("python3", ["-Bc", "print(1)"], None),
        ("python3", ["-m", "pytest", "f.py"], None),
        ("node", ["--no-warnings", "-r", "ts-node/register", "f.ts"], 3),
        ("node", ["--eval", "1", "f.js"], None),
        ("node", ["-e", "1"], None),
        ("ruby", ["-w", None], 1),
        ("perl", ["-ne", "print", "f.txt"], None),
        ("bash", ["-o", "pipefail", "f.sh"], 2),
        ("pwsh", ["-NoProfile", "-File", "f.ps1"], 2),
        ("pwsh", ["-Command", "Get-Item"], None),
        ("java", ["-cp", "lib", "Main.java"], 2),
        ("go", ["run", "main.go"], 1),
        ("go", ["build", "main.go"], None),
        ("python3", ["--", "f.py"], 1),
        ("python3", [], None),
    ],
)
def test_the_program_file_of_an_interpreter_argv(
    prog: str, words: list[str | None], expected: int | None
) -> None:
    assert P.script_position(prog, words) == expected


def test_every_shell_is_an_interpreter() -> None:
    assert P.SHELLS - {"busybox", "mksh", "ash"} <= P.INTERPRETERS


def test_str_format_fills_named_positional_and_automatic_fields() -> None:
    hole = Hole(Prov(unknown=True))
    value = Str((hole,))
    template = Str((Text("{a} {0} {} {{x}} {b!r:>4} {missing}"),))
    out = format_template(
        template, [Str((Text("P"),)), value], {"a": Str((Text("A"),)), "b": value}
    )
    texts = [p.text if isinstance(p, Text) else "?" for p in out.pieces]
    assert "".join(texts) == "A P P {x} ? ?"
    assert out.pieces[-1] == Hole(Prov(unknown=True))


def test_a_command_template_splits_into_words_holes_inside_their_word() -> None:
    hole = Hole(EMPTY.with_var(("f.py", 1, "path")))
    words = C.split_words(Str((Text("python3  -u /tmp/"), hole, Text(".py"))))
    assert words is not None
    assert [w.literal() if isinstance(w, Str) else None for w in words.items] == [
        "python3",
        "-u",
        None,
    ]
    assert words.items[2] == Str((Text("/tmp/"), hole, Text(".py")))
    assert C.split_words(Str((Text("sh -c 'echo "), hole, Text("'")))) is None


TABLE = """import shlex
import subprocess
from openai import OpenAI


class Runner:
    COMMANDS = {"python": "python3 {file}", "shell": "bash {file}"}

    def run(self, lang):
        reply = OpenAI().chat.completions.create(model="m", messages=[])
        path = "/tmp/step"
        with open(path, "w") as f:
            f.write(reply.choices[0].message.content)
        argv = shlex.split(self.COMMANDS[lang].format(file=path))
        subprocess.run(argv)
"""


def test_a_class_table_of_command_templates_runs_the_written_file() -> None:
    (f,) = scan("r.py", TABLE)
    assert (f.code, f.primary.start_line, f.boundary_class, f.model_controlled) == (
        "BA302",
        15,
        BoundaryClass.SCRIPT_FILE,
        True,
    )
    assert f.model_evidence == "traced"
    assert [s.start_line for s in f.related if "written to the file" in s.annotation] == [13]


def test_a_flag_that_takes_code_is_not_a_script_file() -> None:
    src = TABLE.replace('"python3 {file}"', '"python3 -c pass {file}"').replace(
        '"bash {file}"', '"bash -c true {file}"'
    )
    found = scan("r.py", src, include_constant=True)
    assert [(f.code, f.boundary_class) for f in found] == [("BA301", BoundaryClass.ARGV_DIRECT)]
