"""Run records: validation into `RunRecord`, grouping into cells, the errors of bad records."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from boundary_audit.errors import BoundaryAuditError, ExitCode
from boundary_audit.metrics import (
    MetricsInputError,
    Outcomes,
    RunLike,
    TaskResult,
    as_run,
    as_runs,
    cell,
    cells,
)
from boundary_audit.record import RunRecord
from tests.test_metrics_study import RunObject


def record(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_id": "write-file/t3", "family": "write-file", "tier": 3, "core": True,
        "transport": "nested", "reply_set": "oracle", "reply_id": "r1", "contract": None,
        "model": None, "passed": False,
    }  # fmt: skip
    base.update(changes)
    return base


def test_mapping_and_object_records_give_the_same_run() -> None:
    from_dict = as_run(record())
    from_object = as_run(RunObject(**record()))
    assert from_dict == from_object == RunRecord(**record())
    assert isinstance(from_object, RunLike)
    assert as_run(from_dict) is from_dict


def test_optional_fields_accept_null_and_contracts_are_checked() -> None:
    run = as_run(record(reply_id=None, contract="disclosed", model="GPT-5.5"))
    assert (run.reply_id, run.contract, run.model) == (None, "disclosed", "GPT-5.5")
    with pytest.raises(MetricsInputError) as err:
        as_run(record(contract="natvie"), index=4)
    assert str(err.value) == (
        "run record 4: contract must be one of raw, disclosed, native or null, not 'natvie'"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"passed": "yes"}, "run record 2: field 'passed' must be bool, not 'yes'"),
        ({"passed": 1}, "run record 2: field 'passed' must be bool, not 1"),
        ({"tier": True}, "run record 2: field 'tier' must be int, not True"),
        ({"tier": "3"}, "run record 2: field 'tier' must be int, not '3'"),
        ({"task_id": ""}, "run record 2: field 'task_id' must not be empty"),
        ({"family": None}, "run record 2: field 'family' must be str, not None"),
        ({"model": 5}, "run record 2: field 'model' must be str or null, not 5"),
    ],
)
def test_bad_fields_name_the_record_and_field(changes: dict[str, Any], message: str) -> None:
    records = [record(), record(task_id="b"), record(**changes)]
    with pytest.raises(MetricsInputError) as err:
        as_runs(records)
    assert str(err.value) == message
    assert err.value.exit_code is ExitCode.INPUT
    assert isinstance(err.value, BoundaryAuditError)


def test_a_missing_field_is_named_for_mappings_and_objects() -> None:
    incomplete = record()
    del incomplete["passed"]
    with pytest.raises(MetricsInputError, match=r"^run record 0: missing field 'passed'$"):
        as_runs([incomplete])

    class Empty:
        pass

    with pytest.raises(MetricsInputError, match=r"^run record: missing field 'task_id'$"):
        as_run(Empty())  # type: ignore[arg-type]


def test_cells_group_by_reply_set_and_transport_in_sorted_order() -> None:
    records = [
        record(task_id="b", transport="raw", passed=True),
        record(task_id="a", transport="raw"),
        record(task_id="a", reply_set="naive"),
        record(task_id="a"),
    ]
    grouped = cells(records)
    assert list(grouped) == [("naive", "nested"), ("oracle", "nested"), ("oracle", "raw")]
    raw = grouped[("oracle", "raw")]
    assert [(r.task_id, r.passed) for r in raw] == [("a", False), ("b", True)]
    assert raw.by_task["b"] == TaskResult("b", "write-file", 3, True, True, "r1")
    assert len(raw) == 2


def test_a_task_twice_in_one_cell_is_an_input_error() -> None:
    with pytest.raises(MetricsInputError) as err:
        cells([record(), record(passed=True)])
    assert str(err.value) == (
        "task 'write-file/t3' appears twice in cell (reply set 'oracle', transport 'nested')"
    )


def test_cell_picks_one_cell_or_says_which_exist() -> None:
    records = [record(), record(transport="raw")]
    assert cell(records, reply_set="oracle", transport="raw").transport == "raw"
    with pytest.raises(MetricsInputError) as err:
        cell(records, reply_set="naive", transport="raw")
    assert str(err.value) == (
        "no runs for reply set 'naive' through transport 'raw' (have: oracle/nested, oracle/raw)"
    )


def test_subset_by_tier_core_and_family() -> None:
    results = (
        TaskResult("w/t0", "w", 0, True, True),
        TaskResult("w/t1", "w", 1, True, False),
        TaskResult("s/t1", "s", 1, False, True),
    )
    outcomes = Outcomes("oracle", "raw", results)
    assert [r.task_id for r in outcomes] == ["s/t1", "w/t0", "w/t1"]
    assert [r.task_id for r in outcomes.subset(tiers={1, 2, 3})] == ["s/t1", "w/t1"]
    assert [r.task_id for r in outcomes.subset(core=True)] == ["w/t0", "w/t1"]
    assert [r.task_id for r in outcomes.subset(families={"s"})] == ["s/t1"]
    assert list(outcomes.by_family()) == ["s", "w"]


def test_runs_round_trip_through_asdict() -> None:
    run = as_run(record())
    assert as_run(asdict(run)) == run
