"""An Iceberg version's counts read from its snapshot's summary
(mutable_table/versions/iceberg_snapshots.py), without Spark. The summaries are those
Iceberg 1.12.0 wrote on Spark 4.1.4 and 3.5.7 (2026-12-02; file counts and sizes kept,
the totals and engine fields left out)."""

from __future__ import annotations

from datetime import datetime

import pytest

from dbt.adapters.jammi.mutable_table.commit import iceberg_merge
from dbt.adapters.jammi.mutable_table.versions import iceberg_snapshots
from dbt.adapters.jammi.mutable_table.versions.iceberg_snapshots import UNKNOWN, version_counts


def merge_metrics(inserted: int, updated: int, deleted: int, copied: int = 0) -> dict:
    """Spark >= 4.1's MERGE counts in the snapshot summary."""
    metric = "spark.merge-into.num-target-rows-"
    return {
        metric + "inserted": str(inserted),
        metric + "updated": str(updated),
        metric + "deleted": str(deleted),
        metric + "copied": str(copied),
        metric + "matched-updated": str(updated),
        metric + "matched-deleted": str(deleted),
        metric + "not-matched-by-source-updated": "0",
        metric + "not-matched-by-source-deleted": "0",
    }


# a copy-on-write MERGE of one update, one delete and one insert into 3 rows: the file
# of 3 rows rewritten as a file of 3
COPY_ON_WRITE = {
    "added-data-files": "1",
    "added-records": "3",
    "deleted-data-files": "1",
    "deleted-records": "3",
}
# the same MERGE on a merge-on-read table: a delete file of 2 positions, 2 new rows
MERGE_ON_READ = {
    "added-data-files": "1",
    "added-delete-files": "1",
    "added-position-delete-files": "1",
    "added-position-deletes": "2",
    "added-records": "2",
}
# a merge-on-read MERGE that deleted 1 row: its delete file replaces the earlier one
MERGE_ON_READ_DELETE = {
    "added-delete-files": "1",
    "added-position-deletes": "3",
    "removed-delete-files": "1",
    "removed-position-deletes": "2",
}


@pytest.mark.parametrize(
    "operation, summary, counts",
    [
        # Spark 4.1: every MERGE's snapshot holds Spark's counts, whatever its operation
        ("overwrite", {**COPY_ON_WRITE, **merge_metrics(1, 1, 1, copied=1)}, (1, 1, 1)),
        ("overwrite", {**MERGE_ON_READ, **merge_metrics(1, 1, 1)}, (1, 1, 1)),
        ("delete", {**MERGE_ON_READ_DELETE, **merge_metrics(0, 0, 1)}, (0, 0, 1)),
        ("append", {"added-records": "1", **merge_metrics(1, 0, 0)}, (1, 0, 0)),
        ("overwrite", merge_metrics(0, 0, 0), (0, 0, 0)),  # a MERGE that changed nothing
        # the same MERGEs on Spark 3.5: file rows, not changed rows
        ("overwrite", COPY_ON_WRITE, UNKNOWN),
        ("overwrite", MERGE_ON_READ, UNKNOWN),
        ("delete", MERGE_ON_READ_DELETE, UNKNOWN),
        # an append only adds rows: a first run's CREATE TABLE AS SELECT, a MERGE that
        # only inserted (Spark 3.5), an empty first batch (no added-records at all)
        ("append", {"added-data-files": "1", "added-records": "3"}, (3, 0, 0)),
        ("append", {"manifests-created": "0"}, (0, 0, 0)),
        # a compaction (rewrite_data_files): the same 4 rows in another file
        (
            "replace",
            {"added-data-files": "1", "added-records": "4", "deleted-data-files": "4"},
            (0, 0, 0),
        ),
        # a MERGE with nothing to change on Spark 3.5: a snapshot of no file
        ("overwrite", {"manifests-kept": "2"}, (0, 0, 0)),
        # a delete of whole data files: their rows deleted, exactly
        ("delete", {"deleted-data-files": "2", "deleted-records": "5"}, (0, 0, 5)),
        # an INSERT OVERWRITE, or an UPDATE or DELETE that rewrote files (Spark 3.5 or 4.1)
        ("overwrite", {**COPY_ON_WRITE, "added-records": "2"}, UNKNOWN),
    ],
)
def test_a_snapshot_s_counts_are_what_its_summary_shows_exactly(operation, summary, counts):
    assert version_counts(operation, summary) == counts


def test_a_count_spark_omitted_stays_unknown():
    # Iceberg's docs: a field is omitted when Spark did not report the value
    summary = {iceberg_merge.INSERTED: "2", iceberg_merge.DELETED: "1"}
    assert version_counts("overwrite", summary) == (2, None, 1)


def summary_row(snapshot_id: int, second: int, operation: str, summary: dict) -> tuple:
    """A history_sql row: id, made current at, operation, then each summary key."""
    when = datetime(2026, 1, 1, 0, 0, second)
    return (
        snapshot_id,
        when,
        operation,
        *(summary.get(k) for k in iceberg_snapshots.SUMMARY_KEYS),
    )


def test_the_history_reads_each_version_s_counts_from_its_summary():
    rows = [
        summary_row(900, 0, "append", {"added-data-files": "1", "added-records": "2"}),
        summary_row(12, 1, "overwrite", {**COPY_ON_WRITE, **merge_metrics(1, 1, 0)}),
        summary_row(555, 2, "overwrite", COPY_ON_WRITE),
    ]
    history = iceberg_snapshots.history_rows(rows, versions_kept=3)
    assert [(h["version"], h["inserts"], h["updates"], h["deletes"]) for h in history] == [
        (555, None, None, None),
        (12, 1, 1, 0),
        (900, 2, 0, 0),
    ]
    assert [h["kind"] for h in history] == ["overwrite", "overwrite", "append"]


def test_the_history_query_reads_each_summary_key_as_a_column():
    sql = iceberg_snapshots.history_sql("s.orders")
    assert "s.operation, s.summary['spark.merge-into.num-target-rows-inserted']," in sql
    columns = sql.split(" from ")[0].count("s.summary[")
    assert columns == len(iceberg_snapshots.SUMMARY_KEYS)
