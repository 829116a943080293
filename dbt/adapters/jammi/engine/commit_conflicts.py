"""Whether an engine error is a table format refusing an optimistic commit (another writer
committed first): Delta's conflict exceptions and Iceberg's. The commit paths that retry
on it: a mutable table's MERGE (mutable_table/commit/merge_commit.py), a topic's offset
claim (topic/publish.py), a changelog's publish (mutable_table/rules/changelog.py)."""

from __future__ import annotations

from typing import Callable, Optional

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

# Iceberg's: the metastore swap of the metadata pointer lost (CommitFailedException), or
# the commit's validation found files another snapshot added or removed since this
# write's snapshot (ValidationException "Found conflicting files" / "Found new
# conflicting delete files" / "Missing required files to delete"). Other
# ValidationExceptions (a schema mismatch) are no conflict.
ICEBERG_CONFLICT_MARKERS = (
    "org.apache.iceberg.exceptions.CommitFailedException",
    "Found conflicting files",
    "Found new conflicting",
    "Missing required files to delete",
    "Cannot commit, found new",
)


def is_commit_conflict(message: str) -> bool:
    return any(marker in message for marker in (*DELTA_CONFLICT_MARKERS, *ICEBERG_CONFLICT_MARKERS))


def run_claim(
    run_sql: Callable[[str], object], statement: str, taken: str, attempts: int
) -> tuple[Optional[bool], str]:
    """Run a claim (an Iceberg MERGE whose matched clause raises ``taken``) until it
    commits (True) or finds its claim taken (False); (None, last error) when every
    attempt was refused by a concurrent commit. Other errors are raised."""
    last = ""
    for _ in range(attempts):
        try:
            run_sql(statement)
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            message = str(exc)
            if taken in message:
                return False, ""
            if not is_commit_conflict(message):
                raise
            last = message.splitlines()[0]
            continue
        return True, ""
    return None, last
