"""bench/trace_run.py's counting, without Spark: what it counts as dbt-jammi's macros,
adapter calls, modules and switches."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import trace_run  # noqa: E402

from dbt.adapters.jammi.impl import JammiAdapter  # noqa: E402


def test_the_summary_counts_only_dbt_jammi_macros_and_methods():
    trace = trace_run.Trace(
        macros=[
            ("materialization_mutable_table_spark", "macros/mutable_table/mutable_table.sql"),
            ("get_merge_batch_sql", "macros/mutable_table/merge_batch.sql"),
            ("get_merge_batch_sql", "macros/mutable_table/merge_batch.sql"),
            ("statement", ""),  # dbt's own
        ],
        adapter_calls=[("mutable_run_start", True), ("quote", False), ("mutable_run_start", True)],
        modules={"impl", "mutable_table/commit/run_plan"},
    )
    result = trace_run.summary(trace)
    assert result["jammi_macros"] == 2
    assert result["jammi_macro_files"] == 2
    assert result["macro_calls"] == 3
    assert result["adapter_calls"] == 3
    assert result["jammi_adapter_calls"] == 2
    assert result["distinct_jammi_adapter_methods"] == 1
    assert result["python_modules"] == 2
    assert result["switches"] == 4
    assert result["most_called"] == [("mutable_run_start", 2)]


def test_a_method_is_dbt_jammi_s_where_its_class_is():
    adapter = object.__new__(JammiAdapter)
    assert trace_run.is_jammi_method(adapter, "mutable_run_start")
    assert not trace_run.is_jammi_method(adapter, "quote")  # dbt-spark's / dbt's
    assert not trace_run.is_jammi_method(adapter, "no_such_method")


def test_modules_are_named_inside_the_package_only():
    inside = f"{trace_run.JAMMI_SOURCE}/mutable_table/commit/run_plan.py"
    assert trace_run.module_of(inside) == "mutable_table/commit/run_plan"
    assert trace_run.module_of("/usr/lib/python3.11/json/__init__.py") is None
