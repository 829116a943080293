"""What a stored table answers about its own versions, one class per table format: its
kept versions (``mutable_table_history``), its version after a commit (the run's
``adapter_response``), and its identity column's committed high-water mark.

A rewrite format (parquet, orc) reads its version directories; Delta its table
history; Iceberg its snapshots. ``format_reads`` chooses the class from the format's
class (table_format.py), so no caller tests a format's name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.validation import quote_identifier
from dbt.adapters.jammi.mutable_table import version_locations
from dbt.adapters.jammi.mutable_table.rules import identity_phases
from dbt.adapters.jammi.mutable_table.table_format import (
    DeltaFormat,
    IcebergFormat,
    table_format,
)
from dbt.adapters.jammi.mutable_table.versions import (
    iceberg_snapshots,
    kept_versions,
    version_reads,
)

RunSql = Callable[[str], Sequence[Sequence[Any]]]
_NO_PATH = ("PATH_NOT_FOUND", "Path does not exist", "does not exist")


def version_records(run_sql: RunSql, current_location: str) -> list[kept_versions.VersionRecord]:
    """The version log beside a parquet/orc table's version directories ([] when no
    version was logged yet: a table made before the log existed)."""
    base = current_location.rstrip("/").rsplit("/", 1)[0]
    try:
        rows = run_sql(kept_versions.read_log_sql(base))
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if any(marker in str(exc) for marker in _NO_PATH):
            return []
        raise
    return kept_versions.parse_log_rows(rows)


def delta_history(run_sql: RunSql, relation: str, versions_kept: int) -> list[dict[str, Any]]:
    return version_reads.delta_history_rows(run_sql(f"describe history {relation}"), versions_kept)


class RewriteReads:
    """A rewrite format's table: each version a directory (``location``: the current)."""

    def __init__(self, run_sql: RunSql) -> None:
        self.run_sql = run_sql

    def history(
        self, relation: str, location: Optional[str], versions_kept: int
    ) -> list[dict[str, Any]]:
        """The kept versions, newest first: [{version, committed_ms, inserts, updates,
        deletes, invocation_id, current, location}]."""
        records = version_records(self.run_sql, str(location))
        return kept_versions.history_rows(records, str(location), versions_kept)

    def version_after(
        self, relation: Any, counts: Mapping[str, Any], location: Optional[str]
    ) -> Optional[int]:
        """The table's version after a run committed: the snapshot an Iceberg
        batch-sourced MERGE read with its counts, else the table's current version
        (``location``: the version the run committed, else the one it read)."""
        if counts.get("snapshot_id") is not None:
            return int(counts["snapshot_id"])
        return self.current_version(relation, location)

    def current_version(self, relation: Any, location: Optional[str]) -> Optional[int]:
        return version_locations.parse_version(location) if location else None

    def identity_mark(self, relation: str, location: Optional[str]) -> Optional[int]:
        """The identity column's committed high-water mark (``location``: the version
        planned from), None when none is recorded."""
        return identity_phases.version_mark(self.run_sql, location)


class DeltaReads(RewriteReads):
    def history(
        self, relation: str, location: Optional[str], versions_kept: int
    ) -> list[dict[str, Any]]:
        return delta_history(self.run_sql, relation, versions_kept)

    def current_version(self, relation: Any, location: Optional[str]) -> Optional[int]:
        # the name quoted: Delta's grammar takes ``history`` as a keyword
        name = f"{quote_identifier(relation.schema)}.{quote_identifier(relation.identifier)}"
        return int(self.run_sql(f"describe history {name} limit 1")[0][0])

    def identity_mark(self, relation: str, location: Optional[str]) -> Optional[int]:
        return identity_phases.delta_mark(self.run_sql, relation)


class IcebergReads(RewriteReads):
    def history(
        self, relation: str, location: Optional[str], versions_kept: int
    ) -> list[dict[str, Any]]:
        rows = self.run_sql(iceberg_snapshots.history_sql(relation))
        return iceberg_snapshots.history_rows(rows, versions_kept)

    def current_version(self, relation: Any, location: Optional[str]) -> Optional[int]:
        rows = self.run_sql(iceberg_snapshots.current_snapshot_sql(str(relation)))
        return int(rows[0][0]) if rows else None

    def identity_mark(self, relation: str, location: Optional[str]) -> Optional[int]:
        return identity_phases.iceberg_mark(self.run_sql, relation)


def format_reads(file_format: Any, run_sql: RunSql) -> RewriteReads:
    """The reads of a table stored as ``file_format`` (a format dbt-jammi does not know
    reads as a rewrite format)."""
    kind = table_format(file_format)
    if isinstance(kind, DeltaFormat):
        return DeltaReads(run_sql)
    if isinstance(kind, IcebergFormat):
        return IcebergReads(run_sql)
    return RewriteReads(run_sql)
