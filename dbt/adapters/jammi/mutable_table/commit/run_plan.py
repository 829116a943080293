"""A mutable_table run's plan: which path applies the batch, where its checks run, how
many times it may re-plan. Decided once, in Python, from the definition, the resolved
format and what the run writes before its plan; the materialization follows it
(mutable_table.sql) and never decides these itself.

Paths:

- ``create``: a first run (or a permitted rebuild) creates the table with the batch;
- ``merge_batch``: an existing Delta table MERGEs the batch itself, its checks and the
  planner's decisions in the MERGE's clauses (merge_commit.merges_batch); so does an
  Iceberg table on a Spark whose MERGE commits its counts with its snapshot
  (iceberg_merge.py), without a changelog or tombstones (their records commit with
  the MERGE on a branch, from a planned change set);
- ``merge_change_set``: a MERGE format MERGEs a change set planned beforehand;
- ``rewrite``: parquet/orc write the next version from the change set and swap it in.

Checks (duplicate and NULL keys, version order) run in exactly one place:

- ``in_merge``: in the batch-sourced MERGE, on the batch's way in;
- ``in_plan``: in the statement that stages a rewrite's change set;
- ``separate``: in a query of their own before anything is written, whenever something
  else writes first (a rebuild, an adoption, a schema change, new table properties, the
  changelog's preparation): a check failing after such a write would leave it behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.jammi.mutable_table.commit.iceberg_merge import counts_in_snapshot
from dbt.adapters.jammi.mutable_table.commit.merge_commit import merges_batch, plans_checked_batch
from dbt.adapters.jammi.mutable_table.redelivery import DUPLICATE_KINDS
from dbt.adapters.jammi.mutable_table.rules.tombstones import retention_ms
from dbt.adapters.jammi.mutable_table.table_format import table_format

# How many times an existing table's run plans and commits before it gives up on
# concurrent commits (a first run's CREATE is its claim: one attempt).
COMMIT_ATTEMPTS = 3

PATHS = ("create", "merge_batch", "merge_change_set", "rewrite")
CHECK_PLACES = ("in_merge", "in_plan", "separate")


@dataclass(frozen=True)
class RunPlan:
    path: str
    checks: str
    counts_from_merge: bool
    attempts: int
    writes_first: tuple[str, ...]
    # the format applies a change set with a MERGE (delta, iceberg), else it writes the
    # next version and swaps it in (parquet, orc)
    uses_merge: bool = False
    # the batch checks' findings after which the batch is tried again with its
    # identical rows collapsed (at-least-once delivery, redelivery.py)
    collapse_on: tuple[str, ...] = DUPLICATE_KINDS


def plan_run(
    definition: Mapping[str, Any],
    file_format: str,
    existing: bool,
    writes_first: Mapping[str, Any],
    spark_version: str = "",
) -> RunPlan:
    """The run's plan. ``existing``: the table exists and is kept (not rebuilt);
    ``writes_first``: what the run writes before its plan, by name (true ones count);
    ``spark_version``: the session's (an Iceberg MERGE reports counts from Spark 4.1)."""
    stored_as = table_format(file_format)
    merge = stored_as.applies_by_merge
    batch_merge = (
        existing
        and merges_batch(definition)
        and batch_merges(definition, file_format, spark_version)
    )
    if not existing:
        path = "create"
    elif batch_merge:
        path = "merge_batch"
    else:
        path = "merge_change_set" if merge else "rewrite"
    writers = tuple(sorted(name for name, writes in writes_first.items() if writes))
    if writers:
        checks = "separate"
    elif batch_merge:
        checks = "in_merge"
    elif not merge and plans_checked_batch(definition):
        checks = "in_plan"
    else:
        checks = "separate"
    unique_index = any(index.get("unique") for index in definition.get("indexes") or [])
    counts_from_merge = (
        existing and not unique_index and (stored_as.merge_reports_counts or batch_merge)
    )
    attempts = COMMIT_ATTEMPTS if existing else 1
    return RunPlan(path, checks, counts_from_merge, attempts, writers, uses_merge=merge)


def batch_merges(definition: Mapping[str, Any], file_format: str, spark_version: str) -> bool:
    """Whether ``file_format`` takes the batch-sourced MERGE for this definition (given
    ``merge_commit.merges_batch``): Delta always; Iceberg when its MERGE counts in its
    snapshot and nothing must commit with the MERGE on a branch (a changelog's events,
    tombstones)."""
    records_on_branch = bool(definition.get("changelog")) or retention_ms(definition) is not None
    return table_format(file_format).takes_batch_merge(
        counts_in_snapshot(spark_version), records_on_branch
    )
