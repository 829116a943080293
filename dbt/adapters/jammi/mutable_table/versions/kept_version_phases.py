"""The phases of the version operations (docs/versions.md), each one adapter call:

- ``kept_version``: which kept version a read of the past or a rollback names (a
  version number, or the version current at a time), checked to be kept, and the FROM
  item that reads its rows;
- ``rollback_statements``: the kept rows aligned with the table's current columns, and
  the two ways a rollback applies them (Delta's and Iceberg's MERGE; the rewrite
  formats' change set).

``versions_service`` runs them with its statement runner; ``version_reads`` and
``kept_versions`` hold the SQL and the decisions, and ``format_reads`` a table's kept
versions as its format records them.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine.describe import query_columns
from dbt.adapters.jammi.mutable_table.format_reads import format_reads, version_records
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.versions import (
    kept_versions,
    version_reads,
)

RunSql = Callable[[str], Sequence[Sequence[Any]]]


def _millis_at(run_sql: RunSql, timestamp: Any) -> int:
    """Epoch milliseconds as given, or Spark's reading of a timestamp's text (the
    session's time zone, as a query comparing with it would read it)."""
    if isinstance(timestamp, numbers.Number):
        return int(timestamp)  # type: ignore[call-overload]
    text = sql_string_literal(str(timestamp))
    return int(run_sql(f"select unix_millis(cast({text} as timestamp))")[0][0])


def kept_version(
    run_sql: RunSql,
    relation: str,
    model_name: str,
    file_format: str,
    location: Optional[str],
    versions_kept: int,
    subject: str,
    version: Any = None,
    timestamp: Any = None,
) -> dict[str, Any]:
    """The kept version named by ``version`` (or current at ``timestamp``), with the
    history it was found in and the FROM item that reads its rows: {version, history,
    source, location} (location: the version directory of a parquet/orc table, else
    None). A version that is not kept, or not a version, is a clear error before
    anything is read from it."""
    if version is not None:
        version = version_reads.require_version(version, subject)
    records: Sequence[kept_versions.VersionRecord] = ()
    by_merge = table_format(file_format).applies_by_merge
    if by_merge:
        kept = format_reads(file_format, run_sql).history(relation, location, versions_kept)
    else:
        records = version_records(run_sql, str(location))
        kept = kept_versions.history_rows(records, str(location), versions_kept)
    if version is None:
        version = version_reads.version_at(kept, _millis_at(run_sql, timestamp), subject)
    version = version_reads.require_version(version, subject)
    if by_merge:
        version_reads.require_kept_delta_version(kept, version, subject)
        source = version_reads.delta_as_of_source(relation, version, None)
        return {"version": version, "history": kept, "source": source, "location": None}
    path = kept_versions.kept_location(model_name, records, str(location), versions_kept, version)
    source = version_reads.path_relation_sql(file_format, path)
    return {"version": version, "history": kept, "source": source, "location": path}


def rollback_statements(
    run_sql: RunSql, definition: Mapping[str, Any], relation: str, source: str
) -> dict[str, str]:
    """The kept rows in the table's current columns (``target_sql``: a column the kept
    version lacked reads as NULL), the MERGE that makes them the table's rows
    (``merge_sql``) and the change set that does the same through the rewrite path or an
    Iceberg branch's changelog records (``change_set_sql``)."""
    available = [c[0] for c in query_columns(run_sql(f"describe query select * from {source}"))]
    storage_columns = definition["storage_columns"]
    columns = [c[0] for c in storage_columns]
    key = list(definition["storage_key"])
    target_sql = version_reads.aligned_select_sql(storage_columns, available, source)
    return {
        "target_sql": target_sql,
        "merge_sql": version_reads.rollback_merge_sql(relation, key, columns, target_sql),
        "change_set_sql": version_reads.rollback_change_set_sql(
            columns, key, f"select * from {relation}", target_sql
        ),
    }


def history_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The history as ``mutable_table_history`` prints it, one line per kept version."""
    lines = ["version | committed_at (UTC) | inserts | updates | deletes | invocation_id | current"]
    for row in rows:
        millis = row.get("committed_ms")
        when = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(millis) / 1000))
            if millis is not None
            else "?"
        )
        counts = [row.get(name) for name in ("inserts", "updates", "deletes")]
        inserts, updates, deletes = ("?" if n is None else n for n in counts)
        lines.append(
            f"{row['version']} | {when} | {inserts} | {updates} | "
            f"{deletes} | {row.get('invocation_id') or '?'} | "
            f"{'yes' if row.get('current') else ''}"
        )
    return "\n".join(lines)
