"""The Iceberg batch-sourced MERGE's counts from its own snapshot (commit/iceberg_merge.py),
without Spark: the stamp, the snapshot query and the summary's metrics."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.commit import iceberg_merge, merge_commit

SUMMARY = {
    "added-records": "12",
    "spark.merge-into.num-target-rows-inserted": "2",
    "spark.merge-into.num-target-rows-updated": "3",
    "spark.merge-into.num-target-rows-deleted": "1",
    "spark.merge-into.num-target-rows-copied": "7",
    "jammi.run-id": "abc",
}
# stamped_snapshot_sql's row: the snapshot id, then each metric
ROW = (9, "2", "3", "1")


@pytest.mark.parametrize(
    "version, counts",
    [
        ("3.5.6", False),
        ("4.0.1", False),
        ("4.1.0", True),
        ("4.1.4", True),
        ("5.0.0", True),
        ("", False),
        ("unknown", False),
    ],
)
def test_only_spark_4_1_and_later_commit_the_counts(version, counts):
    assert iceberg_merge.counts_in_snapshot(version) is counts


def test_the_counts_are_spark_metrics_of_the_run_s_own_snapshot():
    assert iceberg_merge.summary_counts(SUMMARY)["total"] == 6
    counts = iceberg_merge.stamped_counts([(7, "2", "3", "1")])
    assert (counts["insert"], counts["update"], counts["delete"], counts["total"]) == (2, 3, 1, 6)
    assert counts["snapshot_id"] == 7
    assert counts["message"] == "INSERT 2, UPDATE 3, DELETE 1"


def test_no_snapshot_means_nothing_changed_and_a_summary_without_metrics_says_so():
    assert iceberg_merge.stamped_counts([])["total"] == 0
    assert "no counts" in iceberg_merge.stamped_counts([(7, None, None, None)])["message"]
    bare = iceberg_merge.summary_counts({"added-records": "4"})
    assert bare["total"] == 0 and "no counts" in bare["message"]


def test_the_stamp_is_a_session_snapshot_property_reset_after():
    assert iceberg_merge.stamp_sql("r-1_a") == (
        "set `spark.sql.iceberg.snapshot-property.jammi.run-id`=r-1_a"
    )
    assert iceberg_merge.unstamp_sql() == "reset `spark.sql.iceberg.snapshot-property.jammi.run-id`"
    with pytest.raises(ValueError):
        iceberg_merge.stamp_sql("x;drop table t")
    assert iceberg_merge.stamped_snapshot_sql("s.t", "r1") == (
        "select snapshot_id, summary['spark.merge-into.num-target-rows-inserted'], "
        "summary['spark.merge-into.num-target-rows-updated'], "
        "summary['spark.merge-into.num-target-rows-deleted'] "
        "from s.t.snapshots where summary['jammi.run-id'] = 'r1'"
    )


class Session:
    """Statements recorded; the MERGE fails as told."""

    def __init__(self, merge_error: str | None = None, snapshot=(ROW,)):
        self.sql: list[str] = []
        self.merge_error = merge_error
        self.snapshot = list(snapshot)

    def __call__(self, sql: str):
        self.sql.append(sql)
        if sql.startswith("merge") and self.merge_error:
            raise RuntimeError(self.merge_error)
        return self.snapshot if "snapshots" in sql else []


def commit(session: Session, last_attempt: bool = False):
    return iceberg_merge.commit_counted_merge(
        session, "merge into s.t ...", "s.t", "r1", "m", last_attempt
    )


def test_a_committed_merge_is_stamped_then_unstamped_then_counted():
    session = Session()
    counts = commit(session)
    assert counts is not None and counts["total"] == 6 and counts["snapshot_id"] == 9
    assert [s.split()[0] for s in session.sql] == ["set", "merge", "reset", "select"]


def test_a_conflict_unstamps_and_re_plans_and_a_batch_check_is_raised():
    conflict = Session("org.apache.iceberg.exceptions.ValidationException: Found conflicting files")
    assert commit(conflict) is None
    assert conflict.sql[-1].startswith("reset")
    with pytest.raises(merge_commit.MergeConflict):
        commit(Session("ValidationException: Found conflicting files"), last_attempt=True)
    rejected = Session("boom " + merge_commit.batch_check_marker("duplicate_key"))
    with pytest.raises(merge_commit.BatchRejected):
        commit(rejected)
    assert rejected.sql[-1].startswith("reset")
