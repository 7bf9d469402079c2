"""Partial results given again (`static/replay.py`) change nothing a scan finds or spends.

Every check compares a scan with replays against the same scan with none kept: the findings
and, sink by sink, the steps charged to the sink's budget must be equal. The programs are
generated (seeded): helpers in two files that call each other in cycles, across the files,
through a class attribute, a rebuilt list and a tool entry, so that cycle cuts, capped
parameter lookups, engines made for one call and budgets that run out all occur.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary_audit.static import analyze, replay
from boundary_audit.static.dataflow_limits import MAX_STEPS
from boundary_audit.static.engine import ScanOptions, scan_path
from boundary_audit.static.sinks import FileContext, SinkSite
from boundary_audit.static.values import AValue


def _program(seed: int, root: Path, modules: int = 2) -> None:
    """Python files of helpers `h0..hN` calling each other, and a few sinks."""
    rnd = random.Random(seed)
    n = rnd.randint(4, 14)
    files = [f"tools_{chr(97 + m)}.py" for m in range(modules)]
    head = ["import subprocess", "import shlex", "from agents import function_tool", ""]
    bodies = {f: list(head) for f in files}
    owner = {i: files[rnd.randrange(modules)] for i in range(n)}
    for f in files:
        for g in files:
            others = sorted({f"h{i}" for i in range(n) if owner[i] == g != f})
            if others:
                bodies[f].insert(2, f"from {g[:-3]} import {', '.join(others)}")
    for i in range(n):
        lines = [f"def h{i}(path, flag):"]
        var = "path"
        for k in range(rnd.randint(1, 4)):
            j = rnd.randrange(n)
            pick = rnd.random()
            if pick < 0.4:
                expr = f"h{j}({var}, flag)"
            elif pick < 0.6:
                expr = f"{var} + '/' + h{j}('x', {var})"
            elif pick < 0.75:
                expr = f"shlex.quote({var})"
            elif pick < 0.8:
                expr = "'--opt=' + flag"
            elif pick < 0.85:
                lines.append(f"    out{k} = ['sh']")
                lines.append(f"    for part in [{var}, flag, 'z']:")
                lines.append(f"        out{k}.append(h{j}(part, flag))")
                expr = f"out{k}[1]"
            elif pick < 0.9:
                expr = f"Box({var}).get(flag)"
            else:
                expr = f"h{j}(flag, {var})"
            lines.append(f"    v{k} = {expr}")
            if rnd.random() < 0.5:
                lines += ["    if flag:", f"        {var} = v{k}"]
            else:
                var = f"v{k}"
        bodies[owner[i]] += [*lines, f"    return {var}", ""]
    bodies[files[0]] += [
        "class Box:",
        "    def __init__(self, item):",
        f"        self.item = h{rnd.randrange(n)}(item, 'k')",
        "",
        "    def get(self, flag):",
        f"        self.item = self.item + h{rnd.randrange(n)}(flag, self.item)",
        "        return self.item",
        "",
    ]
    for s in range(rnd.randint(1, 3)):
        f = files[rnd.randrange(modules)]
        if rnd.random() < 0.5:
            bodies[f].append("@function_tool")
        bodies[f] += [
            f"def run_{s}(cmd):",
            f"    subprocess.run(['sh', '-c', h{rnd.randrange(n)}(cmd, cmd)])",
            f"    subprocess.run('ls ' + h{rnd.randrange(n)}(cmd, 'y'), shell=True)",
            "",
        ]
    for f in files:
        (root / f).write_text("\n".join(bodies[f]) + "\n", encoding="utf-8")


Spent = list[tuple[str, int, int]]


@pytest.fixture
def spent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spent]:
    """(path, sink line, steps charged) of every sink evaluated, in order."""
    out: Spent = []
    original = analyze.evaluate_sink

    def recording(site: SinkSite, ctx: FileContext) -> object:
        result = original(site, ctx)
        out.append((ctx.engine.path, site.span.start_point[0] + 1, ctx.engine.budget.steps))
        return result

    monkeypatch.setattr(analyze, "evaluate_sink", recording)
    yield out


@pytest.fixture
def hits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many evaluations a replay answered."""
    count = [0]
    original = replay.replay

    def counting(engine: object, kept: replay.Replay) -> AValue | None:
        value = original(engine, kept)  # type: ignore[arg-type]
        count[0] += value is not None
        return value

    monkeypatch.setattr(replay, "replay", counting)
    yield count


def _scan_both(
    root: Path, spent: Spent, monkeypatch: pytest.MonkeyPatch
) -> tuple[tuple[object, Spent], tuple[object, Spent]]:
    spent.clear()
    """(findings, steps per sink) with replays, then with none kept."""
    options = ScanOptions(jobs=1, scope=False)
    with_replays = scan_path(root, options=options).findings
    first = list(spent)
    spent.clear()
    with monkeypatch.context() as m:
        m.setattr(replay, "keep", lambda *args: None)
        without = scan_path(root, options=options).findings
    return (with_replays, first), (without, list(spent))


SEEDS = [10, 18, 0, 2, 3, 4, 5, 7]
"""10 and 18 gave different step counts while a budget running out in an engine made for
one call did not stop a result from being kept (`Budget.gave_up`)."""


@pytest.mark.parametrize("seed", SEEDS)
def test_a_scan_finds_and_spends_the_same_with_replays_as_without(
    seed: int, tmp_path: Path, spent: Spent, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(seed, tmp_path)
    with_replays, without = _scan_both(tmp_path, spent, monkeypatch)
    assert with_replays[1], "no sink was evaluated"  # the seeds are ones that make sinks
    assert with_replays == without


@pytest.mark.parametrize("seed", [0, 3, 4, 9])
def test_the_same_when_the_corpus_drops_extractors_it_keeps(
    seed: int, tmp_path: Path, spent: Spent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for about two of six files' extractors, the cross-file pass drops and
    rebuilds them while sinks are evaluated: which it drops follows the order of their
    last use, which a replay repeats (`Corpus.retouch`)."""
    from boundary_audit.static import crossfile

    _program(seed, tmp_path, modules=6)
    sizes = sorted(p.stat().st_size for p in tmp_path.iterdir())
    monkeypatch.setattr(crossfile, "MAX_EXTRACTOR_BYTES", sizes[-1] + sizes[-2])
    with_replays, without = _scan_both(tmp_path, spent, monkeypatch)
    assert with_replays[1]
    assert with_replays == without


def test_the_generated_programs_replay_and_run_out_of_steps(
    tmp_path: Path, spent: Spent, hits: list[int]
) -> None:
    """The comparison above is not vacuous: replays answer, and budgets run out."""
    exhausted = 0
    for seed in SEEDS:
        root = tmp_path / str(seed)
        root.mkdir()
        _program(seed, root)
        spent.clear()
        scan_path(root, options=ScanOptions(jobs=1, scope=False))
        exhausted += sum(1 for _, _, steps in spent if steps > MAX_STEPS)
    assert hits[0] > 100
    assert exhausted > 0


def test_the_comparison_sees_a_replay_that_charges_one_step_too_few(
    tmp_path: Path, spent: Spent, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = replay.replay

    def cheap(engine: object, kept: replay.Replay) -> AValue | None:
        value = original(engine, kept)  # type: ignore[arg-type]
        if value is not None:
            engine.budget.steps -= 1  # type: ignore[attr-defined]
        return value

    monkeypatch.setattr(replay, "replay", cheap)
    _program(18, tmp_path)
    with_replays, without = _scan_both(tmp_path, spent, monkeypatch)
    assert with_replays[1] != without[1]


@pytest.mark.parametrize("needed", [*range(0, 40), 99, 100, 101, 2999, 3000, 4000])
def test_unshare_is_the_least_left_whose_share_covers_what_was_needed(needed: int) -> None:
    left = replay.unshare(needed)
    assert replay.share(left) >= needed
    assert left == 0 or replay.share(left - 1) < needed
