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

from collections.abc import Sequence
from typing import Any, Callable

from dbt.adapters.jammi import mutable

# Delta's conflict exceptions, by class name and by error class (Delta 3.x / 4.x).
DELTA_CONFLICT_MARKERS = (
    "ConcurrentAppendException",
    "ConcurrentWriteException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
    "MetadataChangedException",
    "ProtocolChangedException",
    "DELTA_CONCURRENT_",
    "DELTA_METADATA_CHANGED",
    "DELTA_PROTOCOL_CHANGED",
)

RunSql = Callable[[str], Sequence[Sequence[Any]]]


class MergeConflict(mutable.MutableRunError):
    """Concurrent runs kept committing first: this run's MERGE was refused every time."""


def is_delta_conflict(message: str) -> bool:
    return any(marker in message for marker in DELTA_CONFLICT_MARKERS)


def commit_merge(run_sql: RunSql, merge_sql: str, model_name: str, last_attempt: bool) -> bool:
    """Run the MERGE. True when it committed; False when Delta refused it for a concurrent
    commit and the caller may re-plan; ``MergeConflict`` when that was the last attempt.
    Any other error is raised as it is."""
    try:
        run_sql(merge_sql)
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        message = str(exc)
        if not is_delta_conflict(message):
            raise
        if last_attempt:
            first = next((line for line in message.splitlines() if "Concurrent" in line), "")
            raise MergeConflict(
                f"mutable_table '{model_name}': concurrent runs committed to the table before "
                f"this run's MERGE on every attempt ({first.strip()[:200]}). Nothing of this "
                "run was written; re-run to apply the batch on top of theirs."
            ) from exc
        return False
    return True
