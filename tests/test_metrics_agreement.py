"""Adapter vs real-harness agreement: which replies differ, the agreement rate, and errors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from boundary_audit.metrics import Agreement, Disagreement, MetricsInputError, agreement
from tests.test_metrics_study import RunObject, cell_runs, spread


def runs(transport: str, passes: list[int], reply_set: str = "oracle") -> list[dict[str, Any]]:
    return cell_runs(reply_set, transport, passes)


def test_identical_outcomes_agree_fully() -> None:
    adapter = runs("session", spread(50)) + runs("session", spread(9), "naive")
    harness = runs("harness:swe-agent", spread(50)) + runs("harness:swe-agent", spread(9), "naive")
    found = agreement(adapter, harness)
    assert found == Agreement(compared=112, disagreements=())
    assert (found.agreeing, found.rate) == (112, Fraction(1))


def test_differing_tasks_are_listed_in_order() -> None:
    adapter = runs("session-pipe", spread(56))
    harness = runs("harness:langchain", spread(56))
    for run in harness:
        if run["task_id"] in ("sed-replace/t1", "argv-passing/t0"):
            run["passed"] = False
    objects = [RunObject(**r) for r in harness]  # objects and mappings mix freely
    found = agreement(adapter, objects)
    assert found.disagreements == (
        Disagreement("oracle", "argv-passing/t0", "argv-passing", True, False),
        Disagreement("oracle", "sed-replace/t1", "sed-replace", True, False),
    )
    assert (found.compared, found.agreeing, found.rate) == (56, 54, Fraction(27, 28))


def test_unpaired_replies_are_an_input_error() -> None:
    adapter = runs("script-sh", spread(56))
    harness = runs("harness:autogen", spread(56))[:-1]
    with pytest.raises(MetricsInputError) as err:
        agreement(adapter, harness)
    assert str(err.value) == (
        "the adapter and harness runs do not cover the same replies: 1 unpaired, "
        "e.g. task 'ssh-heredoc/t3' of reply set 'oracle' only in the adapter runs"
    )


def test_a_reply_measured_twice_on_one_side_is_an_input_error() -> None:
    adapter = runs("session", spread(56)) + runs("tmux", spread(56))
    with pytest.raises(MetricsInputError) as err:
        agreement(adapter, runs("harness:swe-agent", spread(56)))
    assert str(err.value) == (
        "adapter runs: task 'write-file/t0' of reply set 'oracle' appears twice "
        "(transports 'session' and 'tmux')"
    )


def test_different_replies_or_families_cannot_be_paired() -> None:
    adapter = runs("ssh", spread(56))
    harness = runs("nested", spread(56))
    harness[0]["reply_id"] = "other"
    with pytest.raises(MetricsInputError) as err:
        agreement(adapter, harness, labels=("ssh", "nested"))
    assert str(err.value) == (
        "task 'write-file/t0' of reply set 'oracle': the lists ran different replies "
        "('oracle:write-file/t0' vs 'other')"
    )
    harness[0]["reply_id"], harness[0]["family"] = None, "json-writing"
    with pytest.raises(MetricsInputError, match=r"^task 'write-file/t0' is in family"):
        agreement(adapter, harness)


def test_nothing_to_compare_is_an_input_error() -> None:
    with pytest.raises(MetricsInputError, match=r"^no runs to compare$"):
        agreement([], [])
