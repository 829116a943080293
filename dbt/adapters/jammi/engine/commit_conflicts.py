"""Whether an engine error is a table format refusing an optimistic commit (another writer
committed first): Delta's conflict exceptions and Iceberg's. The commit paths that retry
on it: a mutable table's MERGE (mutable_table/commit/merge_commit.py), a topic's offset
claim (topic/publish.py), a changelog's publish (mutable_table/rules/changelog.py)."""

from __future__ import annotations

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
