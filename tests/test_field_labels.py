"""The field corpus: every label file against its schema, and the benchmark's scoring.

The label files (benchmarks/field/labels/*.json, schema `boundary-audit/field-labels/v1`)
are checked field by field, independently of the benchmark's own `validate`, which is then
tested on hand-broken documents. The scoring functions are tested on small hand-made label
and finding sets with exact figures; the whole benchmark runs once against a fake scanner and
once against the real CLI on a three-function repository built here. No test needs the
harness mirrors.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from boundary_audit.taxonomy import BoundaryClass
from tests.support.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]
LABEL_DIR = ROOT / "benchmarks" / "field" / "labels"
LABEL_FILES = sorted(LABEL_DIR.glob("*.json"))

_spec = importlib.util.spec_from_file_location("field_bench", ROOT / "benchmarks/field/bench.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["field_bench"] = bench
_spec.loader.exec_module(bench)

NINE = {
    "shell-string",
    "shell-stdin",
    "shell-session",
    "tty-keystrokes",
    "argv-direct",
    "script-file",
    "remote-string",
    "nested-string",
    "serialized",
}
TOP_KEYS = ["schema", "repo", "pin", "languages", "scope_excludes", "notes", "sinks"]
SINK_KEYS = [
    "file",
    "line",
    "alt_lines",
    "api",
    "class",
    "model_controlled",
    "second_order",
    "model_data",
    "why",
]


# --- the label files -------------------------------------------------------------------


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_corpus_has_the_fifteen_harnesses() -> None:
    assert [p.name for p in LABEL_FILES] == [
        "OthersideAI+self-operating-computer.json",
        "Pythagora-io+gpt-pilot.json",
        "anomalyco+opencode.json",
        "bosun-ai+kwaak.json",
        "camel-ai+camel.json",
        "continuedev+continue.json",
        "geekan+MetaGPT.json",
        "google+adk-python.json",
        "gptscript-ai+gptscript.json",
        "langroid+langroid.json",
        "microsoft+TaskWeaver.json",
        "openai+openai-agents-js.json",
        "openai+openai-agents-python.json",
        "princeton-nlp+intercode.json",
        "stitionai+devika.json",
    ]


def test_nine_classes_are_the_taxonomy() -> None:
    assert {c.value for c in BoundaryClass} == NINE
    assert list(bench.CLASSES) == [c.value for c in BoundaryClass]


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.stem)
def test_label_file_matches_the_schema_exactly(path: Path) -> None:
    doc = _load(path)
    assert list(doc) == TOP_KEYS
    assert doc["schema"] == "boundary-audit/field-labels/v1"
    assert isinstance(doc["repo"], str)
    assert doc["repo"].replace("/", "+") == path.stem
    assert re.fullmatch(r"[0-9a-f]{40}", doc["pin"])
    assert isinstance(doc["languages"], list) and doc["languages"]
    assert all(isinstance(x, str) for x in doc["languages"])
    assert len(set(doc["languages"])) == len(doc["languages"])
    assert isinstance(doc["notes"], str) and doc["notes"].strip()
    excludes = doc["scope_excludes"]
    assert isinstance(excludes, list) and len(set(excludes)) == len(excludes)
    for p in excludes:
        # A prefix of repository-relative paths: no pattern, no absolute or dot path.
        assert isinstance(p, str) and p
        assert not p.startswith(("/", "./")) and "\\" not in p
        assert not re.search(r"[*?\[]", p)
        assert all(seg not in ("", ".", "..") for seg in p.rstrip("/").split("/"))
    sinks = doc["sinks"]
    assert isinstance(sinks, list) and sinks
    assert [(s["file"], s["line"]) for s in sinks] == sorted((s["file"], s["line"]) for s in sinks)
    assert len({(s["file"], s["line"]) for s in sinks}) == len(sinks)
    for s in sinks:
        assert list(s) == SINK_KEYS
        assert isinstance(s["file"], str) and s["file"] and not s["file"].startswith("/")
        assert type(s["line"]) is int and s["line"] >= 1
        assert isinstance(s["alt_lines"], list)
        for alt in s["alt_lines"]:
            assert isinstance(alt, list) and len(alt) == 2
            assert isinstance(alt[0], str) and alt[0] and not alt[0].startswith("/")
            assert type(alt[1]) is int and alt[1] >= 1
        assert isinstance(s["api"], str) and s["api"]
        assert s["class"] in NINE
        for flag in ("model_controlled", "second_order", "model_data"):
            assert type(s[flag]) is bool
        if s["model_data"]:
            assert not s["model_controlled"]
        if s["second_order"]:
            assert s["model_controlled"]
        assert isinstance(s["why"], str) and s["why"].strip()
        # Every labelled site is in scope, or no finding could ever match it.
        for file in [s["file"], *(a[0] for a in s["alt_lines"])]:
            assert not any(file.startswith(p) for p in excludes), (file, excludes)
    assert bench.validate(doc) == []


def test_corpus_covers_the_languages_the_issue_asks_for() -> None:
    langs = {x for p in LABEL_FILES for x in _load(p)["languages"]}
    assert {"python", "typescript", "go", "rust"} <= langs
    assert sum(s["model_controlled"] for p in LABEL_FILES for s in _load(p)["sinks"]) == 110


# --- validate on broken documents ------------------------------------------------------


def _good() -> dict[str, Any]:
    return {
        "schema": "boundary-audit/field-labels/v1",
        "repo": "owner/name",
        "pin": "0123456789abcdef0123456789abcdef01234567",
        "languages": ["python"],
        "scope_excludes": ["tests/", "setup.py"],
        "notes": "n",
        "sinks": [_sink("a.py", 3), _sink("b.py", 1, mc=False, md=True)],
    }


def _sink(
    file: str,
    line: int,
    cls: str = "shell-string",
    *,
    mc: bool = True,
    so: bool = False,
    md: bool = False,
    alt: list[list[Any]] | None = None,
) -> dict[str, Any]:
    return {
        "file": file,
        "line": line,
        "alt_lines": alt or [],
        "api": "subprocess.run",
        "class": cls,
        "model_controlled": mc,
        "second_order": so,
        "model_data": md,
        "why": "w",
    }


def _broken(change: Any) -> list[str]:
    doc = _good()
    change(doc)
    errors: list[str] = bench.validate(doc)
    return errors


def test_validate_accepts_the_good_document() -> None:
    assert bench.validate(_good()) == []


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda d: d.update(schema="v0"), "schema is 'v0', not 'boundary-audit/field-labels/v1'"),
        (lambda d: d.update(pin="0123abc"), "pin '0123abc' is not 40 lower-case hex digits"),
        (lambda d: d.update(pin="A" * 40), f"pin '{'A' * 40}' is not 40 lower-case hex digits"),
        (lambda d: d.update(repo="name"), "repo 'name' is not owner/name"),
        (
            lambda d: d["scope_excludes"].append("tests/*.py"),
            "scope_excludes entry 'tests/*.py' is a pattern, not a prefix",
        ),
        (
            lambda d: d["scope_excludes"].append("/abs/"),
            "scope_excludes entry '/abs/' is not relative with '/' separators",
        ),
        (
            lambda d: d["scope_excludes"].append("a/../b"),
            "scope_excludes entry 'a/../b' has an empty, '.' or '..' segment",
        ),
        (lambda d: d["scope_excludes"].append("tests/"), "scope_excludes has duplicates"),
        (
            lambda d: d["sinks"][0].update({"class": "shell"}),
            "sinks[0]: class 'shell' is not one of the nine classes",
        ),
        (
            lambda d: d["sinks"][1].update(model_controlled=True),
            "sinks[1]: model_data is true but model_controlled is true",
        ),
        (
            lambda d: d["sinks"][1].update(second_order=True),
            "sinks[1]: second_order is true but model_controlled is false",
        ),
        (
            lambda d: d["sinks"][0].update(line=True),
            "sinks[0]: line True is not a positive integer",
        ),
        (lambda d: d["sinks"][0].update(line=0), "sinks[0]: line 0 is not a positive integer"),
        (
            lambda d: d["sinks"][0].update(model_data=1),
            "sinks[0]: model_data is not a boolean",
        ),
        (
            lambda d: d["sinks"][0].update(alt_lines=[["a.py"]]),
            "sinks[0]: alt_lines entry ['a.py'] is not [file, line]",
        ),
        (
            lambda d: d["sinks"][0].update(alt_lines=[["tests/t.py", 4]]),
            "sinks[0]: alt_lines entry ['tests/t.py', 4] is under a scope_excludes prefix",
        ),
        (
            lambda d: d["sinks"][1].update(file="tests/b.py"),
            "sinks[1]: file 'tests/b.py' is under a scope_excludes prefix",
        ),
        (lambda d: d["sinks"][0].update(why=""), "sinks[0]: why is not a non-empty string"),
        (lambda d: d["sinks"].reverse(), "sinks are not sorted by (file, line)"),
        (
            lambda d: d["sinks"].append(_sink("b.py", 1)),
            "two sinks have the same (file, line)",
        ),
        (lambda d: d["sinks"][0].update(api=None), "sinks[0]: api is not a non-empty string"),
        (
            lambda d: d["sinks"][0].update(model_data=d["sinks"][0].pop("model_data")),
            "sinks[0]: keys ['file', 'line', 'alt_lines', 'api', 'class', 'model_controlled', "
            "'second_order', 'why', 'model_data'] are not exactly ['file', 'line', "
            "'alt_lines', 'api', 'class', 'model_controlled', 'second_order', 'model_data', "
            "'why'] in that order",
        ),
    ],
)
def test_validate_names_each_violation(change: Any, error: str) -> None:
    assert _broken(change) == [error]


def test_validate_wants_the_keys_in_order() -> None:
    def notes_last(d: dict[str, Any]) -> None:
        d["notes"] = d.pop("notes")

    assert _broken(notes_last) == [
        "keys ['schema', 'repo', 'pin', 'languages', 'scope_excludes', 'sinks', 'notes'] "
        "are not exactly ['schema', 'repo', 'pin', 'languages', 'scope_excludes', 'notes', "
        "'sinks'] in that order"
    ]


def test_load_labels_gives_one_line_for_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    doc = _good()
    doc["pin"] = "zz"
    doc["sinks"][0]["class"] = "nope"
    bad.write_text(json.dumps(doc))
    with pytest.raises(bench.BenchError) as info:
        bench.load_labels(bad)
    assert str(info.value) == f"{bad}: pin 'zz' is not 40 lower-case hex digits (and 1 more)"
    bad.write_text("{")
    with pytest.raises(bench.BenchError, match=r"x\.json: not readable as JSON: "):
        bench.load_labels(bad)


# --- scoring ---------------------------------------------------------------------------


def _finding(
    path: str,
    line: int,
    cls: str = "shell-string",
    *,
    mc: bool = True,
    confidence: str = "medium",
    suppressed: dict[str, str] | None = None,
    code: str = "BA101",
) -> dict[str, Any]:
    ann = "model output enters: tool call" if confidence == "medium" else "named like a command: p"
    return {
        "code": code,
        "class": cls,
        "model_controlled": mc,
        "confidence": confidence,
        "sink": "subprocess.run",
        "path": path,
        "line": line,
        "related": [{"annotation": ann, "path": path, "line": line - 1}] if mc else [],
        "suppressed": suppressed,
    }


def _doc(sinks: list[dict[str, Any]], excludes: list[str] | None = None) -> dict[str, Any]:
    doc = _good()
    doc["scope_excludes"] = ["tests/"] if excludes is None else excludes
    doc["sinks"] = sinks
    return doc


def test_score_on_a_hand_made_harness() -> None:
    doc = _doc(
        [
            _sink("a.py", 10),  # A: hit by f1, same class
            _sink("a.py", 40, "tty-keystrokes", so=True),  # B: only a non-model finding
            _sink("a.py", 60, "argv-direct", mc=False, md=True),  # D: model data
            _sink("a.py", 70, "argv-direct", mc=False),  # E: fixed command
            _sink("b.py", 5, "remote-string", alt=[["a.py", 80]]),  # C: hit via alt line
        ]
    )
    findings = [
        _finding("a.py", 12),  # f1 TP for A
        _finding("a.py", 40, "tty-keystrokes", mc=False),  # f6 not reported, sees B
        _finding("a.py", 61, "argv-direct"),  # f3 FP at a model_data label
        _finding("a.py", 70, "argv-direct", confidence="low"),  # f4 FP at a non-model label
        _finding("a.py", 81, "nested-string", confidence="low", code="BA102"),  # f2 TP for C
        _finding("a.py", 200),  # f5 FP unlabelled
        _finding("a.py", 10, suppressed={"kind": "inline", "reason": "r"}),  # not reported
        _finding("tests/t.py", 1),  # out of scope
    ]
    s, lists = bench.score(doc, findings)
    assert s.counts() == {
        "labels_mc": 3,
        "labels_first_order": 2,
        "labels_by_class": {"tty-keystrokes": 1, "remote-string": 1, "shell-string": 1},
        "findings": 8,
        "out_of_scope": 1,
        "suppressed": 1,
        "reported": 5,
        "tp": 2,
        "tp_first_order": 2,
        "tp_by_class": {"remote-string": 1, "shell-string": 1},
        "fp": 3,
        "fp_model_data": 1,
        "fp_not_model": 1,
        "fp_unlabelled": 1,
        "class_match": 1,
        "name_only_tp": 1,
        "seen": 3,
    }
    assert s.figures() == {
        "recall": 0.6667,
        "recall_first_order": 1.0,
        "recall_by_class": {"tty-keystrokes": 0.0, "remote-string": 1.0, "shell-string": 1.0},
        "precision": 0.4,
        "precision_lenient": 0.5,
        "class_accuracy": 0.5,
        "name_only_share": 0.5,
        "seen": 1.0,
    }
    assert [m["label"] for m in lists["missed"]] == ["a.py:40"]
    assert lists["missed"][0]["seen_as"] == {
        "finding": "a.py:40",
        "code": "BA101",
        "class": "tty-keystrokes",
        "model_controlled": False,
    }
    assert [(f["finding"], f["matches"]) for f in lists["false_positives"]] == [
        ("a.py:61", "model_data"),
        ("a.py:70", "not_model"),
        ("a.py:200", "unlabelled"),
    ]
    assert lists["false_positives"][1]["evidence"] == "name p @a.py:69"
    assert lists["class_mismatches"] == [
        {
            "label": "b.py:5",
            "finding": "a.py:81",
            "label_class": "remote-string",
            "class": "nested-string",
            "code": "BA102",
            "name_only": True,
            "evidence": "name p @a.py:80",
        }
    ]
    assert [(t["label"], t["finding"]) for t in lists["true_positives"]] == [
        ("a.py:10", "a.py:12"),
        ("b.py:5", "a.py:81"),
    ]


def test_empty_denominators_are_none_not_zero() -> None:
    s, _ = bench.score(_doc([_sink("a.py", 1, mc=False)]), [])
    assert s.figures() == {
        "recall": None,
        "recall_first_order": None,
        "recall_by_class": {},
        "precision": None,
        "precision_lenient": None,
        "class_accuracy": None,
        "name_only_share": None,
        "seen": None,
    }


def test_lenient_leaves_out_only_findings_at_model_data_labels() -> None:
    doc = _doc([_sink("a.py", 1, mc=False, md=True), _sink("a.py", 50, mc=False)])
    s, _ = bench.score(doc, [_finding("a.py", 2), _finding("a.py", 50)])
    assert (s.reported, s.tp, s.fp_model_data, s.fp_not_model) == (2, 0, 1, 1)
    assert s.figures()["precision"] == 0.0
    assert s.figures()["precision_lenient"] == 0.0  # 0 / (2 - 1)
    s, _ = bench.score(doc, [_finding("a.py", 2)])
    assert s.figures()["precision"] == 0.0
    assert s.figures()["precision_lenient"] is None  # 0 / (1 - 1)


def test_micro_average_sums_counts_before_dividing() -> None:
    one, _ = bench.score(_doc([_sink("a.py", 1)]), [_finding("a.py", 1)])
    three, _ = bench.score(
        _doc([_sink("a.py", 1), _sink("a.py", 10), _sink("a.py", 20)]), [_finding("a.py", 30)]
    )
    total = bench.Score()
    total += one
    total += three
    # Micro: 1 of 4 labels, 1 of 2 findings (the macro mean would be 0.5 and 0.75).
    assert total.figures()["recall"] == 0.25
    assert total.figures()["precision"] == 0.5
    assert total.counts()["labels_by_class"] == {"shell-string": 4}


@pytest.mark.parametrize(
    ("path", "line", "expect"),
    [
        ("a.py", 13, (3, 0)),
        ("a.py", 7, (3, 0)),
        ("a.py", 14, None),
        ("a.py", 6, None),
        ("b.py", 10, None),
        ("c.py", 98, (2, 1)),
        ("c.py", 104, None),
    ],
)
def test_distance_is_within_three_lines_of_the_line_or_an_alt_line(
    path: str, line: int, expect: tuple[int, int] | None
) -> None:
    label = _sink("a.py", 10, alt=[["c.py", 100]])
    assert bench.distance(label, _finding(path, line)) == expect


def test_primary_line_beats_alt_line_at_the_same_distance() -> None:
    label = _sink("a.py", 10, alt=[["a.py", 14]])
    assert bench.distance(label, _finding("a.py", 12)) == (2, 0)
    label = _sink("a.py", 10, alt=[["a.py", 20]])
    assert bench.distance(label, _finding("a.py", 15)) is None
    # 2 from the alt line (reported first) against 2 from the label's own line.
    assert bench.match([label], [_finding("a.py", 22), _finding("a.py", 12)]) == [(0, 1)]


def test_each_label_and_finding_matched_once() -> None:
    labels = [_sink("a.py", 10), _sink("a.py", 12)]
    assert bench.match(labels, [_finding("a.py", 11)]) == [(0, 0)]  # tie: first label
    assert bench.match([_sink("a.py", 10)], [_finding("a.py", 10)] * 3) == [(0, 0)]


def test_ties_go_to_the_closer_then_first_label_and_first_finding() -> None:
    one = [_sink("a.py", 10)]
    assert bench.match(one, [_finding("a.py", 8), _finding("a.py", 12)]) == [(0, 0)]
    assert bench.match(one, [_finding("a.py", 12), _finding("a.py", 8)]) == [(0, 0)]
    assert bench.match(one, [_finding("a.py", 12), _finding("a.py", 11)]) == [(0, 1)]
    two = [_sink("a.py", 10), _sink("a.py", 14)]
    assert bench.match(two, [_finding("a.py", 12)]) == [(0, 0)]
    assert bench.match(two, [_finding("a.py", 13)]) == [(1, 0)]  # closer label wins


def test_least_total_distance_then_pairs_in_order() -> None:
    labels = [_sink("a.py", 10), _sink("a.py", 11)]
    # (10,12)+(11,9) is 4 lines in all, (10,9)+(11,12) is 2: the second.
    assert bench.match(labels, [_finding("a.py", 12), _finding("a.py", 9)]) == [(0, 1), (1, 0)]
    # Labels at 10 and 12, two findings at 11: every pairing costs the same, so labels and
    # findings pair in order.
    labels = [_sink("a.py", 10), _sink("a.py", 12)]
    assert bench.match(labels, [_finding("a.py", 11), _finding("a.py", 11)]) == [(0, 0), (1, 1)]


def test_matching_has_the_most_pairs_not_the_greedy_ones() -> None:
    # Greedy by distance would pair the label at 10 with the finding at 11 (distance 1) and
    # leave the label at 13 without its only candidate.
    labels = [_sink("a.py", 10), _sink("a.py", 13)]
    findings = [_finding("a.py", 11), _finding("a.py", 8)]
    assert bench.match(labels, findings) == [(0, 1), (1, 0)]
    s, lists = bench.score(_doc(labels), findings)
    assert (s.tp, s.fp, lists["missed"]) == (2, 0, [])


def test_a_model_controlled_label_takes_the_finding_before_a_non_model_one() -> None:
    doc = _doc([_sink("a.py", 10, mc=False, md=True), _sink("a.py", 12)])
    s, lists = bench.score(doc, [_finding("a.py", 10)])
    assert (s.tp, s.fp, s.fp_model_data) == (1, 0, 0)
    assert lists["true_positives"][0]["label"] == "a.py:12"


def test_scope_excludes_are_prefixes() -> None:
    ex = ["tests/", "evaluate.py"]
    assert not bench.in_scope("tests/x.py", ex)
    assert bench.in_scope("tests_x.py", ex)
    assert bench.in_scope("src/tests/x.py", ex)
    assert not bench.in_scope("evaluate.py", ex)
    assert not bench.in_scope("evaluate.py.bak", ex)  # a prefix, as LABELLING.md says


def test_only_takes_a_stem_a_repo_or_a_name(tmp_path: Path) -> None:
    files = [tmp_path / "owner+tool.json", tmp_path / "other+thing.json"]
    for want in ("owner+tool", "OWNER/Tool", "tool", "owner+tool.json"):
        assert bench.select(files, [want]) == [files[0]]
    assert bench.select(files, []) == files
    assert bench.select(files, ["thing", "tool", "tool"]) == sorted(files)
    with pytest.raises(bench.BenchError, match=r"^--only 'owner' names no label file"):
        bench.select(files, ["owner"])


def test_bench_json_that_cannot_be_written_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels, mirrors, _ = _corpus(tmp_path)
    scanner = _fake_scanner(tmp_path, [])
    out = tmp_path / "no-such-dir" / "out.json"
    argv = ["--labels", str(labels), "--mirrors", str(mirrors), "--scanner", str(scanner)]
    assert bench.main([*argv, "--only", "tool", "--json", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("scanned owner+tool from ")
    assert err[1].startswith(f"bench: cannot write {out}: [Errno 2] No such file or directory")
    assert len(err) == 2


def test_reported_means_active_model_controlled_in_scope() -> None:
    fs = [
        _finding("a.py", 1),
        _finding("a.py", 2, mc=False),
        _finding("a.py", 3, suppressed={"kind": "baseline", "reason": "b"}),
        _finding("tests/a.py", 4),
    ]
    assert [f["line"] for f in bench.reported(fs, ["tests/"])] == [1]


def test_name_only_needs_low_confidence_and_no_traced_origin() -> None:
    assert bench.name_only(_finding("a.py", 1, confidence="low"))
    assert not bench.name_only(_finding("a.py", 1))
    traced_low = _finding("a.py", 1, confidence="low")
    traced_low["related"] = [{"annotation": "model output enters: x", "path": "a.py", "line": 1}]
    assert not bench.name_only(traced_low)
    assert not bench.name_only(_finding("a.py", 1, mc=False, confidence="low"))
    assert bench.evidence(_finding("a.py", 1, mc=False, confidence="low")) == "no model origin"


def test_name_only_follows_model_evidence_when_the_report_has_it() -> None:
    named = _finding("a.py", 1)
    named["model_evidence"] = "name"
    assert bench.name_only(named)  # medium confidence, yet the level says name
    for level in ("traced", "tool-entry", None):
        low = _finding("a.py", 1, confidence="low")
        low["model_evidence"] = level
        assert not bench.name_only(low), level


# --- mirrors and the whole benchmark ---------------------------------------------------


def test_find_mirror_by_pin_name_first_then_forks(tmp_path: Path) -> None:
    upstream = make_repo(tmp_path / "m" / "owner+tool" / "repo", {"a": "1\n"}, bare=True)
    fork = make_repo(tmp_path / "m" / "other+tool" / "repo", {"a": "2\n"}, bare=True)
    make_repo(tmp_path / "m" / "zz+unrelated", {"a": "3\n"})  # a work tree
    dirs = bench.git_dirs([str(tmp_path / "m")])
    assert [d.relative_to(tmp_path / "m").as_posix() for d in dirs] == [
        "other+tool/repo",
        "owner+tool/repo",
        "zz+unrelated/.git",
    ]
    assert bench.find_mirror("owner/tool", upstream, dirs) == tmp_path / "m/owner+tool/repo"
    assert bench.find_mirror("owner/tool", fork, dirs) == tmp_path / "m/other+tool/repo"
    assert bench.find_mirror("owner/tool", "0" * 40, dirs) is None
    assert bench.git_dirs([str(tmp_path / "m" / "*" / "repo")]) == dirs[:2]


FAKE = """\
import json, sys
if sys.argv[1] == "--version":
    print("boundary-audit 9.9.9")
    sys.exit(0)
if "{fail}" == "yes":
    print("scan: broken", file=sys.stderr)
    sys.exit(3)
pin = sys.argv[2].rsplit("@", 1)[1]
findings = {findings}
print(json.dumps({{"schema": "boundary-audit/v1", "commit": pin, "summary": {{}},
                  "findings": findings}}))
"""


def _fake_scanner(tmp_path: Path, findings: list[dict[str, Any]], fail: bool = False) -> Path:
    prog = tmp_path / "fake-boundary-audit"
    body = FAKE.format(findings=repr(findings), fail="yes" if fail else "no")
    prog.write_text(f"#!{sys.executable}\n{body}")
    prog.chmod(0o755)
    return prog


def _corpus(tmp_path: Path) -> tuple[Path, Path, str]:
    labels = tmp_path / "labels"
    labels.mkdir()
    pin = make_repo(tmp_path / "mirrors" / "owner+tool" / "repo", {"a.py": "x\n"}, bare=True)
    doc = _doc([_sink("a.py", 10), _sink("a.py", 30)])
    doc.update(repo="owner/tool", pin=pin)
    (labels / "owner+tool.json").write_text(json.dumps(doc))
    gone = copy.deepcopy(doc)
    gone.update(repo="owner/gone", pin="f" * 40)
    (labels / "owner+gone.json").write_text(json.dumps(gone))
    return labels, tmp_path / "mirrors", pin


def test_bench_scores_and_lists_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels, mirrors, pin = _corpus(tmp_path)
    scanner = _fake_scanner(tmp_path, [_finding("a.py", 11), _finding("a.py", 90)])
    out = tmp_path / "out.json"
    argv = ["--labels", str(labels), "--mirrors", str(mirrors), "--scanner", str(scanner)]
    assert bench.main([*argv, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| owner+gone | python | 2 (0) | **missing** |" in text
    assert (
        "| owner+tool | python | 2 (0) | 2 | 1 | 0.50 | 0.50 | 0.50 | 0.50 | 1.00 "
        "| 0/1 (0.00) | 1/2 |" in text
    )
    assert "missing: owner+gone (owner/gone@ffffffffffff): no mirror has the pin" in text
    assert "scanner: boundary-audit 9.9.9 at " in text
    assert "load average " in text
    data = json.loads(out.read_text())
    assert data["overall"]["scored"] == 1 and data["overall"]["missing"] == 1
    assert data["overall"]["figures"]["recall"] == 0.5
    gone, tool = data["harnesses"]
    assert gone == {
        "name": "owner+gone",
        "repo": "owner/gone",
        "pin": "f" * 40,
        "languages": ["python"],
        "status": "missing",
    }
    assert tool["status"] == "scanned" and tool["mirror"] == str(mirrors / "owner+tool/repo")
    assert tool["pin"] == pin
    assert [m["label"] for m in tool["missed"]] == ["a.py:30"]
    assert [f["finding"] for f in tool["false_positives"]] == ["a.py:90"]
    assert tool["wall_s"] > 0 and tool["cpu_s"] > 0


def test_bench_failed_scan_is_an_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels, mirrors, _ = _corpus(tmp_path)
    scanner = _fake_scanner(tmp_path, [], fail=True)
    argv = ["--labels", str(labels), "--mirrors", str(mirrors), "--scanner", str(scanner)]
    assert bench.main([*argv, "--only", "owner/tool"]) == 1
    text = capsys.readouterr().out
    assert "failed: owner+tool: exit 3: scan: broken" in text
    assert "| owner+tool | python | 2 (0) | **scan failed** |" in text


def test_bench_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels, mirrors, _ = _corpus(tmp_path)
    assert bench.main(["--labels", str(labels), "--only", "nothing"]) == 2
    err = capsys.readouterr().err
    assert err == "bench: --only 'nothing' names no label file (have: owner+gone, owner+tool)\n"
    (labels / "owner+tool.json").write_text('{"schema": 1}')
    assert bench.main(["--labels", str(labels), "--mirrors", str(mirrors)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"bench: {labels / 'owner+tool.json'}: keys ")


AGENT = """\
import subprocess

from langchain_core.tools import tool
from openai import OpenAI

client = OpenAI()


@tool
def run_tool(cmd):
    return subprocess.run(cmd, shell=True)


def step():
    r = client.chat.completions.create(model="x", messages=[])
    return subprocess.run(r.choices[0].message.content, shell=True)
"""


def test_bench_reads_the_real_cli_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fields the scoring reads are the ones the installed CLI writes (no fake)."""
    labels = tmp_path / "labels"
    labels.mkdir()
    files: dict[str | bytes, Any] = {
        "agent.py": AGENT,
        "tests/test_agent.py": "import os\nos.system(input())\n",
    }
    pin = make_repo(tmp_path / "mirrors" / "o+agent" / "repo", files, bare=True)
    doc = _doc([_sink("agent.py", 11, mc=False), _sink("agent.py", 16)], excludes=["tests/"])
    doc.update(repo="o/agent", pin=pin)
    (labels / "o+agent.json").write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    argv = ["--labels", str(labels), "--mirrors", str(tmp_path / "mirrors"), "--json", str(out)]
    assert bench.main(argv) == 0
    capsys.readouterr()
    (entry,) = json.loads(out.read_text())["harnesses"]
    assert entry["counts"]["reported"] == 2
    # the scanner itself leaves tests/ out (its scope), so no finding there reaches the bench
    assert entry["counts"]["out_of_scope"] == 0
    assert entry["true_positives"] == [
        {
            "label": "agent.py:16",
            "finding": "agent.py:16",
            "label_class": "shell-string",
            "class": "shell-string",
            "code": "BA101",
            "name_only": False,
            "evidence": "traced client.chat.completions.create(…) @agent.py:15",
        }
    ]
    (fp,) = entry["false_positives"]
    assert (fp["finding"], fp["matches"], fp["confidence"]) == (
        "agent.py:11",
        "not_model",
        "medium",
    )
    assert fp["evidence"] == "tool-entry parameter `cmd` of tool `run_tool` (@tool) @agent.py:10"
    assert entry["figures"]["name_only_share"] == 0.0
    assert entry["figures"]["precision"] == 0.5
