"""The identity column's phases in a run (rules/identity.py says how numbers are never
handed out twice; docs/mutable_table.md#identity-column):

- ``start``, before each plan: where new keys are numbered from (the greatest of the
  committed high-water mark and the highest stored number) and, on the MERGE formats,
  whether the plan guards against a run that committed numbers after its read;
- the rewrite formats' mark step: the next version's high-water mark, written into the
  version directory before the commit, so it becomes current with the rows or not at
  all;
- Iceberg's branch record: the mark appended to ``<table>__jammi_identity`` in the run's
  branch, tagged with its snapshot (commit/branch_commit.py).

The planner's numbering expression stays with the planner's macros (identity.sql).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.validation import quote_identifier as q
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine.describe import delta_history_entry
from dbt.adapters.jammi.mutable_table.commit.branch_commit import HEAD_TAG, committed_tags_sql
from dbt.adapters.jammi.mutable_table.rules import identity

RunSql = Callable[[str], Sequence[Sequence[Any]]]


def _max(rows: Sequence[Sequence[Any]]) -> Optional[int]:
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


# A mark table read while a concurrent run creates it: Iceberg's SparkSessionCatalog
# found no Iceberg table, then Spark's own catalog found the new one and read it as a
# Hive table, whose input format (Iceberg's placeholder) cannot be instantiated.
_CREATED_UNDER_THE_READ = "java.lang.InstantiationException"
MARK_READ_ATTEMPTS = 3


def iceberg_mark(
    run_sql: RunSql, relation: str, pause: Callable[[float], None] = time.sleep
) -> Optional[int]:
    """The highest mark in ``<table>__jammi_identity`` whose snapshot the table's
    ancestry holds (branch_commit.py); None before the first. A read that met the mark
    table's creation by a concurrent run halfway is read again (the table is whole by
    then), at most MARK_READ_ATTEMPTS times."""
    sql = (
        f"select max({identity.MARK_COLUMN}) from {identity.mark_table(relation)} "
        f"where {identity.MARK_TAG_COLUMN} in ({committed_tags_sql(relation)})"
    )
    for attempt in range(1, MARK_READ_ATTEMPTS + 1):
        try:
            return _max(run_sql(sql))
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            message = str(exc)
            if "TABLE_OR_VIEW_NOT_FOUND" in message or "Table or view not found" in message:
                return None
            if _CREATED_UNDER_THE_READ not in message or attempt == MARK_READ_ATTEMPTS:
                raise
            pause(0.5 * attempt)
    return None  # not reached: the last attempt returns or raises


def version_mark(run_sql: RunSql, location: Optional[str]) -> Optional[int]:
    """The mark a rewrite version carries; None for a version written without one."""
    if not location:
        return None
    path = identity.mark_location(location)
    try:
        rows = run_sql(f"select max({identity.MARK_COLUMN}) from parquet.`{path}`")
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if identity.no_mark(str(exc)):
            return None
        raise
    return _max(rows)


def delta_mark(run_sql: RunSql, relation: str) -> Optional[int]:
    """The mark of the newest MERGE that numbered rows (its commit's userMetadata)."""
    for limit in (" limit 100", ""):
        rows = run_sql(f"describe history {relation}{limit}")
        mark = identity.delta_high_water([delta_history_entry(row) for row in rows])
        if mark is not None or len(rows) < 100:
            return mark
    return None


def numbered_from(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    relation: Optional[str],
    committed_mark: Callable[[str], Optional[int]],
) -> Optional[int]:
    """Where a plan numbers new keys from: the greatest of the committed high-water mark
    (``committed_mark`` of the table: its format's, format_reads.py) and the highest
    stored number; 0 for a new table (``relation`` None), None without an identity
    column."""
    column = definition.get("identity_column")
    if not column:
        return None
    if relation is None:
        return 0
    stored = run_sql(f"select max({q(column)}) from {relation}")
    return identity.identity_from(stored[0][0] if stored else None, committed_mark(relation))


def mark_write_sql(
    definition: Mapping[str, Any], change_set: str, location: str, start: int
) -> str:
    """The mark after a change set: ``start`` or the highest number the set stores."""
    target = sql_string_literal(identity.mark_location(location))
    column = q(definition["identity_column"])
    return (
        f"insert overwrite directory {target} using parquet select "
        f"greatest(cast({int(start)} as bigint), coalesce(max({column}), 0)) as "
        f"{identity.MARK_COLUMN} from {change_set} where _change in ('insert', 'update')"
    )


def mark_table_sql(relation: str) -> str:
    return (
        f"create table if not exists {identity.mark_table(relation)} "
        f"({identity.MARK_TAG_COLUMN} string, {identity.MARK_COLUMN} bigint) using iceberg"
    )


def branch_record_sql(
    definition: Mapping[str, Any], relation: str, change_set: str, start: Optional[int]
) -> str:
    """Iceberg: the mark appended in the run's branch: the greater of where the plan
    numbered from and the highest number it handed out."""
    column = q(definition["identity_column"])
    return (
        f"insert into {identity.mark_table(relation)} select {sql_string_literal(HEAD_TAG)}, "
        f"greatest(cast({int(start or 0)} as bigint), coalesce((select max({column}) from "
        f"{change_set} where _change = 'insert'), 0))"
    )
