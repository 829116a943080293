"""The version operations' phases (mutable_table/versions/kept_version_phases.py): which
history a format reads, which kept version a read or a rollback names and how it is
read, and the rollback's statements, with a recorded statement runner instead of
Spark."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.format_reads import format_reads
from dbt.adapters.jammi.mutable_table.versions import (
    iceberg_snapshots,
    kept_version_phases,
    kept_versions,
)
from tests.unit.recorded_engine import RecordedEngine

BASE = "file:/w/s.db/orders"
TABLE = "s.orders"


def loc(version: int) -> str:
    return f"{BASE}/v{version:010d}_r{version}"


def log_row(version: int) -> tuple:
    """A version log row (kept_versions.LOG_COLUMNS' order)."""
    parent = loc(version - 1) if version > 1 else None
    return (
        version,
        loc(version),
        parent,
        1000 * version,
        version,
        0,
        0,
        f"inv{version}",
        "run",
        "h",
    )


def delta_row(version: int, inserted: int) -> tuple:
    """A DESCRIBE HISTORY row: version, timestamp, ..., operation, ..., operationMetrics."""
    when = datetime.fromtimestamp(version * 100, tz=timezone.utc).replace(tzinfo=None)
    metrics = {"numTargetRowsInserted": str(inserted)}
    return (
        version,
        when,
        None,
        None,
        "MERGE",
        {},
        None,
        None,
        None,
        None,
        None,
        None,
        metrics,
        None,
        None,
    )


def test_history_reads_the_formats_own_record():
    parquet = RecordedEngine(
        strict=True, answers={"select version, location": [log_row(1), log_row(2)]}
    )
    rows = format_reads("parquet", parquet).history(TABLE, loc(2), 5)
    assert [r["version"] for r in rows] == [2, 1]
    assert parquet.statements[0].endswith(f"from parquet.`{kept_versions.log_glob(BASE)}`")

    iceberg = RecordedEngine(strict=True, answers={"select": []})
    assert format_reads("iceberg", iceberg).history(TABLE, None, 5) == []
    assert iceberg.statements == [iceberg_snapshots.history_sql(TABLE)]


def test_a_table_without_a_version_log_lists_its_current_version_only():
    missing = RecordedEngine(
        strict=True, answers={"select version": Exception("[PATH_NOT_FOUND] Path does not exist")}
    )
    rows = format_reads("parquet", missing).history(TABLE, loc(1), 5)
    assert [(r["version"], r["inserts"], r["current"]) for r in rows] == [(1, None, True)]
    other = RecordedEngine(strict=True, answers={"select version": Exception("permission denied")})
    with pytest.raises(Exception, match="permission denied"):
        format_reads("parquet", other).history(TABLE, loc(1), 5)


def test_a_kept_parquet_version_is_read_by_its_directory():
    runner = RecordedEngine(
        strict=True, answers={"select version, location": [log_row(1), log_row(2), log_row(3)]}
    )
    kept = kept_version_phases.kept_version(
        runner, TABLE, "orders", "parquet", loc(3), 5, "as_of", version=2
    )
    assert kept["version"] == 2
    assert kept["location"] == loc(2)
    assert kept["source"] == f"parquet.`{loc(2)}`"
    assert [r["version"] for r in kept["history"]] == [3, 2, 1]
    assert len(runner.statements) == 1  # the log is read once


def test_a_version_beyond_versions_kept_is_refused_naming_the_model():
    runner = RecordedEngine(
        strict=True, answers={"select version, location": [log_row(1), log_row(2), log_row(3)]}
    )
    with pytest.raises(run_errors.MutableRunError, match="orders.*version 1 is not kept"):
        kept_version_phases.kept_version(
            runner, TABLE, "orders", "parquet", loc(3), 2, "rollback", version=1
        )


def test_a_delta_version_is_read_by_time_travel_once_it_is_kept():
    runner = RecordedEngine(
        strict=True, answers={"describe history": [delta_row(0, 3), delta_row(1, 2)]}
    )
    kept = kept_version_phases.kept_version(
        runner, TABLE, "orders", "delta", None, 5, "as_of", version=0
    )
    assert kept["source"] == f"{TABLE} version as of 0"
    assert kept["location"] is None
    with pytest.raises(run_errors.MutableRunError, match="version 7 is not kept"):
        kept_version_phases.kept_version(runner, TABLE, "orders", "delta", None, 5, "s", 7)


def test_a_version_that_is_no_whole_number_fails_before_any_read():
    runner = RecordedEngine(strict=True, answers={})
    with pytest.raises(run_errors.MutableRunError, match="whole number"):
        kept_version_phases.kept_version(runner, TABLE, "orders", "delta", None, 5, "s", "12")
    assert runner.statements == []


def test_a_time_names_the_version_current_then():
    history = [delta_row(0, 3), delta_row(1, 2), delta_row(2, 1)]  # committed at 0, 100, 200 s
    by_millis = RecordedEngine(strict=True, answers={"describe history": history})
    kept = kept_version_phases.kept_version(
        by_millis, TABLE, "orders", "delta", None, 5, "s", timestamp=150_000
    )
    assert kept["version"] == 1
    by_text = RecordedEngine(
        strict=True, answers={"describe history": history, "select unix_millis": [(250_000,)]}
    )
    kept = kept_version_phases.kept_version(
        by_text, TABLE, "orders", "delta", None, 5, "s", timestamp="1970-01-01 00:04:10"
    )
    assert kept["version"] == 2
    assert by_text.statements[-1] == (
        "select unix_millis(cast('1970-01-01 00:04:10' as timestamp))"
    )


def test_rollback_statements_align_the_kept_rows_with_todays_columns():
    definition = {
        "storage_columns": [["id", "bigint"], ["name", "string"], ["added", "int"]],
        "storage_key": ["id"],
    }
    source = f"{TABLE} version as of 0"
    runner = RecordedEngine(
        strict=True, answers={"describe query": [("id", "bigint", None), ("name", "string", None)]}
    )
    statements = kept_version_phases.rollback_statements(runner, definition, TABLE, source)
    assert runner.statements == [f"describe query select * from {source}"]
    assert "cast(null as int) as `added`" in statements["target_sql"]
    assert "cast(null as string) as tenant_id" in statements["target_sql"]
    assert statements["merge_sql"].startswith(f"merge into {TABLE} as t using (")
    assert statements["target_sql"] in statements["merge_sql"]
    assert f"from (select * from {TABLE}) as c full outer join" in statements["change_set_sql"]


def test_history_table_prints_one_line_per_version():
    text = kept_version_phases.history_table(
        [
            {
                "version": 2,
                "committed_ms": 0,
                "inserts": 1,
                "updates": None,
                "deletes": 0,
                "invocation_id": "inv",
                "current": True,
            },
            {"version": 1, "committed_ms": None, "inserts": 3, "updates": 0, "deletes": 0},
        ]
    )
    lines = text.splitlines()
    assert lines[1] == "2 | 1970-01-01 00:00:00 | 1 | ? | 0 | inv | yes"
    assert lines[2] == "1 | ? | 3 | 0 | 0 | ? | "
