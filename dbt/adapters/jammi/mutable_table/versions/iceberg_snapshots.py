"""An Iceberg mutable table's kept versions are its snapshots.

A version number is a snapshot id (``VERSION AS OF <snapshot id>`` reads it, as Delta's
``VERSION AS OF <version>`` reads a Delta version), listed from the table's ``history``
metadata table -- the snapshots that were made current, in order -- joined with
``snapshots`` for the commit time, operation and summary. Only ancestors of the current
snapshot are versions (a snapshot left behind by Iceberg's own ``rollback_to_snapshot``
is not); dbt-jammi's rollback writes the kept snapshot's rows as a new snapshot (one
MERGE), so history is never rewritten. Snapshot ids are not ordered: versions are
ordered by when they were made current.

Counts come from the snapshot's summary (``version_counts``): Spark's MERGE counts where
the commit has them (a MERGE on Spark >= 4.1), else what Iceberg's own summary fields
show exactly (an append's added rows; a compaction or an empty commit changes none).
A MERGE on Spark 3.5 keeps them unknown: its summary counts the rows of the files it
added and removed (a copy-on-write MERGE rewrites whole files), not the rows inserted,
updated or deleted, and no SQL on Spark 3.5 adds a property of the writer's own to a
snapshot. Invocation ids: none is recorded on a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table.commit.iceberg_merge import DELETED, INSERTED, UPDATED
from dbt.adapters.jammi.mutable_table.versions.version_reads import commit_millis

# Iceberg's own summary fields (the table spec's optional snapshot summary fields).
ADDED_RECORDS = "added-records"
DELETED_RECORDS = "deleted-records"
ADDED_DATA_FILES = "added-data-files"
DELETED_DATA_FILES = "deleted-data-files"
ADDED_DELETE_FILES = "added-delete-files"
REMOVED_DELETE_FILES = "removed-delete-files"
_FILE_CHANGES = (ADDED_DATA_FILES, DELETED_DATA_FILES, ADDED_DELETE_FILES, REMOVED_DELETE_FILES)

# The summary fields the history reads, each a column of history_sql (a map does not
# cross every connection method as a map).
SUMMARY_KEYS = (INSERTED, UPDATED, DELETED, ADDED_RECORDS, DELETED_RECORDS, *_FILE_CHANGES)

Counts = tuple[Optional[int], Optional[int], Optional[int]]
UNKNOWN: Counts = (None, None, None)


def history_sql(relation: str) -> str:
    """The current snapshot's ancestry, oldest first: snapshot id, when it was made
    current, its operation, then its summary's ``SUMMARY_KEYS`` (NULL where absent)."""
    summary = "".join(f", s.summary[{sql_string_literal(key)}]" for key in SUMMARY_KEYS)
    return (
        f"select h.snapshot_id, h.made_current_at, s.operation{summary} "
        f"from {relation}.history as h join {relation}.snapshots as s "
        "on h.snapshot_id = s.snapshot_id "
        "where h.is_current_ancestor "
        "order by h.made_current_at, h.snapshot_id"
    )


def current_snapshot_sql(relation: str) -> str:
    """The current snapshot's id: the version a run left the table at."""
    return (
        f"select snapshot_id from {relation}.history where is_current_ancestor "
        "order by made_current_at desc, snapshot_id desc limit 1"
    )


def _count(summary: Mapping[str, Any], key: str) -> Optional[int]:
    value = summary.get(key)
    return None if value is None else int(value)


def version_counts(operation: str, summary: Mapping[str, Any]) -> Counts:
    """What a snapshot inserted, updated and deleted (None: its summary does not say).

    - Spark's MERGE counts (Spark >= 4.1 writes them with every MERGE's snapshot,
      whatever its operation): those, each unknown where Spark omitted it;
    - ``append`` (a first run's CREATE TABLE AS SELECT, a MERGE that only inserted): its
      ``added-records`` inserted, nothing else (an append only adds files);
    - ``replace`` (a compaction: the same rows in other files): nothing changed;
    - ``overwrite`` or ``delete`` that added and removed no file: nothing changed;
    - ``delete`` that only removed whole data files: their ``deleted-records`` deleted;
    - any other ``overwrite`` or ``delete`` (a MERGE, UPDATE or DELETE on Spark 3.5):
      unknown, its summary counts the rows of the files it rewrote."""
    if INSERTED in summary:
        return (_count(summary, INSERTED), _count(summary, UPDATED), _count(summary, DELETED))
    if operation == "append":
        return (_count(summary, ADDED_RECORDS) or 0, 0, 0)
    if operation == "replace":
        return (0, 0, 0)
    changed = {key for key in _FILE_CHANGES if _count(summary, key)}
    if operation in ("overwrite", "delete") and not changed:
        return (0, 0, 0)
    if operation == "delete" and changed == {DELETED_DATA_FILES}:
        return (0, 0, _count(summary, DELETED_RECORDS) or 0)
    return UNKNOWN


def history_rows(rows: Sequence[Sequence[Any]], versions_kept: int) -> list[dict[str, Any]]:
    """``history_sql`` rows as the newest ``versions_kept`` history entries, newest first
    (the shape of version_reads.delta_history_rows; the invocation id unknown)."""
    entries = []
    for row in rows:
        operation = str(row[2] or "")
        summary = {k: v for k, v in zip(SUMMARY_KEYS, row[3:]) if v is not None}
        inserts, updates, deletes = version_counts(operation, summary)
        entries.append(
            {
                "version": int(row[0]),
                "committed_ms": commit_millis(row[1]),
                "inserts": inserts,
                "updates": updates,
                "deletes": deletes,
                "invocation_id": None,
                "kind": operation,
                "location": None,
            }
        )
    entries.reverse()  # newest first: the order they were made current
    kept = entries[: max(1, versions_kept)]
    for index, entry in enumerate(kept):
        entry["current"] = index == 0
    return kept
