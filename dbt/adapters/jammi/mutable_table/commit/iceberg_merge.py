"""The batch-sourced MERGE on Iceberg, and its counts from its own snapshot.

Iceberg's MERGE returns no rows. From Spark 4.1 on, Iceberg's Spark runtime writes
Spark's MERGE metrics into the summary of the snapshot the MERGE commits
(``spark.merge-into.num-target-rows-inserted`` and its relatives, docs/performance.md).
A run stamps its MERGE's snapshot with its own id (a session snapshot property,
``spark.sql.iceberg.snapshot-property.<key>``, reset right after), then reads that
snapshot's summary: the counts of its own commit, never a concurrent run's. So an
Iceberg table on Spark >= 4.1 takes the batch-sourced MERGE Delta takes
(commit/run_plan.py's ``merge_batch`` path): one pass over the table, its checks and
counts inside it. Older Sparks plan and count a change set first (two passes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table.commit import merge_commit

# The snapshot summary key a run stamps its MERGE's snapshot with.
RUN_PROPERTY = "jammi.run-id"
RUN_PROPERTY_CONF = f"spark.sql.iceberg.snapshot-property.{RUN_PROPERTY}"

# Spark's MERGE metrics in an Iceberg snapshot summary (Spark >= 4.1).
_METRIC = "spark.merge-into.num-target-rows-"
INSERTED, UPDATED, DELETED = _METRIC + "inserted", _METRIC + "updated", _METRIC + "deleted"
METRICS = (INSERTED, UPDATED, DELETED)

# The first Spark whose Iceberg MERGE commits its metrics with the snapshot.
FIRST_COUNTING_SPARK = (4, 1)

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")


def counts_in_snapshot(spark_version: Optional[str]) -> bool:
    """Whether an Iceberg MERGE on this Spark writes its counts into its snapshot."""
    match = _VERSION.match(spark_version or "")
    if match is None:
        return False
    return (int(match[1]), int(match[2])) >= FIRST_COUNTING_SPARK


def stamp_sql(run_id: str) -> str:
    """Stamp this session's next Iceberg commits with ``run_id`` (until ``unstamp_sql``)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", run_id):
        raise ValueError(f"run id {run_id!r}: letters, digits, '_' and '-' only")
    return f"set `{RUN_PROPERTY_CONF}`={run_id}"


def unstamp_sql() -> str:
    return f"reset `{RUN_PROPERTY_CONF}`"


def stamped_snapshot_sql(table: str, run_id: str) -> str:
    """The snapshot ``run_id`` committed to ``table``: its id and Spark's counts (each
    metric a column: a map does not cross every connection method as a map)."""
    metrics = ", ".join(f"summary[{sql_string_literal(key)}]" for key in METRICS)
    return (
        f"select snapshot_id, {metrics} from {table}.snapshots "
        f"where summary[{sql_string_literal(RUN_PROPERTY)}] = {sql_string_literal(run_id)}"
    )


def summary_counts(summary: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's counts from its MERGE's snapshot summary. No snapshot (a MERGE with
    nothing to write commits none): nothing changed. A summary without Spark's metrics
    (an Iceberg runtime that does not write them) is reported, not raised: the MERGE
    has committed by then."""
    if summary is None:
        return merge_commit.change_counts(0, 0, 0)
    values = dict(summary)
    if INSERTED not in values:
        return dict(
            merge_commit.change_counts(0, 0, 0),
            message="MERGE committed (its snapshot holds no counts)",
        )
    return merge_commit.change_counts(
        int(values.get(INSERTED) or 0),
        int(values.get(UPDATED) or 0),
        int(values.get(DELETED) or 0),
    )


def commit_counted_merge(
    run_sql: merge_commit.RunSql,
    merge_sql: str,
    table: str,
    run_id: str,
    model_name: str,
    last_attempt: bool,
) -> Optional[dict[str, Any]]:
    """Run the MERGE stamped with ``run_id``, then read its counts from its snapshot.
    None when Iceberg refused it for a concurrent commit and the caller may re-plan;
    ``merge_commit.MergeConflict`` on the last attempt and ``BatchRejected`` when a batch
    check stopped it, as ``merge_commit.commit_merge`` raises them."""
    run_sql(stamp_sql(run_id))
    try:
        rows = merge_commit.commit_merge(run_sql, merge_sql, model_name, last_attempt)
    finally:
        run_sql(unstamp_sql())
    if rows is None:
        return None
    return stamped_counts(run_sql(stamped_snapshot_sql(table, run_id)))


def stamped_counts(rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The counts and snapshot id from ``stamped_snapshot_sql``'s rows."""
    if not rows:
        return dict(summary_counts(None), snapshot_id=None)
    snapshot_id, *values = rows[0]
    summary = {key: value for key, value in zip(METRICS, values) if value is not None}
    return dict(summary_counts(summary), snapshot_id=int(snapshot_id))
