"""Reading a mutable table as of a kept version, its history, and rolling back to a kept
version: the SQL fragments and decisions behind ``mutable_table_as_of()``,
``mutable_table_history`` and ``rollback_mutable_table`` (docs/versions.md).

parquet/orc read a kept version directory by its path; Delta reads its own history
(``VERSION AS OF`` / ``TIMESTAMP AS OF``), Iceberg its snapshots (``VERSION AS OF
<snapshot id>``; versions/iceberg_snapshots.py lists them). In a tenant-bound run the read is scoped
exactly as ``tenant_scoped()`` scopes a table (``tenancy/plan.scoped_relation_sql``), the
one shape the tenant read guard accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.engine.describe import delta_history_entry
from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.rules.identity import commit_tag
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql

# Delta operationMetrics keys per count, first present wins.
_DELTA_METRICS = {
    "inserts": ("numTargetRowsInserted", "numOutputRows"),
    "updates": ("numTargetRowsUpdated",),
    "deletes": ("numTargetRowsDeleted", "numDeletedRows"),
}
INVOCATION_PREFIX = "jammi:invocation_id="


def require_version(value: Any, subject: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise run_errors.MutableRunError(
            f"{subject}: version must be a whole number, got {value!r}. Fix: pass a version "
            "that mutable_table_history lists, e.g. version=12"
        )
    return value


def path_relation_sql(file_format: str, location: str) -> str:
    """A version directory read by its path: ``parquet.`<dir>` ``."""
    if "`" in location:
        raise run_errors.MutableRunError(
            f"cannot read {location!r} by path (it contains a backtick)"
        )
    return f"{file_format}.`{location}`"


def as_of_sql(source: str, tenant: Optional[str]) -> str:
    """A FROM item over ``source`` (a path read or a time-travel read), tenant-scoped
    like ``tenant_scoped()`` in a bound run."""
    if tenant is None:
        return f"(select * from {source})"
    return scoped_relation_sql(source, tenant)


def delta_as_of_source(relation: str, version: Optional[int], timestamp: Optional[str]) -> str:
    if version is not None:
        return f"{relation} version as of {int(version)}"
    return f"{relation} timestamp as of {sql_string_literal(str(timestamp))}"


def version_at(history: Sequence[Mapping[str, Any]], at_ms: int, subject: str) -> int:
    """The kept version that was current at ``at_ms`` (newest committed at or before)."""
    eligible = [
        row
        for row in history
        if row.get("committed_ms") is not None and int(row["committed_ms"]) <= at_ms
    ]
    if not eligible:
        times = [int(r["committed_ms"]) for r in history if r.get("committed_ms") is not None]
        since = f" (the oldest kept version was committed at {min(times)} ms)" if times else ""
        raise run_errors.MutableRunError(
            f"{subject}: no kept version was current at {at_ms} ms{since}. "
            "Nothing was read or changed. Fix: pick a later time, or a version that "
            "mutable_table_history lists"
        )
    return int(max(eligible, key=lambda r: int(r["committed_ms"]))["version"])


def delta_history_rows(rows: Sequence[Sequence[Any]], versions_kept: int) -> list[dict[str, Any]]:
    """``DESCRIBE HISTORY`` rows (version, timestamp, ..., operationMetrics,
    userMetadata, ...) as the newest ``versions_kept`` history entries, newest first."""
    entries: list[dict[str, Any]] = []
    for row in rows:
        values = delta_history_entry(row)
        metrics = values["operationMetrics"]
        counts: dict[str, int] = {}
        for name, keys in _DELTA_METRICS.items():
            found = next((metrics[k] for k in keys if k in metrics), 0)
            counts[name] = int(found or 0)
        if values.get("operation") not in ("MERGE", "WRITE", "CREATE TABLE AS SELECT"):
            counts = {"inserts": 0, "updates": 0, "deletes": 0}
        metadata = commit_tag(str(values.get("userMetadata") or ""))  # without a mark
        entries.append(
            {
                "version": int(values["version"]),
                "committed_ms": commit_millis(values.get("timestamp")),
                **counts,
                "invocation_id": metadata[len(INVOCATION_PREFIX) :]
                if metadata.startswith(INVOCATION_PREFIX)
                else None,
                "kind": str(values.get("operation") or ""),
                "location": None,
            }
        )
    entries.sort(key=lambda e: int(e["version"]), reverse=True)
    kept = entries[: max(1, versions_kept)]
    for index, entry in enumerate(kept):
        entry["current"] = index == 0
    return kept


def commit_millis(value: Any) -> Optional[int]:
    """A commit time (a datetime, or Spark's rendering over thrift) in epoch milliseconds."""
    if value is None:
        return None
    if isinstance(value, str):  # over thrift: Spark's rendering, in the session time zone
        try:
            value = datetime.fromisoformat(value.strip().replace(" ", "T"))
        except ValueError:
            return None
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)  # the adapter's session default: UTC
    timestamp = getattr(value, "timestamp", None)
    if callable(timestamp):
        return int(timestamp() * 1000)
    return None


def require_kept_delta_version(
    history: Sequence[Mapping[str, Any]], version: int, subject: str
) -> None:
    numbers = [int(row["version"]) for row in history]
    if version not in numbers:
        raise run_errors.MutableRunError(
            f"{subject}: version {version} is not kept (kept versions: "
            f"{', '.join(str(n) for n in numbers)}). Nothing was read or changed.\n"
            "  Fix: pick a kept version (dbt run-operation mutable_table_history), or raise "
            "versions_kept to keep more in future"
        )


def aligned_select_sql(
    storage_columns: Sequence[Sequence[str]], available: Sequence[str], source: str
) -> str:
    """The rows of ``source`` with the table's current storage columns (a column the
    kept version did not have yet reads as NULL), then ``tenant_id``."""
    present = {name.lower() for name in available}
    parts = []
    for name, data_type in storage_columns:
        column = quote_identifier(name)
        if name.lower() in present:
            parts.append(f"cast({column} as {data_type}) as {column}")
        else:
            parts.append(f"cast(null as {data_type}) as {column}")
    tenant = "tenant_id" if "tenant_id" in present else "cast(null as string) as tenant_id"
    return f"select {', '.join(parts)}, {tenant} from {source}"


def rollback_change_set_sql(
    storage_columns: Sequence[str],
    storage_key: Sequence[str],
    current_sql: str,
    target_sql: str,
) -> str:
    """parquet/orc: a change set in the planner's shape (``_change``, the storage
    columns, ``tenant_id``, the stored values as ``_jammi_prev_<n>``) that turns the
    current rows into ``target_sql``'s rows, so a rollback is applied, counted,
    published and committed by the run's own rewrite path. Unchanged keys are absent."""
    keys = ["tenant_id", *storage_key]
    on = " and ".join(f"c.{quote_identifier(k)} <=> t.{quote_identifier(k)}" for k in keys)
    values = [c for c in storage_columns if c not in keys]
    same = " and ".join(f"c.{quote_identifier(v)} <=> t.{quote_identifier(v)}" for v in values)
    probe = quote_identifier(storage_key[0])
    change = (
        f"case when c.{probe} is null then 'insert' when t.{probe} is null then 'delete' "
        "else 'update' end as _change"
    )
    picked = [
        f"case when t.{probe} is null then c.{quote_identifier(n)} else t.{quote_identifier(n)} "
        f"end as {quote_identifier(n)}"
        for n in [*storage_columns, "tenant_id"]
    ]
    previous = [
        f"c.{quote_identifier(n)} as _jammi_prev_{i}" for i, n in enumerate(storage_columns)
    ]
    changed = f" or not ({same})" if same else ""
    return (
        f"select {change}, {', '.join(picked + previous)} "
        f"from ({current_sql}) as c full outer join ({target_sql}) as t on {on} "
        f"where c.{probe} is null or t.{probe} is null{changed}"
    )


def rollback_merge_sql(
    relation: str,
    storage_key: Sequence[str],
    columns: Sequence[str],
    target_sql: str,
) -> str:
    """Delta: one MERGE that makes ``target_sql``'s rows the table's rows (a new
    version; Delta's conflict detection applies as to any run's MERGE)."""
    keys = ["tenant_id", *storage_key]
    on = " and ".join(f"t.{quote_identifier(k)} <=> s.{quote_identifier(k)}" for k in keys)
    values = [c for c in columns if c not in keys]
    same = " and ".join(f"t.{quote_identifier(v)} <=> s.{quote_identifier(v)}" for v in values)
    every = [*columns, "tenant_id"] if "tenant_id" not in columns else list(columns)
    update = ", ".join(f"t.{quote_identifier(v)} = s.{quote_identifier(v)}" for v in values)
    matched = f"when matched and not ({same}) then update set {update} " if values else ""
    names = ", ".join(quote_identifier(c) for c in every)
    inserted = ", ".join(f"s.{quote_identifier(c)}" for c in every)
    return (
        f"merge into {relation} as t using ({target_sql}) as s on {on} "
        f"{matched}"
        f"when not matched then insert ({names}) values ({inserted}) "
        "when not matched by source then delete"
    )
