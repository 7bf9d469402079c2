"""The main pass and the cross-file pass share one parse of each file (bounded caches).

`a_caller.py` is analysed before the file it calls into, so the cross-file pass reuses the
tree the main pass kept; `b_tools.py` is traced into `c_caller.py` before the main pass
reaches it, so the main pass reuses the cross-file pass's extractor. The findings are those
of a scan that keeps nothing. (The callers' comments name a shell: a file without any sink's
text is never parsed by the main pass, `analyze.may_have_sites`.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter as ts

from boundary_audit.finding import Finding
from boundary_audit.static import analyze, crossfile, parsing
from boundary_audit.static.dataflow import Engine
from boundary_audit.static.engine import ScanOptions, scan_path
from tests.support.parses import record_parses

FILES = {
    "a_caller.py": (
        "import json\n"
        "\n"
        "from b_tools import run_tool_cmd\n"
        "\n"
        "\n"
        "def handle(reply):\n"
        "    args = json.loads(reply.tool_calls[0].function.arguments)  # a shell command\n"
        '    return run_tool_cmd(args["command"])\n'
    ),
    "b_tools.py": (
        "import subprocess\n"
        "\n"
        "\n"
        "def run_tool_cmd(command):\n"
        "    return subprocess.run(command, shell=True, capture_output=True)\n"
    ),
    "c_caller.py": (
        "from b_tools import run_tool_cmd\n"
        "\n"
        "\n"
        "def again(text):\n"
        '    return run_tool_cmd("ls " + text)  # a shell command\n'
    ),
}


def _scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Finding], list[str]]:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    parsed: list[str] = []
    real = parsing.parse

    def counting(lang: str, data: bytes) -> ts.Tree:
        parsed.append(next(n for n, t in FILES.items() if t.encode() == data))
        return real(lang, data)

    monkeypatch.setattr(crossfile, "parse", counting)
    monkeypatch.setattr(analyze, "parse", counting)
    result = scan_path(tmp_path, options=ScanOptions(jobs=1))
    return list(result.findings), parsed


def test_each_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found, parsed = _scan(tmp_path, monkeypatch)
    assert sorted(parsed) == sorted(FILES)
    [f] = found
    assert (f.code, f.primary.path, f.primary.start_line, f.model_controlled) == (
        "BA101",
        "b_tools.py",
        5,
        True,
    )
    assert [(r.path, r.start_line, r.annotation) for r in f.related] == [
        ("a_caller.py", 7, "model output enters: reply.tool_calls"),
        ("a_caller.py", 8, "passed as `command` to run_tool_cmd()"),
    ]


def test_findings_do_not_depend_on_the_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached, _ = _scan(tmp_path, monkeypatch)
    monkeypatch.setattr(crossfile, "MAX_RECENT_BYTES", 0)
    monkeypatch.setattr(crossfile, "MAX_EXTRACTOR_BYTES", 0)
    uncached, parsed = _scan(tmp_path, monkeypatch)
    assert len(parsed) > len(FILES)  # the cross-file pass parsed again what it traced into
    assert uncached == cached


def test_the_kept_trees_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crossfile, "MAX_RECENT_BYTES", 100)
    files = {f"m{i}.py": ("python", f"x{i} = {'1' * 40}\n".encode()) for i in range(6)}
    corpus = crossfile.Corpus(files)
    trees = [corpus.tree(p, lang, data) for p, (lang, data) in files.items()]
    assert list(corpus._recent) == ["m4.py", "m5.py"]  # the latest within 100 source bytes
    assert corpus._recent_bytes == 92  # 46 each
    assert corpus.tree("m5.py", "python", files["m5.py"][1]) is trees[5]
    assert corpus.extractor("m5.py") is not None and corpus.extractor("m5.py").tree is trees[5]
    assert "m5.py" not in corpus._recent and corpus._recent_bytes == 46
    # content other than the corpus's is parsed afresh and not kept
    other = corpus.tree("m0.py", "python", b"y = 2\n")
    assert other.root_node.text == b"y = 2\n" and "m0.py" not in corpus._recent
    assert corpus.main_extractor("m0.py", other) is None


def _bounded(monkeypatch: pytest.MonkeyPatch, limit: int, texts: list[str]) -> crossfile.Corpus:
    """A corpus of Python files `m0.py`... with no kept trees and `limit` extractor bytes."""
    monkeypatch.setattr(crossfile, "MAX_RECENT_BYTES", 0)
    monkeypatch.setattr(crossfile, "MAX_EXTRACTOR_BYTES", limit)
    return crossfile.Corpus({f"m{i}.py": ("python", t.encode()) for i, t in enumerate(texts)})


def test_the_kept_extractors_are_bounded_by_their_source_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = _bounded(monkeypatch, 100, [f"x{i} = {'1' * 40}\n" for i in range(4)])
    first = corpus.extractor("m0.py")
    assert first is not None and corpus.extractor("m0.py") is first  # kept, not rebuilt
    corpus.extractor("m1.py")
    assert list(corpus._extractors) == ["m0.py", "m1.py"] and corpus._extractor_bytes == 92
    corpus.extractor("m0.py")  # used again: now the most recent
    corpus.extractor("m2.py")  # 138 bytes: the least recently used (m1.py) goes
    assert list(corpus._extractors) == ["m0.py", "m2.py"] and corpus._extractor_bytes == 92
    assert corpus.extractor("m0.py") is first
    monkeypatch.setattr(crossfile, "MAX_EXTRACTOR_BYTES", 0)
    corpus.extractor("m3.py")  # over any bound, the latest is still kept
    assert list(corpus._extractors) == ["m3.py"] and corpus._extractor_bytes == 46


def test_a_dropped_extractor_a_shared_engine_holds_is_taken_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # dropping it would drop the engine and what it memoised: a lookup after the bound
    # dropped the file would take other steps than one before, so findings would depend on it
    corpus = _bounded(monkeypatch, 0, [f"def f{i}(x):\n    return x\n" for i in range(3)])
    files = corpus.files
    parsed = record_parses(monkeypatch, crossfile)
    held = corpus.extractor("m0.py")
    main = corpus.extractor("m1.py")  # over the bound: m0.py is dropped
    assert held is not None and main is not None and list(corpus._extractors) == ["m1.py"]
    parent = Engine(main, corpus)
    engine = corpus.engine_for(held, parent, shared=True)
    memo = engine._memo
    corpus.extractor("m2.py")
    again = corpus.extractor("m0.py")
    assert again is held and corpus.engine_for(again, parent, shared=True) is engine
    assert engine._memo is memo and list(corpus._extractors) == ["m0.py"]
    assert corpus.churn == 3  # m0.py, m1.py, m2.py dropped in turn
    assert parsed == [files["m0.py"][1], files["m1.py"][1], files["m2.py"][1]]
    corpus.begin_file()  # the engines go: a dropped file is parsed again
    corpus.extractor("m1.py")
    assert parsed[3:] == [files["m1.py"][1]]


TYPED = {
    "a_interp.py": (
        "import subprocess\n"
        "\n"
        "\n"
        "class ShellInterpreter:\n"
        "    def run(self, code):\n"
        "        return subprocess.run(code, shell=True, capture_output=True)\n"
    ),
    "b_agent.py": (
        "import json\n"
        "\n"
        "from a_interp import ShellInterpreter\n"
        "\n"
        "\n"
        "class Agent:\n"
        "    def __init__(self):\n"
        "        self.interpreter = ShellInterpreter()\n"
        "\n"
        "    def step(self, reply):\n"
        "        args = json.loads(reply.tool_calls[0].function.arguments)\n"
        '        return self.interpreter.run(args["code"])\n'
    ),
    "c_registry.py": (
        'from a_interp import ShellInterpreter\n\nINTERPRETERS = {"shell": ShellInterpreter}\n'
    ),
}


def test_a_file_that_only_names_the_class_is_not_read_for_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `run` is a common name: its callers are looked for in the files naming its class, and
    # c_registry.py names the class but has no `run` in it
    for name, text in TYPED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    asked: list[str] = []
    real = crossfile.Corpus.extractor

    def recording(self: crossfile.Corpus, path: str) -> object:
        asked.append(path)
        return real(self, path)

    monkeypatch.setattr(crossfile.Corpus, "extractor", recording)
    [f] = scan_path(tmp_path, options=ScanOptions(jobs=1)).findings
    assert (f.code, f.primary.path, f.primary.start_line, f.model_controlled) == (
        "BA101",
        "a_interp.py",
        6,
        True,
    )
    assert [(r.path, r.start_line) for r in f.related] == [("b_agent.py", 11), ("b_agent.py", 12)]
    assert "b_agent.py" in asked and "c_registry.py" not in asked
