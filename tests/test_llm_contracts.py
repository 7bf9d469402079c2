"""Contracts and disclosures as data: what each prompt says, derived from the packaged files.

The disclosure of a boundary is built from data only; these tests pin the exact text for the
study's boundary, an adapter path (transport + pre-processors + differing facts), a scan
finding, and check that every transport, pre-processor and probe outcome has its sentence, so
that adding one without describing it fails here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boundary_audit._data import iter_files
from boundary_audit.adapters import PREPROCESSORS, load_adapters
from boundary_audit.errors import UsageError
from boundary_audit.llm.contracts import ContractError, contract, load_contracts, parse_contract
from boundary_audit.llm.disclosure import (
    ScanReportError,
    boundary_for,
    describe,
    load_disclosures,
    parse_disclosures,
)
from boundary_audit.probes import load_probes
from boundary_audit.tasks import load_tasks
from boundary_audit.transports import TRANSPORTS

SNAPSHOT = Path(__file__).parent / "snapshots" / "report_json_v1.json"
NESTED = (
    'Your command is pasted, unescaped, between the double quotes of `bash -c "<your command>"`, '
    "and that outer command line is run by bash: your command is first parsed by the outer bash "
    "as the inside of a double-quoted string, and the text that results is then parsed and run "
    "by the inner bash."
)


def test_the_contracts_ship_as_package_data() -> None:
    files = [rel for rel, _ in iter_files("contracts", ".toml")]
    assert files == ["disclosed.toml", "disclosures.toml", "native.toml", "raw.toml"]
    assert sorted(load_contracts()) == ["disclosed", "native", "raw"]


def test_raw_and_disclosed_differ_only_by_the_disclosure() -> None:
    task = load_tasks("write-file-t3")[0]
    raw = contract("raw").prompt(task.instruction)
    disclosed = contract("disclosed").prompt(task.instruction, NESTED)
    assert raw.user == disclosed.user == task.instruction
    assert disclosed.system == raw.system.replace(
        "\n\nPut the command in one fenced code block:",
        f"\n\nHow your command will be run:\n{NESTED}\n\nPut the command in one fenced code block:",
    )
    assert raw.system.startswith("You write shell commands for a Linux machine")
    assert raw.system.endswith("```bash\n<the command>\n```")
    assert raw.tool is None and raw.sha256 != disclosed.sha256


def test_native_offers_one_bash_tool_in_both_spellings() -> None:
    p = contract("native").prompt("do it")
    assert p.tool is not None
    assert p.tool.chat() == {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run one bash command in the current working directory and return "
            "its output.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The bash command to run."}
                },
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    }
    assert p.tool.responses()["name"] == "bash"
    assert p.tool.responses()["parameters"] == p.tool.chat()["function"]["parameters"]


def test_an_instruction_is_filled_in_once_never_expanded() -> None:
    p = contract("raw").prompt("echo {{disclosure}} {{instruction}}")
    assert p.user == "echo {{disclosure}} {{instruction}}"
    with pytest.raises(UsageError, match="needs a boundary description"):
        contract("disclosed").prompt("x")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("{{instruction}}", "{{task}}"), "user: unknown placeholder {{task}}"),
        (('form = "text"', 'form = "voice"'), "form: 'voice' is not one of text, tool"),
        (('extract = "last-fence-or-whole"', 'extract = "tool-call"'), "extract: `tool-call`"),
        (("How your command will be run:\n{{disclosure}}", "x"), "system: a disclosing contract"),
    ],
)
def test_a_bad_contract_file_names_the_key(edit: tuple[str, str], message: str) -> None:
    text = (Path(__file__).parents[1] / "contracts" / "disclosed.toml").read_text()
    assert edit[0] in text
    with pytest.raises(ContractError) as err:
        parse_contract(text.replace(*edit).encode(), "d.toml", "disclosed")
    assert str(err.value).startswith(f"d.toml: {message}")


def test_every_transport_preprocessor_and_probe_outcome_has_its_sentence() -> None:
    d = load_disclosures()
    assert sorted(d.transports) == sorted(TRANSPORTS)
    assert sorted(d.preprocess) == sorted(PREPROCESSORS)
    for probe in load_probes():
        assert sorted(d.facts[probe.id]) == sorted([*probe.outcomes, "missing"]), probe.id
        assert probe.id in d.reference
    for name in TRANSPORTS:  # every variant renders with the transport's defaults
        text = describe(boundary_for(name))
        assert text.startswith("Your command ") and "{{" not in text, name


def test_the_study_boundary_is_the_default() -> None:
    b = boundary_for(None)
    assert (b.label, b.transport) == ("nested", "nested")
    assert describe(b) == NESTED


def test_an_adapter_path_is_described_by_its_data() -> None:
    b = boundary_for("langchain:shell-tool")
    assert b.label == "langchain:shell-tool" and b.transport == "session-pipe"
    assert describe(b) == (
        "Your command is written, followed by a newline and a done-marker command, to the "
        "standard input pipe of a long-running non-interactive `/bin/bash` that runs every "
        "command of the session.\n"
        "A command that reads standard input reads the lines of your command that follow it. "
        "The shell lives on between commands: variables, functions, the working directory and "
        "`set` options carry over to the next command. A `cd` in your command moves every "
        "later command of the session. `exit` ends the session: no later command runs. "
        "The environment is empty: HOME and every variable the deployment set are unset."
    )
    codex = describe(boundary_for("codex:shell-command"))
    assert codex == (
        "Your command is passed, as one argument, to `bash -lc`: bash parses it once, exactly "
        "as you write it.\nIt is a login shell: /etc/profile and ~/.profile run first, and on "
        "Debian /etc/profile resets PATH."
    )
    autogen = describe(boundary_for("autogen:docker-executor"))
    assert autogen.splitlines()[0].endswith(
        "run as `timeout 60 sh FILE`: sh (dash, a POSIX "
        "shell, not bash) parses the file once, exactly as "
        "you write it."
    )
    assert autogen.splitlines()[1] == (
        "Before that: The command is taken from your ```sh fenced block by a lazy regular "
        "expression that ends the block at the first three backticks. ` -qqq` is appended to "
        "every line that starts with `pip install`."
    )


def test_every_packaged_adapter_path_has_a_disclosure() -> None:
    for adapter in load_adapters():
        for path in adapter.paths:
            assert describe(boundary_for(adapter.label(path)))


def test_a_user_adapter_is_described_without_code(tmp_path: Path) -> None:
    src = Path(__file__).parents[1] / "system_adapters" / "codex.toml"
    text = src.read_text().replace('id = "codex"', 'id = "mine"', 1)
    (tmp_path / "mine.toml").write_text(text)
    b = boundary_for("mine:shell-command", [tmp_path / "mine.toml"])
    assert b.label == "mine:shell-command"
    assert describe(b) == describe(boundary_for("codex:shell-command"))


def test_a_scan_finding_by_index_or_fingerprint(tmp_path: Path) -> None:
    report = tmp_path / "scan.json"
    shutil.copy(SNAPSHOT, report)
    b = boundary_for(f"{report}#1")
    assert b.label == "scan.json#1 (agent/remote.py:17-19@3ea751c, nested-string)"
    assert (b.transport, describe(b)) == ("nested", NESTED)
    same = boundary_for(f"{report}#3a78ed3bc2be6df029950131:1")
    assert same == b
    shell = boundary_for(f"{report}#2")  # subprocess.run(cmd, shell=True): sh -c
    assert shell.transport == "raw" and dict(shell.params) == {"shell": "sh", "flags": "-c"}
    assert describe(shell).startswith("Your command is passed, as one argument, to `sh -c`")
    keys = boundary_for(f"{report}#5")
    assert keys.transport == "tmux-keys"


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("{r}#7", UsageError, "{r} has 7 findings: no finding #7"),
        ("{r}#abc", UsageError, "{r}#abc: expected a finding index (0-based) or a fingerprint"),
        ("{r}#0000000000000000000000ff:1", UsageError, "{r}: no finding has fingerprint"),
        ("{d}/none.json#0", ScanReportError, "{d}/none.json: cannot read scan report"),
        ("{d}/bad.json#0", ScanReportError, "{d}/bad.json: not a `boundary-audit scan"),
        ("codex:nope", UsageError, "system 'codex' has no path 'nope' (paths: shell-command, "),
        ("telepathy", UsageError, "--disclose-for 'telepathy': expected a transport (raw, "),
    ],
)
def test_what_disclose_for_refuses(
    tmp_path: Path, spec: str, error: type[Exception], message: str
) -> None:
    report = tmp_path / "scan.json"
    shutil.copy(SNAPSHOT, report)
    (tmp_path / "bad.json").write_text(json.dumps({"schema": "other"}))
    fmt = {"r": report, "d": tmp_path}
    with pytest.raises(error) as err:
        boundary_for(spec.format(**fmt))
    assert str(err.value).startswith(message.format(**fmt))


def test_a_bad_disclosures_file_names_the_key() -> None:
    text = (Path(__file__).parents[1] / "contracts" / "disclosures.toml").read_text()
    cases = {
        "[transports.raw]": ("[transports.rawr]", "transports.rawr: unknown transport"),
        "`{{shell}} {{flags}}`: {{shell}}": (
            "`{{shel}}`",
            "transports.raw.text: {{shel}} is not a parameter of raw",
        ),
        'altered = "A tab': ('changed = "A tab', "facts.tab.changed: not an outcome of probe tab"),
    }
    for old, (new, message) in cases.items():
        assert old in text
        with pytest.raises(ContractError) as err:
            parse_disclosures(text.replace(old, new, 1).encode(), "x.toml")
        assert str(err.value).startswith(f"x.toml: {message}"), str(err.value)
