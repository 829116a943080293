"""Topic publishing, consuming and retention decisions (docs/topic.md).

The Jinja materialization orchestrates; everything here is a decision or a retry loop
that needs to catch an engine error, which Jinja cannot do:

- ``claim_offset``: the publish commit, retried while concurrent publishes win. How
  one try claims an offset is its format's (topic/topic_formats.py): a parquet topic
  attaches the staged directory as partition ``_offset=N``, a Delta topic appends with
  the offset read inside its transaction, an Iceberg topic stores the rows as N by a
  validated MERGE. The loser of a race reads again and claims the next offset with the
  same staged batch. A batch without rows claims nothing (``staged_rows_sql`` counts it
  first): an offset is claimed only by rows stored under it. Claimed empty, an offset
  would read as a publish nowhere: the Iceberg and Delta claims compute the next offset
  from the newest stored row, so the next publish would report it again.
- ``retention_plan``: which offsets may be dropped.
- ``apply_retention``: reads what is stored and what the consumers consumed, drops
  the offsets the plan allows.
- ``events_select_sql``: the events a consumer reads (topic/consumers.py records them).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import quote_identifier
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql
from dbt.adapters.jammi.topic.staging import check_claimable
from dbt.adapters.jammi.topic.topic_formats import topic_format

ENGINE_COLUMNS = ("_offset", "_row_idx", "_produced_at")
EVENT_COLUMNS = {
    "_offset": "event_offset",
    "_row_idx": "event_row_idx",
    "_produced_at": "event_produced_at",
    "tenant_id": "event_tenant_id",
}
MAX_CLAIM_ATTEMPTS = 20
CLAIM_LOST = "offset claim lost to a concurrent publish; retrying"

logger = AdapterLogger("jammi")

RunSql = Callable[[str], Sequence[Sequence[Any]]]


class TopicPublishError(JammiValidationError):
    """The publish could not claim an offset."""


def now_micros() -> int:
    return time.time_ns() // 1000


def staged_rows_sql(kind: str, target: str) -> str:
    """The rows of a staged batch (``kind``: a parquet ``directory`` or a stage
    ``table``). An empty batch is a parquet file of no rows, so this reads as 0."""
    if kind == "directory":
        return f"select count(*) from parquet.`{target}`"
    return f"select count(*) from {target}"


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
    stored_as = topic_format(file_format)
    last_error = ""
    for attempt in range(max_attempts):
        check_claimable(staging_location, int(time.time()), f"topic table {backing}")
        try:
            offset = stored_as.claim(run_sql, backing, staging_location, columns)
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            if not stored_as.lost_claim(str(exc)):
                raise
            last_error = str(exc)
            logger.info(f"topic table {backing}: {CLAIM_LOST} (attempt {attempt + 1})")
        else:
            return offset if offset is not None else stored_as.claimed_offset(run_sql, backing)
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
    statement = topic_format(file_format).retention_sql(backing, plan.drop)
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
