"""The MERGE applier's commit on Delta (merge_commit.py): a conflict is a re-plan, the
last refused attempt an error naming the model, anything else raised unchanged."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.merge_commit import MergeConflict, commit_merge, is_delta_conflict

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
        return [(1, 1, 0, 0)]

    return run_sql, ran


@pytest.mark.parametrize("message", [CONFLICT, THRIFT_CONFLICT, "MetadataChangedException: x"])
def test_conflicts_are_recognized(message):
    assert is_delta_conflict(message)


def test_other_errors_are_not_conflicts():
    assert not is_delta_conflict("[TABLE_OR_VIEW_NOT_FOUND] The table `s`.`t` cannot be found")


def test_committed_merge():
    run_sql, ran = raising(None)
    assert commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False) is True
    assert ran == ["merge into t ..."]


def test_conflict_before_the_last_attempt_asks_for_a_replan():
    run_sql, _ = raising(CONFLICT)
    assert commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False) is False


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
