"""Parse one task file (TOML) into a `Task`, validating every key as it is read.

Errors are `TaskError`s that name the file and the key path (`fixture.files[2].mode`). Checks
that involve several keys of one file (id matches family and tier, programs referenced by the
validator exist, core tasks declare the nested outcome of their oracle) live here too; checks
across files live in `suite`.
"""

from __future__ import annotations

import re
import tomllib

from boundary_audit.errors import TaskError
from boundary_audit.tasks import vocabulary as vocab
from boundary_audit.tasks.model import Fixture, Task, TaskId
from boundary_audit.tasks.parse_parts import parse_fixture, parse_validator
from boundary_audit.tasks.schema import Node

NAME = r"[a-z0-9][a-z0-9-]*"
TRANSPORT = r"[a-z][a-z0-9-]*"


def parse_task(rel: str, raw: bytes, where: str | None = None) -> Task:
    """Parse the file at relative path `rel` (e.g. `write-file/write-file-t3.toml`)."""
    where = where or f"tasks/{rel}"
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TaskError(f"{where}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{where}: invalid TOML: {exc}") from None
    node = Node(data, "", where)
    task = _read_task(node, rel)
    node.finish()
    _check_consistency(task, node)
    return task


def _read_task(node: Node, rel: str) -> Task:
    family = node.string("family", pattern=NAME)
    tier = node.integer("tier", lo=0, hi=3)
    task_id = node.string("id", pattern=NAME)
    if task_id != f"{family}-t{tier}":
        node.fail("id", f"{task_id!r} must be '{family}-t{tier}' (family and tier)")
    if rel != f"{family}/{task_id}.toml":
        node.fail("id", f"file must be tasks/{family}/{task_id}.toml")
    fixture_node = node.table("fixture")
    validator_node = node.table("validator", required=True)
    assert validator_node is not None
    fixture = parse_fixture(fixture_node) if fixture_node else Fixture()
    return Task(
        id=TaskId(task_id),
        family=family,
        tier=tier,
        core=node.boolean("core"),
        tags=tuple(node.strings("tags", [], check=_tag_problem)),
        instruction=node.string("instruction"),
        hazards=tuple(node.strings("hazards", check=_hazard_problem)),
        notes=node.string("notes", ""),
        followup=_reply(node, "followup") if node.has("followup") else "",
        fixture=fixture,
        oracle=_reply(node, "oracle"),
        naive=_reply(node, "naive"),
        naive_breaks=node.string("naive_breaks", pattern=TRANSPORT),
        oracle_passes=tuple(node.strings("oracle_passes", ["raw"], check=_transport_problem)),
        oracle_fails=tuple(node.strings("oracle_fails", [], check=_transport_problem)),
        validator=parse_validator(validator_node),
        source_file=f"tasks/{rel}",
    )


def _reply(node: Node, key: str) -> str:
    raw: bytes = node.text(key)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        node.fail(key, "a reply must be valid UTF-8 text")
    if not text.strip():
        node.fail(key, "a reply must not be empty")
    return text


def _tag_problem(tag: str) -> str | None:
    key, sep, value = tag.partition("=")
    if not sep or not key or not value:
        return f"tag {tag!r} must have the form key=value"
    if key == "boundary" and value not in vocab.BOUNDARY_KINDS:
        return f"unknown boundary kind {value!r} (known: {', '.join(vocab.BOUNDARY_KINDS)})"
    return None


def _hazard_problem(hazard: str) -> str | None:
    if hazard not in vocab.HAZARDS:
        return f"unknown hazard {hazard!r} (see `boundary-audit tasks hazards` or docs/tasks.md)"
    return None


def _transport_problem(name: str) -> str | None:
    return None if re.fullmatch(TRANSPORT, name) else f"{name!r} is not a transport name"


def _check_consistency(task: Task, node: Node) -> None:
    if len(set(task.hazards)) != len(task.hazards):
        node.fail("hazards", "lists a hazard twice")
    if task.tier == 0 and task.hazards:
        node.fail("hazards", "tier 0 is the control: it must carry no hazard")
    if task.tier > 0 and not task.hazards:
        node.fail("hazards", f"tier {task.tier} must name the hazards it carries")
    both = set(task.oracle_passes) & set(task.oracle_fails)
    if both:
        node.fail("oracle_fails", f"{sorted(both)[0]!r} is also in oracle_passes")
    if task.core:
        _check_core(task, node)
    else:
        _check_boundary(task, node)
    _check_programs(task, node)


def _check_core(task: Task, node: Node) -> None:
    if task.family not in vocab.CORE_FAMILIES:
        node.fail("family", f"{task.family!r} is not one of the 14 core families")
    if task.boundary is not None:
        node.fail("tags", "core tasks carry no boundary= tag")
    if task.naive_breaks not in vocab.CORE_PATHS:
        node.fail(
            "naive_breaks",
            f"a core task's naive reply breaks on raw or nested, not {task.naive_breaks!r}",
        )
    if "raw" not in task.oracle_passes:
        node.fail("oracle_passes", "a core task's oracle must pass on raw")
    if ("nested" in task.oracle_passes) == ("nested" in task.oracle_fails):
        node.fail(
            "oracle_passes", "a core task must declare 'nested' in oracle_passes or oracle_fails"
        )


def _check_boundary(task: Task, node: Node) -> None:
    if task.family in vocab.CORE_FAMILIES:
        node.fail("core", f"tasks of core family {task.family!r} must have core = true")
    kinds = [t for t in task.tags if t.startswith("boundary=")]
    if len(kinds) != 1:
        node.fail("tags", "a task outside the core carries exactly one boundary=<kind> tag")


def _check_programs(task: Task, node: Node) -> None:
    programs = {p.name: p for p in task.fixture.programs}
    wanted: list[tuple[str, str, str]] = [
        (c.program, "argv-recorder", "validator.argv") for c in task.validator.argv
    ]
    wanted += [(c.program, "env-recorder", "validator.env") for c in task.validator.env]
    for name, helper, key in wanted:
        prog = programs.get(name)
        if prog is None or prog.helper != helper:
            node.fail(key, f"program {name!r} must be a fixture program with helper = {helper!r}")
    dirs = _declared_dirs(task.fixture)
    for prog in task.fixture.programs:
        if prog.home is not None and prog.home not in dirs:
            node.fail("fixture.programs", f"remote home {prog.home!r} must be a fixture directory")
    if task.validator.git is not None:
        git = task.fixture.git
        if git is None or git.path != task.validator.git.path:
            node.fail(
                "validator.git.path", "must name the fixture's git repository (fixture.git.path)"
            )


def _declared_dirs(fixture: Fixture) -> set[str]:
    dirs = set(fixture.dirs)
    for f in fixture.files:
        parts = f.path.split("/")[:-1]
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return dirs
