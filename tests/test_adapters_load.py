"""The adapter loader: the packaged six, a user-added file, and every error path (exit 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary_audit.adapters import AdapterTransport, load_adapters, path_transports
from boundary_audit.cli import main
from boundary_audit.errors import AdapterError, ExitCode
from boundary_audit.taxonomy import BoundaryClass, Contract

STUDY_PINS = {
    "codex": "fa1d4c4",
    "swe-agent": "3ea751c",
    "langchain": "b3a6d9a",
    "terminal-bench": "d28711d",
    "openhands": "850bd64",
    "autogen": "027ecf0",
}

VALID = """\
schema = 1
id = "{id}"
name = "Toy"
repository = "https://example.invalid/toy.git"
commit = "0123456789abcdef0123456789abcdef01234567"

[study]
contract = "raw"
anchor = "toy.py:1--2"
observed = "string to bash -c"

[[paths]]
id = "main"
title = "bash -c R"
contract = "native"
boundary_class = "nested-string"
parse_layers = ["bash -c", "bash -c again"]
observed = "R pasted between double quotes"
fix = "shlex.quote"
transport = {{ name = "nested" }}
preprocess = ["terminal-bench.keystrokes"]

[paths.expect]
quoting = "missing"

[[paths.anchors]]
path = "toy.py"
lines = [3, 4]
kind = "sink"
boundary_class = "nested-string"
"""


def write(tmp_path: Path, text: str, name: str = "toy") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_six_packaged_adapters_in_study_order() -> None:
    adapters = load_adapters()
    assert [a.id for a in adapters][:6] == list(STUDY_PINS)
    assert {a.id: a.commit for a in adapters} == STUDY_PINS
    rows = [(a.id, p.id) for a in adapters for p in a.paths if p.row]
    assert rows == [
        ("codex", "shell-command"),
        ("swe-agent", "default"),
        ("langchain", "shell-tool"),
        ("terminal-bench", "send-keys"),
        ("openhands", "launcher"),
        ("openhands", "model"),
        ("autogen", "docker-executor"),
    ]
    labels = [t.label for t in path_transports(adapters)]
    assert "openhands:model" in labels and "codex:snapshot" in labels
    swe = adapters[1].path("default")
    assert swe.contract is Contract.NATIVE and swe.boundary_class is BoundaryClass.SHELL_SESSION
    assert [s.name for s in swe.preprocess] == [
        "swe-agent.handle-action",
        "swe-rex.syntax-check",
        "swe-rex.bashlex-split",
    ]
    assert adapters[4].path("model").extra and adapters[4].path("launcher").marked


def test_a_user_adds_a_system_with_one_file(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.format(id="toy"))
    (toy,) = load_adapters(["toy"], [path])
    assert toy.source_file == str(path)
    assert toy.path("main").expect == {"quoting": "missing"}
    assert toy.path("main").anchors[0].label(toy.commit) == "toy.py:3-4@0123456"
    transport = AdapterTransport(toy, toy.path("main"))
    assert (transport.label, transport.inner.name) == ("toy:main", "nested")
    # A folder works too, and the user's file joins the packaged ones after them.
    assert [a.id for a in load_adapters(None, [tmp_path])][-1] == "toy"


BROKEN = [
    ("schema = 1\nid = [", "toy.toml: invalid TOML: "),
    (
        VALID.replace('name = "Toy"', 'name = "Toy"\ncolour = "red"'),
        "toy.toml: colour: unknown key",
    ),
    (
        VALID.replace('id = "{id}"', 'id = "other"'),
        "toy.toml: id: 'other' must equal the file name 'toy'",
    ),
    (
        VALID.replace('commit = "0123456789abcdef0123456789abcdef01234567"', 'commit = "main"'),
        "toy.toml: commit: 'main' must be 7 to 40 lowercase hex digits",
    ),
    (
        VALID.replace('name = "nested"', 'name = "nestd"'),
        "toy.toml: paths[0].transport.name: unknown transport 'nestd'",
    ),
    (
        VALID.replace('{{ name = "nested" }}', '{{ name = "raw", params = {{ flgs = "-lc" }} }}'),
        "toy.toml: paths[0].transport.params: transport raw: unknown parameter(s) flgs",
    ),
    (
        VALID.replace('"terminal-bench.keystrokes"', '"nope"'),
        "toy.toml: paths[0].preprocess[0]: unknown pre-processor 'nope'",
    ),
    (
        VALID.replace("lines = [3, 4]", "lines = [4, 3]"),
        "toy.toml: paths[0].anchors[0].lines: must be [first, last] with 1 <= first <= last",
    ),
    (
        VALID.replace('quoting = "missing"', 'qoting = "missing"'),
        "toy.toml: paths[0].expect.qoting: unknown probe",
    ),
    (
        VALID.replace('quoting = "missing"', 'quoting = "maybe"'),
        "toy.toml: paths[0].expect.quoting: 'maybe' is not an outcome of probe quoting",
    ),
    (
        VALID.replace(
            'boundary_class = "nested-string"\nparse', 'boundary_class = "nested"\nparse'
        ),
        "toy.toml: paths[0].boundary_class: 'nested' is not one of shell-string",
    ),
    (
        VALID.replace('contract = "native"', "contract = 1"),
        "toy.toml: paths[0].contract: must be string, not integer",
    ),
    (
        VALID + VALID[VALID.index("[[paths]]") :].replace("[paths.expect]", "[paths.expect]\n"),
        "toy.toml: paths[1].id: duplicate path id 'main'",
    ),
    (
        VALID.replace('kind = "sink"', 'kind = "text"'),
        "toy.toml: paths[0].anchors[0].text: missing",
    ),
]


@pytest.mark.parametrize(("text", "message"), BROKEN)
def test_a_bad_file_names_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text.replace("{id}", "toy").replace("{{", "{").replace("}}", "}"))
    with pytest.raises(AdapterError) as err:
        load_adapters(["toy"], [path])
    assert err.value.message.startswith(f"{tmp_path}/{message}")
    assert err.value.exit_code == ExitCode.INPUT


def test_unknown_system_and_duplicate_user_ids(tmp_path: Path) -> None:
    with pytest.raises(AdapterError, match="unknown system 'nope' \\(known: autogen, codex"):
        load_adapters(["nope"])
    one = tmp_path / "a"
    two = tmp_path / "b"
    one.mkdir()
    two.mkdir()
    write(one, VALID.format(id="toy"))
    write(two, VALID.format(id="toy"))
    with pytest.raises(AdapterError, match="id 'toy' is also defined by"):
        load_adapters(None, [one, two])
    with pytest.raises(AdapterError, match="cannot read"):
        load_adapters(None, [tmp_path / "missing.toml"])


def test_cli_reports_a_bad_adapter_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, VALID.format(id="toy").replace('name = "nested"', 'name = "x"'))
    code = main(["table8", "toy", "--adapters", str(path), "--no-probes", "--no-static"])
    err = capsys.readouterr().err
    assert code == ExitCode.INPUT
    assert len(err.splitlines()) == 1
    assert err.startswith(
        f"boundary-audit: error: {path}: paths[0].transport.name: unknown transport 'x' (known: "
    )
