"""A topic's consumers (docs/topic.md, "Consuming"): the offset range a consumer model
read, kept from compile time until its post-hook, and the positions it records.

- ``ConsumerBounds``: the range (last consumed, high-water mark] a consumer model read
  at compile time, kept in the adapter process (never in Spark) until the model's
  post-hook ``topic_commit_consumed()`` records it.
- ``record_consumed``: that post-hook. Only after the model's own statements succeeded:
  each topic's range is counted for the run report and its high-water mark appended to
  ``topic_consumers`` (append-only; a position is ``max(last_offset)``). A run that
  fails records nothing, so the next run reads the same events again.
- ``consumer_offsets``: every registered consumer's position, which retention waits for.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.topic.publish import events_select_sql, now_micros
from dbt.adapters.jammi.topic.registration import is_not_found

RunSql = Callable[[str], Sequence[Sequence[Any]]]

CONSUMERS_TABLE = "topic_consumers"


@dataclass(frozen=True)
class ConsumedRange:
    """What a consumer model read from one topic: offsets in (after, upto]."""

    topic_schema: str
    topic_id: str
    after: int
    upto: int
    tenant: Optional[str] = None
    backing: str = ""  # the topic's table, for the count of events read
    name: str = ""  # the topic as the consumer named it (schema.model), for its report


class ConsumerBounds:
    """Ranges read by consumer models, kept from compile time until their post-hook.

    The upper bound is fixed once, when the model's SQL is compiled: events published
    while the model runs are above it, so they are read next time, not skipped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ranges: dict[str, dict[str, ConsumedRange]] = {}

    def remember(self, consumer: str, consumed: ConsumedRange) -> None:
        with self._lock:
            self._ranges.setdefault(consumer, {})[consumed.topic_id] = consumed

    def take(self, consumer: str) -> list[ConsumedRange]:
        with self._lock:
            return list(self._ranges.pop(consumer, {}).values())


def create_consumers_sql(consumers: str, using: str = "parquet") -> str:
    """Append-only, so any format holds it: parquet on the session catalog, iceberg on a
    catalog service."""
    return (
        f"create table if not exists {consumers} (consumer string, tenant_id string, "
        f"topic_id string, last_offset bigint, committed_at bigint) using {using} comment "
        "'dbt-jammi topic consumers: append-only; a consumer position is max(last_offset)'"
    )


def consumer_offsets(run_sql: RunSql, consumers: str, topic_id: str) -> Optional[list[int]]:
    """The last consumed offset of every consumer (per tenant) of a topic; None when
    ``consumers`` does not exist (asked directly: no separate existence check)."""
    try:
        rows = run_sql(
            f"select max(last_offset) from {consumers} where topic_id = "
            f"{sql_string_literal(topic_id)} group by consumer, tenant_id"
        )
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if is_not_found(str(exc)):
            return None
        raise
    return [row[0] for row in rows]


def record_consumed(
    run_sql: RunSql,
    consumer: str,
    ranges: Sequence[ConsumedRange],
    consumers_table: Callable[[str], str],
) -> dict[str, list[int]]:
    """Record what ``consumer`` read, per topic; returns what it reports: per topic as
    the consumer named it, [after, upto, events read]. ``consumers_table``: the
    positions table of a schema, created if missing."""
    reads: dict[str, list[int]] = {}
    for consumed in ranges:
        if consumed.upto <= consumed.after:
            continue
        events = events_select_sql(
            consumed.backing, [], consumed.after, consumed.upto, consumed.tenant, None
        )
        counted = run_sql(f"select count(*) from ({events})")
        reads[consumed.name] = [consumed.after, consumed.upto, int(counted[0][0])]
        tenant = sql_string_literal(consumed.tenant) if consumed.tenant is not None else "null"
        run_sql(
            f"insert into {consumers_table(consumed.topic_schema)} values ("
            f"{sql_string_literal(consumer)}, {tenant}, {sql_string_literal(consumed.topic_id)}, "
            f"{int(consumed.upto)}, {now_micros()})"
        )
    return reads
