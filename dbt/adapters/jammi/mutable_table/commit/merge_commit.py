"""The MERGE applier's commit on Delta: a conflict is a re-plan, not a lost update.

A mutable_table MERGE reads the whole target (its change set is a view over the target,
evaluated inside the MERGE's own transaction) and commits optimistically. When another
run commits first, Delta refuses this commit with a conflict exception
(``ConcurrentAppendException`` and relatives) and nothing of this run is written. The
materialization then re-plans against the new snapshot -- state, change set, counts and
unique-index checks again -- and merges again, up to ``COMMIT_ATTEMPTS`` times in all;
after the last refused attempt the run fails with a message naming the model.

Assumes what Delta guarantees: a refused commit leaves no trace in the table, and of two
commits from the same snapshot that touch the same files, at most one succeeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.engine.commit_conflicts import is_commit_conflict
from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.commit.rewrite_commit import already_exists
from dbt.adapters.jammi.mutable_table.rules.identity import identity_moved

# A Delta create that found files at the table's location (another run's create, or
# the first commit of a crashed one).
NON_EMPTY_LOCATION = "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"

RunSql = Callable[[str], Sequence[Sequence[Any]]]

# Table formats a mutable_table changes with MERGE (the others are rewritten).
MERGE_FORMATS = ("delta", "iceberg")

# The batch-sourced MERGE (merge_batch.sql) checks each batch row on its way in: a bad row
# raises an error carrying this marker and the batch check's kind (checks.sql's kinds).
BATCH_CHECK_MARKER = "jammi-batch-check:"
BATCH_CHECK_KINDS = ("null_key", "null_version", "duplicate_key", "duplicate_version")


class MergeConflict(run_errors.MutableRunError):
    """Concurrent runs kept committing first: this run's MERGE was refused every time."""


def batch_check_marker(kind: str) -> str:
    if kind not in BATCH_CHECK_KINDS:
        raise ValueError(f"unknown batch check {kind!r}")
    return BATCH_CHECK_MARKER + kind


def failed_batch_check(message: str) -> Optional[str]:
    """The batch check a failed MERGE raised (its kind), or None."""
    at = message.find(BATCH_CHECK_MARKER)
    if at < 0:
        return None
    rest = message[at + len(BATCH_CHECK_MARKER) :]
    return next((kind for kind in BATCH_CHECK_KINDS if rest.startswith(kind)), None)


def merges_batch(definition: Mapping[str, Any]) -> bool:
    """Whether a Delta table's run can MERGE the batch itself (merge_batch.sql) instead of
    a change set planned beforehand: the per-key decisions fit the MERGE's clauses. Not for
    scd2 histories (intervals are split and closed), TTL (expired rows join the set),
    merge functions with a version column (a key's newer batch rows combine first) or
    unique indexes (the next state is checked before the MERGE) or an identity column
    (new keys are numbered in key order, which needs the planned inserts)."""
    return (
        definition.get("history", "none") == "none"
        and not definition.get("ttl_ms")
        and not (definition.get("merge_functions") and definition.get("version_column"))
        and not any(index.get("unique") for index in definition.get("indexes") or [])
        and not definition.get("identity_column")
    )


def plans_checked_batch(definition: Mapping[str, Any]) -> bool:
    """Whether the change-set planner can check the batch on its way in (the checks'
    window is the planner's own pick of a key's latest row): history none, and not merge
    functions with a version column (a key's newer rows combine instead)."""
    return definition.get("history", "none") == "none" and not (
        definition.get("merge_functions") and definition.get("version_column")
    )


def change_counts(insert: int, update: int, delete: int) -> dict[str, Any]:
    """A run's counts as the materialization reports them (``rows_affected``, message)."""
    return {
        "insert": insert,
        "update": update,
        "delete": delete,
        "total": insert + update + delete,
        "message": f"INSERT {insert}, UPDATE {update}, DELETE {delete}",
    }


def merge_counts(rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The counts of a committed Delta MERGE, from the row it returns:
    ``num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows``. The
    MERGE has committed by then, so a result of another shape is reported, not raised."""
    if not rows or len(rows[0]) != 4:
        return dict(change_counts(0, 0, 0), message="MERGE committed (no counts returned)")
    _, updated, deleted, inserted = (int(value or 0) for value in rows[0])
    return change_counts(inserted, updated, deleted)


class BatchRejected(Exception):
    """A batch-sourced MERGE stopped at a row that fails a batch check (``kind``)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def commit_merge(
    run_sql: RunSql, merge_sql: str, model_name: str, last_attempt: bool
) -> Optional[Sequence[Sequence[Any]]]:
    """Run the MERGE. Its result rows when it committed; None when Delta refused it for a
    concurrent commit and the caller may re-plan; ``MergeConflict`` when that was the
    last attempt; ``BatchRejected`` when a batch check stopped it (nothing committed).
    Any other error is raised as it is."""
    try:
        rows = run_sql(merge_sql)
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        message = str(exc)
        kind = failed_batch_check(message)
        if kind is not None:
            raise BatchRejected(kind) from exc
        # a Delta conflict, or a run that stored numbers above this MERGE's start first
        if not (is_commit_conflict(message) or identity_moved(message)):
            raise
        if last_attempt:
            first = next((line for line in message.splitlines() if "Concurrent" in line), "")
            raise MergeConflict(
                f"mutable_table '{model_name}': concurrent runs committed to the table before "
                f"this run's MERGE on every attempt ({first.strip()[:200]}). Nothing of this "
                "run was written; re-run to apply the batch on top of theirs."
            ) from exc
        return None
    return rows


def lost_create_message(
    created: str, message: str, table_listed: Callable[[], bool]
) -> Optional[str]:
    """Why a first run's create of ``created`` failed, when it lost to another run's
    create of the same table; None for any other failure. Delta reports the loser of two
    concurrent creates as a conflict on the new log's first commit, or finds the winner's
    files at the location before the winner's table is in the metastore (then
    ``table_listed`` tells a lost race from files a crashed first run left behind)."""
    lost = already_exists(message) or is_commit_conflict(message)
    if NON_EMPTY_LOCATION in message:
        try:
            lost = table_listed()
        except Exception:  # noqa: BLE001 - cannot tell: report the engine's error
            return None
        if not lost:
            return (
                f"{created}: its location holds Delta files but no table: another first run "
                "is creating it right now, or an earlier first run crashed after its first "
                "Delta commit. Nothing of this run was written. Re-run once the other run "
                "has finished; if no run is in progress, remove the directory Spark names "
                f"here: {message.strip().splitlines()[0][:300]}"
            )
    if not lost:
        return None
    return (
        f"{created} was created by another run while this run was creating it (two first "
        "runs at once). Nothing of this run was written; re-run to apply this batch to the "
        "table the other run created."
    )
