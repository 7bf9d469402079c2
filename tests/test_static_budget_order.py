"""On a sink whose step budget runs out, a list's cheap items (names) are looked at before
its calls, and one parameter's lookup cannot spend the whole budget: the model's `*cmd` or
`command` beside a costly helper call or lookup is not lost to the budget."""

from __future__ import annotations

import pytest

from boundary_audit.static.dataflow import Engine
from boundary_audit.static.dataflow_limits import MAX_STEPS
from boundary_audit.static.extract import extractor_for
from boundary_audit.static.ir import Function, Seq
from boundary_audit.static.parsing import parse
from boundary_audit.static.values import EMPTY, UNKNOWN_OPAQUE, AValue, Lst, Opq, prov_of

SOURCE = b"""
from langchain_core.tools import tool


def path_of(x):
    return "/w/" + x.strip().lower()


@tool
def run(command: list[str]) -> None:
    argv = ["sh", "-lc", 'exec "$@"', "sh", path_of(path_of("a")), *command]
"""


def _argv_and_engine() -> tuple[Seq, Engine]:
    ex = extractor_for("python")("python", "t.py", SOURCE, parse("python", SOURCE))
    fn = next(f for f in ex.all_functions() if f.name == "run")
    seq = ex.filled(fn).defs["argv"][0].value
    assert isinstance(seq, Seq)
    return seq, Engine(ex, None)


def test_a_spread_name_is_evaluated_before_a_call_when_the_budget_runs_out() -> None:
    seq, engine = _argv_and_engine()
    fn = next(f for f in engine.ex.all_functions() if f.name == "run")
    # 17 steps in all (test below); 7 are enough for the literals and `*command`, not for
    # the helper call: evaluated in order, the budget would run out before `*command`
    engine.budget.steps = MAX_STEPS - 7
    value = engine.eval(seq, fn)
    assert isinstance(value, Lst)
    assert [prov_of(i).constant for i in value.items] == [True, True, True, True, False]
    assert value.rest is not None and value.rest.model


def test_with_budget_to_spare_the_value_is_the_same() -> None:
    seq, engine = _argv_and_engine()
    fn = next(f for f in engine.ex.all_functions() if f.name == "run")
    value = engine.eval(seq, fn)
    assert engine.budget.steps == 17
    assert isinstance(value, Lst)
    assert len(value.items) == 5
    assert value.rest is not None and value.rest.model


SIBLINGS = b"""
from langchain_core.tools import tool


@tool
def run(environment: list[str], command: str) -> str:
    return " ".join(environment) + " && " + command
"""


def test_a_parameter_lookup_spends_three_quarters_of_the_steps_left_at_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `environment`'s callers go on without end (a chase through configuration); the lookup
    # is cut at three quarters of what was left, and `command` is still read after it
    ex = extractor_for("python")("python", "t.py", SIBLINGS, parse("python", SIBLINGS))
    fn = next(f for f in ex.all_functions() if f.name == "run")
    engine = Engine(ex, None)
    cut: list[int] = []
    real = Engine._param

    def endless(self: Engine, f: Function, name: str) -> AValue:
        if name != "environment":
            return real(self, f, name)
        while self._guarded(("spin", self.budget.steps), lambda: Opq(EMPTY)) is not UNKNOWN_OPAQUE:
            pass
        cut.append(self.budget.steps)
        return UNKNOWN_OPAQUE

    monkeypatch.setattr(Engine, "_param", endless)
    engine.budget.steps = 1000
    assert engine.param(fn, "environment") is UNKNOWN_OPAQUE
    assert cut == [1000 + (MAX_STEPS - 1000) * 3 // 4 + 1]  # PARAM_SHARE
    assert engine.budget.limit == MAX_STEPS
    command = engine.param(fn, "command")
    assert prov_of(command).model
    assert engine.budget.steps < MAX_STEPS
