"""The MERGE applier's commit on Delta (mutable_table/commit/merge_commit.py):
a conflict is a re-plan, the last refused attempt an error naming the model, anything
else raised unchanged."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.commit.merge_commit import (
    BatchRejected,
    MergeConflict,
    batch_check_marker,
    change_counts,
    commit_merge,
    failed_batch_check,
    is_commit_conflict,
    lost_create_message,
    merge_counts,
    merges_batch,
)

# As Delta 3.2.1 reports it through PySpark and through the Thrift server.
CONFLICT = (
    "[DELTA_CONCURRENT_APPEND] ConcurrentAppendException: Files were added to the root of "
    "the table by a concurrent update. Please try the operation again.\nConflicting "
    "commit: {...}"
)
THRIFT_CONFLICT = (
    "Error running query: org.apache.hive.service.cli.HiveSQLException: "
    "io.delta.exceptions.ConcurrentDeleteReadException: This transaction attempted to read"
)


def raising(message):
    ran = []

    def run_sql(sql):
        ran.append(sql)
        if message:
            raise RuntimeError(message)
        return [(3, 1, 0, 2)]  # Delta: affected, updated, deleted, inserted

    return run_sql, ran


ICEBERG_CONFLICT = (
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can "
    "contain records matching true: [/w/t/data/00000-1.parquet]"
)
ICEBERG_LOST_SWAP = (
    "org.apache.iceberg.exceptions.CommitFailedException: Base metadata location "
    "'/w/t/metadata/00001.metadata.json' is not same as the current table metadata location"
)


@pytest.mark.parametrize(
    "message",
    [CONFLICT, THRIFT_CONFLICT, "MetadataChangedException: x", ICEBERG_CONFLICT, ICEBERG_LOST_SWAP],
)
def test_conflicts_are_recognized(message):
    assert is_commit_conflict(message)


@pytest.mark.parametrize(
    "message",
    [
        "[TABLE_OR_VIEW_NOT_FOUND] The table `s`.`t` cannot be found",
        "org.apache.iceberg.exceptions.ValidationException: Cannot find field 'x' in struct",
    ],
)
def test_other_errors_are_not_conflicts(message):
    assert not is_commit_conflict(message)


def test_committed_merge_returns_its_counts():
    run_sql, ran = raising(None)
    rows = commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False)
    assert ran == ["merge into t ..."]
    assert merge_counts(rows) == {
        "insert": 2,
        "update": 1,
        "delete": 0,
        "total": 3,
        "message": "INSERT 2, UPDATE 1, DELETE 0",
    }


def test_counts_of_another_shape_are_reported_not_raised():
    # the MERGE has committed by then: a surprising result must not fail the run
    assert merge_counts([]) == dict(change_counts(0, 0, 0), message=merge_counts([])["message"])
    assert "no counts" in merge_counts([("x",)])["message"]
    assert merge_counts([(None, None, None, None)])["total"] == 0


def test_conflict_before_the_last_attempt_asks_for_a_replan():
    run_sql, _ = raising(CONFLICT)
    assert commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False) is None


def test_conflict_on_the_last_attempt_names_the_model():
    run_sql, _ = raising(CONFLICT)
    with pytest.raises(MergeConflict) as failure:
        commit_merge(run_sql, "merge into t ...", "orders", last_attempt=True)
    message = str(failure.value)
    assert "mutable_table 'orders'" in message
    assert "ConcurrentAppendException" in message
    assert "Nothing of this run was written" in message


def test_any_other_error_is_raised_unchanged():
    run_sql, _ = raising("[DIVIDE_BY_ZERO] Division by zero")
    with pytest.raises(RuntimeError, match="DIVIDE_BY_ZERO"):
        commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False)


# Two `dbt run` processes creating one Delta mutable_table over a Thrift server: the
# loser's CTAS fails one of these ways (seen in test_thrift_races on Delta 3.2.1).
NON_EMPTY = (
    "Error running query: [DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION] Cannot create "
    "table ('`s`.`t`'). The associated location ('file:/w/s.db/t') is not empty"
)
PROTOCOL = (
    "Error running query: [DELTA_PROTOCOL_CHANGED] io.delta.exceptions."
    "ProtocolChangedException: The protocol version of the Delta table has been changed"
)


def listed(answer):
    return lambda: answer


@pytest.mark.parametrize(
    "message, table_listed",
    [
        (PROTOCOL, listed(False)),  # the winner's first commit: it is creating the table
        (NON_EMPTY, listed(True)),  # the winner's table is there by now
        ("[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table s.t", listed(False)),
    ],
)
def test_a_create_lost_to_another_run_is_said_clearly(message, table_listed):
    reason = lost_create_message("s.t", message, table_listed)
    assert reason.startswith("s.t was created by another run while this run was creating it")
    assert "Nothing of this run was written" in reason


def test_files_without_a_table_are_not_blamed_on_another_run():
    reason = lost_create_message("s.t", NON_EMPTY, listed(False))
    assert "holds Delta files but no table" in reason
    assert "crashed" in reason and "file:/w/s.db/t" in reason


def test_other_create_failures_keep_the_engine_error():
    assert lost_create_message("s.t", "[DIVIDE_BY_ZERO] Division by zero", listed(True)) is None

    def listing_fails():
        raise RuntimeError("metastore down")

    assert lost_create_message("s.t", NON_EMPTY, listing_fails) is None


def test_batch_check_failures_are_recognized_in_engine_errors():
    message = (
        "Job aborted due to stage failure: org.apache.spark.SparkRuntimeException: "
        f"[USER_RAISED_EXCEPTION] {batch_check_marker('duplicate_version')} SQLSTATE: P0001"
    )
    assert failed_batch_check(message) == "duplicate_version"
    assert failed_batch_check("[USER_RAISED_EXCEPTION] something else") is None
    with pytest.raises(ValueError):
        batch_check_marker("nonsense")


def test_a_batch_check_stops_the_merge_as_a_rejection_not_a_conflict():
    def run_sql(sql):
        raise RuntimeError(f"[USER_RAISED_EXCEPTION] {batch_check_marker('null_key')}")

    with pytest.raises(BatchRejected) as rejected:
        commit_merge(run_sql, "merge ...", "prices", last_attempt=False)
    assert rejected.value.kind == "null_key"


@pytest.mark.parametrize(
    "config, merges",
    [
        ({}, True),
        ({"partial_updates": True, "delete_when": "x", "hard_deletes": "delete"}, True),
        ({"merge_functions": {"price": "sum"}}, True),
        ({"merge_functions": {"price": "sum"}, "version_column": "v"}, False),
        ({"history": "scd2"}, False),
        ({"ttl_ms": 1000}, False),
        ({"indexes": [{"name": "i", "columns": ["price"], "unique": True}]}, False),
        ({"indexes": [{"name": "i", "columns": ["price"], "unique": False}]}, True),
    ],
)
def test_which_definitions_merge_the_batch_itself(config, merges):
    assert merges_batch(config) is merges
