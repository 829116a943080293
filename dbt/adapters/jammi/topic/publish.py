"""Topic publishing, consuming and retention decisions (docs/topic.md).

The Jinja materialization orchestrates; everything here is a decision or a retry loop
that needs to catch an engine error, which Jinja cannot do:

- ``claim_offset``: the publish commit. On parquet the batch is first staged into a
  fresh directory, then claimed with ``ALTER TABLE ... ADD PARTITION (_offset=N)
  LOCATION <staging dir>``. The metastore refuses a partition that already exists, so
  the claim is the lock: exactly one publisher gets N, the loser re-reads the offsets
  and claims N+1 with the same staged files (the offset lives only in the partition
  spec, not in the files). On delta the staged rows are appended by one ``INSERT``
  whose offset is computed inside the same Delta transaction from the table it reads;
  Delta's optimistic concurrency rejects the second of two concurrent commits
  (``ConcurrentAppendException``, the table is set to ``Serializable``), and the loser
  retries. On iceberg the offset N (one more than the newest) is read first, then one
  ``MERGE`` inserts the staged rows as offset N: a row already at N fails it (its
  matched clause raises), and Iceberg's serializable validation fails it when another
  commit added rows since the MERGE read the table. The loser reads again and retries.
  A batch without rows claims nothing (``staged_rows_sql`` counts it first): an offset
  is claimed only by rows stored under it. Claimed empty, an offset would read as a
  publish nowhere: the Iceberg and Delta claims compute the next offset from the
  newest stored row, so the next publish would report it again.
- ``retention_plan``: which offsets may be dropped.
- ``apply_retention``: reads what is stored and what the consumers consumed, drops
  the offsets the plan allows.
- ``events_select_sql``: the events a consumer reads (topic/consumers.py records them).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.engine.commit_conflicts import is_commit_conflict
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql
from dbt.adapters.jammi.topic.staging import (
    check_claimable,
)

ENGINE_COLUMNS = ("_offset", "_row_idx", "_produced_at")
EVENT_COLUMNS = {
    "_offset": "event_offset",
    "_row_idx": "event_row_idx",
    "_produced_at": "event_produced_at",
    "tenant_id": "event_tenant_id",
}
MAX_CLAIM_ATTEMPTS = 20
# Formats whose offsets live in the rows (a column), not in metastore partitions.
TABLE_FORMATS = ("delta", "iceberg")
# What an iceberg publish's MERGE raises when its offset is already stored.
OFFSET_TAKEN = "jammi: topic offset already claimed"
CLAIM_LOST = "offset claim lost to a concurrent publish; retrying"

logger = AdapterLogger("jammi")

_PARTITION = re.compile(r"_offset=(\d+)")
_PARQUET_CONFLICT = ("PARTITIONS_ALREADY_EXIST", "AlreadyExistsException", "already exist")

RunSql = Callable[[str], Sequence[Sequence[Any]]]


class TopicPublishError(JammiValidationError):
    """The publish could not claim an offset."""


def now_micros() -> int:
    return time.time_ns() // 1000


# --- offsets -------------------------------------------------------------------


def offsets_from_partitions(rows: Iterable[Sequence[Any]]) -> list[int]:
    """Offsets from ``SHOW PARTITIONS`` rows (``_offset=7``), ascending."""
    offsets = []
    for row in rows:
        match = _PARTITION.search(str(row[0]))
        if match:
            offsets.append(int(match.group(1)))
    return sorted(offsets)


def high_water_mark(run_sql: RunSql, backing: str, file_format: str) -> int:
    """The newest committed offset of a topic (0: none): delta's and iceberg's
    ``max(_offset)``, a parquet topic's newest partition (listed by the metastore, no
    data read)."""
    if file_format in TABLE_FORMATS:
        return int(run_sql(f"select coalesce(max(_offset), 0) from {backing}")[0][0])
    offsets = offsets_from_partitions(run_sql(show_partitions_sql(backing)))
    return offsets[-1] if offsets else 0


def next_offset(offsets: Iterable[Optional[int]]) -> int:
    present = [int(o) for o in offsets if o is not None]
    return (max(present) if present else 0) + 1


def is_conflict(message: str, file_format: str) -> bool:
    if file_format == "iceberg":
        return is_commit_conflict(message) or OFFSET_TAKEN in message
    if file_format == "delta":
        return is_commit_conflict(message)
    return any(marker in message for marker in _PARQUET_CONFLICT)


# --- SQL the publish commit runs -----------------------------------------------


def show_partitions_sql(backing: str) -> str:
    return f"show partitions {backing}"


def staged_rows_sql(kind: str, target: str) -> str:
    """The rows of a staged batch (``kind``: a parquet ``directory`` or a stage
    ``table``). An empty batch is a parquet file of no rows, so this reads as 0."""
    if kind == "directory":
        return f"select count(*) from parquet.`{target}`"
    return f"select count(*) from {target}"


def claim_partition_sql(backing: str, offset: int, staging_location: str) -> str:
    return (
        f"alter table {backing} add partition (_offset={int(offset)}) "
        f"location {sql_string_literal(staging_location)}"
    )


def delta_publish_sql(backing: str, stage_table: str, columns: Sequence[str]) -> str:
    """One append whose offset is read from the table inside the same transaction.

    The read of ``backing`` makes it a non-blind append, so Delta's conflict check
    fails the later of two concurrent publishes instead of letting both commit N."""
    select = ", ".join(f"staged.{quote_identifier(c)}" for c in columns)
    return (
        f"insert into {backing} "
        f"select next_offset._offset, {select} "
        f"from (select coalesce(max(_offset), 0) + 1 as _offset from {backing}) next_offset "
        f"cross join {stage_table} staged"
    )


def iceberg_publish_sql(backing: str, stage_table: str, columns: Sequence[str], offset: int) -> str:
    """One MERGE that stores the staged rows as ``offset``, or fails.

    The condition on the target alone (``_offset = N``) is pushed to its scan, so the
    MERGE reads only files that may hold N, and Iceberg's serializable validation checks
    that no commit since that scan added rows that may hold N. A row already at N (read
    by the scan) reaches the matched clause, which raises ``OFFSET_TAKEN``: the claim is
    lost either way, never shared."""
    select = ", ".join(f"staged.{quote_identifier(c)}" for c in columns)
    names = ", ".join(quote_identifier(c) for c in ("_offset", *columns))
    values = ", ".join(f"source.{quote_identifier(c)}" for c in ("_offset", *columns))
    taken = sql_string_literal(f"{OFFSET_TAKEN}: {int(offset)}")
    return (
        f"merge into {backing} target "
        f"using (select cast({int(offset)} as bigint) as _offset, {select} "
        f"from {stage_table} staged) source "
        f"on target._offset = {int(offset)} and target._offset = source._offset "
        f"and target._row_idx = source._row_idx "
        f"when matched then update set target._offset = cast(raise_error({taken}) as bigint) "
        f"when not matched then insert ({names}) values ({values})"
    )


def delta_retention_sql(backing: str, offsets: Sequence[int]) -> Optional[str]:
    if not offsets:
        return None
    return f"delete from {backing} where _offset <= {int(max(offsets))}"


def parquet_retention_sql(backing: str, offsets: Sequence[int]) -> Optional[str]:
    if not offsets:
        return None
    specs = ", ".join(f"partition (_offset={int(o)})" for o in sorted(offsets))
    return f"alter table {backing} drop if exists {specs}"


def retention_sql(backing: str, offsets: Sequence[int], file_format: str) -> Optional[str]:
    if file_format in TABLE_FORMATS:
        return delta_retention_sql(backing, offsets)
    return parquet_retention_sql(backing, offsets)


def claim_offset(
    run_sql: RunSql,
    backing: str,
    staging_location: str,
    file_format: str,
    columns: Sequence[str] = (),
    max_attempts: int = MAX_CLAIM_ATTEMPTS,
) -> int:
    """Commit one staged publish of at least one row; return the offset it got.

    ``staging_location`` is the staged directory (parquet) or stage table (delta,
    iceberg);
    ``run_sql`` executes one statement and returns its rows, raising on failure. A batch
    staged more than 12 h ago is refused (``staging.check_claimable``): cleanup
    may remove it, so it must never be committed."""
    last_error = ""
    for attempt in range(max_attempts):
        check_claimable(staging_location, int(time.time()), f"topic table {backing}")
        if file_format == "iceberg":
            offset = high_water_mark(run_sql, backing, file_format) + 1
            try:
                run_sql(iceberg_publish_sql(backing, staging_location, columns, offset))
                return offset
            except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
                if not is_conflict(str(exc), file_format):
                    raise
                last_error = str(exc)
                logger.info(f"topic table {backing}: {CLAIM_LOST} (attempt {attempt + 1})")
        elif file_format == "delta":
            try:
                run_sql(delta_publish_sql(backing, staging_location, columns))
            except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
                if not is_conflict(str(exc), file_format):
                    raise
                last_error = str(exc)
                logger.info(f"topic table {backing}: {CLAIM_LOST} (attempt {attempt + 1})")
            else:
                rows = run_sql(f"select max(_offset) from {backing}")
                return int(rows[0][0])
        else:
            offset = next_offset(offsets_from_partitions(run_sql(show_partitions_sql(backing))))
            try:
                run_sql(claim_partition_sql(backing, offset, staging_location))
                return offset
            except Exception as exc:  # noqa: BLE001
                if not is_conflict(str(exc), file_format):
                    raise
                last_error = str(exc)
                logger.info(f"topic table {backing}: {CLAIM_LOST} (attempt {attempt + 1})")
        time.sleep(min(0.05 * (attempt + 1), 0.5))
    raise TopicPublishError(
        f"topic table {backing}",
        f"could not claim an offset after {max_attempts} attempts; concurrent publishers "
        f"kept winning (last error: {last_error.splitlines()[0] if last_error else '?'})",
        "retry the run; nothing was published",
    )


# --- retention -----------------------------------------------------------------


@dataclass(frozen=True)
class RetentionPlan:
    drop: tuple[int, ...]
    held_by_consumers: tuple[int, ...]


def retention_plan(
    offsets: Iterable[Sequence[Any]],
    retention_offsets: Optional[int],
    retention_ms: Optional[int],
    consumer_offsets: Iterable[Optional[int]],
    now_us: int,
    incoming: int = 0,
) -> RetentionPlan:
    """Offsets that retention may drop.

    ``offsets`` are ``(offset, produced_at_us)`` pairs of what is stored; ``incoming``
    counts publishes about to be committed (they count towards ``retention_offsets``).
    An offset is expired when it is not among the newest ``retention_offsets`` or older
    than ``retention_ms``. It is dropped only if every registered consumer has consumed
    it (consumer offsets are the last consumed offset of each consumer), and the newest
    stored offset is never dropped: it is the topic's high-water mark.
    """
    stored = sorted((int(o), int(p) if p is not None else now_us) for o, p in offsets)
    if not stored or (retention_offsets is None and retention_ms is None):
        return RetentionPlan((), ())
    expired: set[int] = set()
    if retention_offsets is not None:
        keep_from = max(0, len(stored) + incoming - int(retention_offsets))
        expired.update(o for o, _ in stored[:keep_from])
    if retention_ms is not None:
        cutoff = now_us - int(retention_ms) * 1000
        expired.update(o for o, produced in stored if produced < cutoff)
    expired.discard(stored[-1][0])
    consumed = [int(c) for c in consumer_offsets if c is not None]
    floor = min(consumed) if consumed else None
    drop = sorted(o for o in expired if floor is None or o <= floor)
    held = sorted(o for o in expired if floor is not None and o > floor)
    return RetentionPlan(tuple(drop), tuple(held))


def apply_retention(
    run_sql: RunSql,
    backing: str,
    file_format: str,
    retention_offsets: Optional[int],
    retention_ms: Optional[int],
    consumer_offsets: Callable[[], Iterable[Optional[int]]],
) -> RetentionPlan:
    """Drop the expired offsets every registered consumer has consumed (``retention_plan``,
    counting the publish about to be committed); returns the plan it carried out. No
    statement runs for a topic without retention: ``consumer_offsets`` (a read of the
    consumers' positions) is called only when there is one."""
    if retention_offsets is None and retention_ms is None:
        return RetentionPlan((), ())
    stored = run_sql(f"select _offset, max(_produced_at) from {backing} group by _offset")
    plan = retention_plan(
        stored, retention_offsets, retention_ms, consumer_offsets(), now_micros(), incoming=1
    )
    statement = retention_sql(backing, plan.drop, file_format)
    if statement:
        run_sql(statement)
    return plan


# --- what a consumer reads ----------------------------------------------------


def events_select_sql(
    backing: str,
    columns: Sequence[str],
    after: int,
    upto: Optional[int],
    tenant: Optional[str],
    where: Optional[str],
    include_to: bool = True,
) -> str:
    """The consumer's view of a topic: engine columns renamed, range bound, over the
    tenant-scoped backing table (the scope is applied first, so ``where`` -- already
    parsed as one expression -- only ever filters rows the run may see)."""
    select = [f"{quote_identifier(src)} as {dst}" for src, dst in EVENT_COLUMNS.items()]
    select[3:3] = [quote_identifier(c) for c in columns]
    filters = [f"_offset > {int(after)}"]
    if upto is not None:
        filters.append(f"_offset <= {int(upto)}" if include_to else f"_offset < {int(upto)}")
    if where:
        filters.append(f"({where})")
    source = scoped_relation_sql(backing, tenant)
    return f"select {', '.join(select)} from {source} where {' and '.join(filters)}"
