"""Whether an engine error is Delta refusing an optimistic commit (another writer committed
first). The commit paths that retry on it: a mutable table's MERGE
(mutable_table/commit/delta_merge.py), a topic's offset claim (topic/publish.py), a
changelog's publish (mutable_table/rules/changelog.py)."""

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


def is_delta_conflict(message: str) -> bool:
    return any(marker in message for marker in DELTA_CONFLICT_MARKERS)
