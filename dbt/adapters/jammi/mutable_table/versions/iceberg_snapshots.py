"""An Iceberg mutable table's kept versions are its snapshots.

A version number is a snapshot id (``VERSION AS OF <snapshot id>`` reads it, as Delta's
``VERSION AS OF <version>`` reads a Delta version), listed from the table's ``history``
metadata table -- the snapshots that were made current, in order -- joined with
``snapshots`` for the commit time and operation. Only ancestors of the current snapshot
are versions (a snapshot left behind by Iceberg's own ``rollback_to_snapshot`` is not);
dbt-jammi's rollback writes the kept snapshot's rows as a new snapshot (one MERGE), so
history is never rewritten. Snapshot ids are not ordered: versions are ordered by when
they were made current.

Counts: an Iceberg snapshot summary counts rows in the files a commit added and removed
(a copy-on-write MERGE rewrites whole files), not the rows inserted, updated or deleted,
so the history shows them as unknown. Invocation ids: Iceberg takes snapshot summary
properties only as DataFrame write options, not in SQL, so none is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt.adapters.jammi.mutable_table.versions.version_reads import commit_millis


def history_sql(relation: str) -> str:
    """The current snapshot's ancestry, oldest first: snapshot id, when it was made
    current, its operation."""
    return (
        "select h.snapshot_id, h.made_current_at, s.operation "
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


def history_rows(rows: Sequence[Sequence[Any]], versions_kept: int) -> list[dict[str, Any]]:
    """``history_sql`` rows as the newest ``versions_kept`` history entries, newest first
    (the shape of version_reads.delta_history_rows; counts and invocation id unknown)."""
    entries = [
        {
            "version": int(row[0]),
            "committed_ms": commit_millis(row[1]),
            "inserts": None,
            "updates": None,
            "deletes": None,
            "invocation_id": None,
            "kind": str(row[2] or ""),
            "location": None,
        }
        for row in rows
    ]
    entries.reverse()  # newest first: the order they were made current
    kept = entries[: max(1, versions_kept)]
    for index, entry in enumerate(kept):
        entry["current"] = index == 0
    return kept
