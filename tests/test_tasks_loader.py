"""The task loader: errors name the file and the key; suite rules hold for the packaged data."""

from __future__ import annotations

import pytest

from boundary_audit.errors import ExitCode, TaskError, UsageError
from boundary_audit.tasks import load_suite, load_tasks, select_tasks
from boundary_audit.tasks.parse import parse_task
from boundary_audit.tasks.vocabulary import CORE_FAMILIES

BASE = """\
id = "write-file-t1"
family = "write-file"
tier = 1
core = true
instruction = "Write it."
hazards = ["dollar"]
oracle = "printf 'x\\\\n' > out.txt"
oracle_fails = ["nested"]
naive = "echo x > out.txt"
naive_breaks = "raw"

[[validator.files]]
path = "out.txt"
text = "x\\n"
"""
REL = "write-file/write-file-t1.toml"
F = "tasks/write-file/write-file-t1.toml: "


def parse(text: str, rel: str = REL):  # type: ignore[no-untyped-def]
    return parse_task(rel, text.encode())


def error(text: str, rel: str = REL) -> str:
    with pytest.raises(TaskError) as exc:
        parse(text, rel)
    assert exc.value.exit_code == ExitCode.INPUT
    return exc.value.message


def test_minimal_task_parses_with_exact_fields() -> None:
    task = parse(BASE)
    assert (task.id, task.family, task.tier, task.core) == ("write-file-t1", "write-file", 1, True)
    assert task.oracle == "printf 'x\\n' > out.txt"
    assert task.oracle_passes == ("raw",) and task.oracle_fails == ("nested",)
    assert task.validator.files[0].content == b"x\n" and task.validator.files[0].mode is None
    assert task.source_file == "tasks/write-file/write-file-t1.toml"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("tier = 1", "tier = 4"), F + "tier: 4 is outside 0..3"),
        (
            ("tier = 1", 'tier = "1"'),
            F + "tier: expected an integer, got a string",
        ),
        (
            ("core = true", "core = 1"),
            F + "core: expected true or false, got an integer",
        ),
        (
            ('hazards = ["dollar"]', 'hazards = ["dolar"]'),
            F + "hazards[0]: unknown hazard 'dolar' "
            "(see `boundary-audit tasks hazards` or docs/tasks.md)",
        ),
        (
            ('hazards = ["dollar"]', 'hazards = ["dollar", "dollar"]'),
            F + "hazards: lists a hazard twice",
        ),
        (
            ('hazards = ["dollar"]', "hazards = []"),
            F + "hazards: tier 1 must name the hazards it carries",
        ),
        (
            ('id = "write-file-t1"', 'id = "write-file-t2"'),
            F + "id: 'write-file-t2' must be 'write-file-t1' (family and tier)",
        ),
        (
            ('naive_breaks = "raw"', 'naive_breaks = "tmux-keys"'),
            F + "naive_breaks: a core task's naive reply breaks on raw or nested, not 'tmux-keys'",
        ),
        (
            ('oracle_fails = ["nested"]', "oracle_fails = []"),
            F + "oracle_passes: a core task must declare 'nested' in oracle_passes or oracle_fails",
        ),
        (
            ('oracle_fails = ["nested"]', 'oracle_passes = ["nested"]\noracle_fails = ["nested"]'),
            F + "oracle_fails: 'nested' is also in oracle_passes",
        ),
        (
            ('naive = "echo x > out.txt"', 'naive = "  "'),
            F + "naive: a reply must not be empty",
        ),
        (
            ('path = "out.txt"', 'path = "../out.txt"'),
            F + "validator.files[0].path: path '../out.txt' has an empty, '.' or '..' component",
        ),
        (
            ('path = "out.txt"', 'path = "/etc/out.txt"'),
            F + "validator.files[0].path: path '/etc/out.txt' must be relative to the work dir",
        ),
        (
            ('path = "out.txt"', 'path = ".git/config"'),
            F + "validator.files[0].path: path '.git/config' is inside .git "
            "(check repositories with [validator.git])",
        ),
        (
            ('text = "x\\n"', 'txt = "x\\n"'),
            F + "validator.files[0].text: required key is missing",
        ),
        (
            ('text = "x\\n"', 'text = "x\\n"\nmode = "0999"'),
            F + "validator.files[0].mode: '0999' does not match 0?[0-7]{3,4}",
        ),
        (
            ('text = "x\\n"', 'text = { base64 = "!!" }'),
            F + "validator.files[0].text.base64: not valid base64",
        ),
        (
            ('text = "x\\n"', "text = 7"),
            F + "validator.files[0].text: expected a string, {base64=...}, "
            "{repeat=..., times=N} or an array of those, got an integer",
        ),
    ],
)
def test_schema_errors_name_file_and_key(edit: tuple[str, str], message: str) -> None:
    old, new = edit
    assert old in BASE
    assert error(BASE.replace(old, new, 1)) == message


def test_unknown_key_is_rejected_with_the_allowed_ones() -> None:
    msg = error(BASE.replace("tier = 1", 'tier = 1\nnaiv = "x"'))
    assert msg.startswith(F + "naiv: unknown key (allowed here: ")
    assert "naive, naive_breaks, notes" in msg


def test_unknown_key_in_nested_table() -> None:
    msg = error(BASE.replace('text = "x\\n"', 'text = "x\\n"\nmod = "0644"'))
    assert msg.startswith(F + "validator.files[0].mod: unknown key")


def test_invalid_toml_and_encoding() -> None:
    assert error("id = ").startswith(F + "invalid TOML: ")
    with pytest.raises(TaskError, match=r"^tasks/x/x-t0.toml: not UTF-8 \(byte 4\)$"):
        parse_task("x/x-t0.toml", b"id =\xff")


def test_file_must_live_at_family_and_id() -> None:
    assert error(BASE, rel="write-file/other.toml") == (
        "tasks/write-file/other.toml: id: file must be tasks/write-file/write-file-t1.toml"
    )


def test_tier_zero_is_a_control_without_hazards() -> None:
    text = BASE.replace("tier = 1", "tier = 0").replace("write-file-t1", "write-file-t0")
    assert error(text, "write-file/write-file-t0.toml") == (
        "tasks/write-file/write-file-t0.toml: hazards: "
        "tier 0 is the control: it must carry no hazard"
    )


def test_validator_programs_must_be_fixture_helpers() -> None:
    text = BASE + '\n[[validator.argv]]\nprogram = "show-args"\ncalls = [["a"]]\n'
    assert error(text) == (
        F + "validator.argv: program 'show-args' must be a fixture "
        "program with helper = 'argv-recorder'"
    )


def test_fixture_program_rules() -> None:
    both = BASE + '\n[[fixture.programs]]\nname = "p"\nhelper = "remote"\nscript = "#!/bin/sh\\n"\n'
    assert error(both).endswith("fixture.programs[0].helper: give exactly one of helper and script")
    bash = BASE + '\n[[fixture.programs]]\nname = "p"\nscript = "#!/bin/bash\\necho"\n'
    assert error(bash).endswith(
        "fixture.programs[0].script: "
        "a fixture program must start with #!/bin/sh (it runs under every backend)"
    )
    home = BASE + '\n[[fixture.programs]]\nname = "remote"\nhelper = "remote"\nhome = "srv"\n'
    assert error(home) == (F + "fixture.programs: remote home 'srv' must be a fixture directory")


def test_boundary_tasks_need_exactly_one_boundary_tag() -> None:
    text = (
        BASE.replace("write-file", "stdin-reader")
        .replace("core = true", "core = false")
        .replace('naive_breaks = "raw"', 'naive_breaks = "stdin"')
    )
    rel = "stdin-reader/stdin-reader-t1.toml"
    assert error(text, rel).endswith(
        ": tags: a task outside the core carries exactly one boundary=<kind> tag"
    )
    tagged = text.replace("core = false", 'core = false\ntags = ["boundary=stdn"]')
    assert error(tagged, rel).endswith(
        "tags[0]: unknown boundary kind 'stdn' "
        "(known: stdin, tty, session, argv, long, newline, interpreter)"
    )
    ok = parse(text.replace("core = false", 'core = false\ntags = ["boundary=stdin"]'), rel)
    assert ok.boundary == "stdin" and ok.naive_breaks == "stdin"


def test_text_values_decode_to_exact_bytes() -> None:
    text = BASE.replace(
        'text = "x\\n"', 'text = ["a", { repeat = "xy", times = 3 }, { base64 = "/w==" }]'
    )
    assert parse(text).validator.files[0].content == b"axyxyxy\xff"


def _family(family: str, tiers: list[int]) -> list[tuple[str, bytes]]:
    files = []
    for tier in tiers:
        tid = f"{family}-t{tier}"
        body = (
            BASE.replace("write-file-t1", tid)
            .replace('family = "write-file"', f'family = "{family}"')
            .replace("tier = 1", f"tier = {tier}")
        )
        if tier == 0:
            body = body.replace('hazards = ["dollar"]', "hazards = []")
        files.append((f"{family}/{tid}.toml", body.encode()))
    return files


def test_core_family_needs_exactly_tiers_0_to_3() -> None:
    with pytest.raises(TaskError) as exc:
        load_suite(_family("write-file", [0, 1, 2]), complete=False)
    assert exc.value.message == (
        "tasks/write-file/: core family 'write-file' has 3 task(s) with tiers [0, 1, 2]; "
        "it needs exactly one task per tier 0-3 (tasks/write-file/write-file-t0.toml, "
        "tasks/write-file/write-file-t1.toml, "
        "tasks/write-file/write-file-t2.toml)"
    )
    assert len(load_suite(_family("write-file", [0, 1, 2, 3]), complete=False)) == 4


def test_complete_suite_needs_all_core_families() -> None:
    with pytest.raises(
        TaskError, match=r"^tasks/: core families missing: json-write, git-commit, "
    ):
        load_suite(_family("write-file", [0, 1, 2, 3]))


def test_duplicate_ids_are_rejected() -> None:
    files = _family("write-file", [0, 1, 2, 3])
    files.append(("write-file/write-file-t1.toml", files[1][1]))
    with pytest.raises(TaskError) as exc:
        load_suite(files, complete=False)
    assert exc.value.message == (
        F + "id: duplicate id 'write-file-t1' (also in tasks/write-file/write-file-t1.toml)"
    )


def test_packaged_suite_shape() -> None:
    tasks = load_tasks()
    core = [t for t in tasks if t.core]
    assert len(core) == 56
    assert [t.family for t in core[::4]] == list(CORE_FAMILIES)
    assert all([t.tier for t in core[i : i + 4]] == [0, 1, 2, 3] for i in range(0, 56, 4))
    boundary = [t for t in tasks if not t.core]
    assert sorted({t.boundary for t in boundary}) == [
        "argv",
        "interpreter",
        "long",
        "newline",
        "session",
        "stdin",
        "tty",
    ]
    assert all(2 <= sum(t.family == f for t in boundary) <= 4 for f in {t.family for t in boundary})
    assert {t.naive_breaks for t in core} == {"raw", "nested"}
    nested_survivors = [t.id for t in core if "nested" in t.oracle_passes]
    assert 10 <= len(nested_survivors) <= 46  # many oracles survive nesting, some must not


def test_selection_terms() -> None:
    tasks = load_tasks()
    assert [t.id for t in select_tasks(tasks, "write-file-t3, env-pass")] == [
        "write-file-t3",
        "env-pass-t0",
        "env-pass-t1",
        "env-pass-t2",
        "env-pass-t3",
    ]
    assert [t.id for t in select_tasks(tasks, "boundary=tty")] == [
        "tty-keys-t1",
        "tty-keys-t2",
        "tty-keys-t3",
    ]
    assert len(select_tasks(tasks, "*-t0")) == 14
    assert len(select_tasks(tasks, "core")) == 56
    assert select_tasks(tasks, "all") == tasks
    with pytest.raises(UsageError, match=r"^--select 'nope' matches no task$"):
        select_tasks(tasks, "core,nope")
