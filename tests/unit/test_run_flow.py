"""bench/run_flow.py's recording of a run's flow, without Spark: what it keeps, how deep,
and how the page reads (docs/flow/)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from run_flow import FlowRecorder, FlowStep, collapsed, markdown  # noqa: E402

MATERIALIZATION = "materialization_mutable_table_jammi"


def test_only_what_runs_inside_the_materialization_is_recorded():
    flow = FlowRecorder()
    flow.enter_macro("generate_schema_name", "")  # dbt's, before the model runs
    flow.leave_macro()
    flow.enter_python("mutable_table/run_config", "run_definition")
    flow.leave_python()
    flow.enter_macro(MATERIALIZATION, "macros/mutable_table/mutable_table.sql")
    flow.enter_macro("load_relation", "")
    flow.leave_macro()
    flow.leave_macro()
    flow.enter_macro("persist_docs", "")  # after the materialization returned
    flow.leave_macro()
    assert flow.steps == [
        FlowStep(0, "macro", MATERIALIZATION, "macros/mutable_table/mutable_table.sql"),
        FlowStep(1, "dbt macro", "load_relation", ""),
    ]


def test_python_nests_under_its_macro_to_the_depth_asked_without_plumbing():
    flow = FlowRecorder(python_depth=2)
    flow.enter_macro(MATERIALIZATION, "macros/mutable_table/mutable_table.sql")
    flow.enter_python("mutable_table/run_service", "MutableRunService.run_start")
    flow.enter_python("mutable_table/run_start", "writes_first")
    flow.enter_python("mutable_table/run_start", "too_deep")
    flow.leave_python()
    flow.leave_python()
    flow.enter_python("common/sql_session", "SqlSession.trusted")  # plumbing
    flow.enter_python("connections", "JammiConnectionManager.execute")  # its callee
    flow.leave_python()
    flow.leave_python()
    flow.enter_python("mutable_table/run_start", "<listcomp>")
    flow.leave_python()
    flow.leave_python()
    flow.leave_macro()
    assert [(step.depth, step.name) for step in flow.steps] == [
        (0, MATERIALIZATION),
        (1, "MutableRunService.run_start"),
        (2, "writes_first"),
        (2, "JammiConnectionManager.execute"),
    ]


def test_equal_steps_in_a_row_are_written_once_with_their_count():
    step = FlowStep(1, "python", "mutable_planner", "impl")
    other = FlowStep(1, "dbt macro", "statement", "")
    assert collapsed([step, step, other, step]) == [(step, 2), (other, 1), (step, 1)]
    page = markdown([FlowStep(0, "macro", "m", "macros/x.sql"), step, step, other], "T", "P")
    assert page.splitlines()[4:] == [
        "- macro `m` (x.sql)",
        "  - `mutable_planner` (impl.py) ×2",
        "  - dbt's macro `statement`",
    ]
