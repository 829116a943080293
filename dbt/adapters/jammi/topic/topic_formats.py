"""The formats a topic's backing table is stored in, one class each (docs/topic.md,
"Offsets"). How a publish claims its offset, how the newest offset is read, how
retention drops offsets and how the backing table is laid out differ by format; each
difference is a method or an attribute here, and ``topic_format(name)`` is the one
place that chooses a class by name.

- parquet (``PartitionedTopic``): each offset is a metastore partition ``_offset=N``
  whose location is the staged directory. The metastore refuses a partition that
  already exists, so attaching it is the lock.
- Delta (``DeltaTopic``): offsets live in the rows. One ``INSERT`` computes its offset
  from the table it reads, inside Delta's transaction; the table is Serializable, so of
  two concurrent publishes the later fails.
- Iceberg (``IcebergTopic``): offsets live in the rows. The next offset is read first,
  then one ``MERGE`` stores the staged rows under it; a row already at that offset fails
  it (its matched clause raises ``OFFSET_TAKEN``), and Iceberg's serializable validation
  fails it when another commit added rows since it read the table.

Any other format a model resolves to stores its topic as parquet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.engine.commit_conflicts import is_commit_conflict

RunSql = Callable[[str], Sequence[Sequence[Any]]]

# What an iceberg publish's MERGE raises when its offset is already stored.
OFFSET_TAKEN = "jammi: topic offset already claimed"

_PARTITION = re.compile(r"_offset=(\d+)")
_PARTITION_EXISTS = ("PARTITIONS_ALREADY_EXIST", "AlreadyExistsException", "already exist")


class PartitionedTopic:
    """parquet: offsets are metastore partitions, claimed by attaching one."""

    name = "parquet"
    # the offset is a column of the rows (else only a partition's spec)
    offsets_in_rows = False
    # what a publish's stage table is stored as (a parquet topic stages a directory)
    stage_using = "parquet"
    # added to ``drop table``: Iceberg's stage tables keep their files without purge
    drop_suffix = ""
    # a changelog stages its events under the backing table's location (Delta's
    # changelog appends the table's change data feed instead: rules/changelog_feeds.py)
    stages_under_location = True

    def high_water_mark(self, run_sql: RunSql, backing: str) -> int:
        """The newest committed offset (0: none), listed by the metastore: no data read."""
        offsets = offsets_from_partitions(run_sql(show_partitions_sql(backing)))
        return offsets[-1] if offsets else 0

    def claim(
        self, run_sql: RunSql, backing: str, staged: str, columns: Sequence[str]
    ) -> Optional[int]:
        """One try at committing the staged batch under the next offset: the offset it
        got, or None when the commit chose it (``claimed_offset`` reads it). Raises the
        engine's error; ``lost_claim`` tells whether a concurrent publish won."""
        offset = next_offset(offsets_from_partitions(run_sql(show_partitions_sql(backing))))
        run_sql(claim_partition_sql(backing, offset, staged))
        return offset

    def claimed_offset(self, run_sql: RunSql, backing: str) -> int:
        """The offset a claim that returned None committed: the newest."""
        return int(run_sql(f"select max(_offset) from {backing}")[0][0])

    def lost_claim(self, message: str) -> bool:
        return any(marker in message for marker in _PARTITION_EXISTS)

    def retention_sql(self, backing: str, offsets: Sequence[int]) -> Optional[str]:
        """The statement that drops ``offsets`` (None: nothing to drop)."""
        if not offsets:
            return None
        specs = ", ".join(f"partition (_offset={int(o)})" for o in sorted(offsets))
        return f"alter table {backing} drop if exists {specs}"

    def backing_layout(self) -> tuple[str, str, list[str]]:
        """How the backing table is created: the engine columns' nullability, its
        partitioning clause, and its format's properties."""
        return "", "\npartitioned by (_offset)", []


class ColumnTopic(PartitionedTopic):
    """The formats whose offsets are a column of the rows (Delta, Iceberg)."""

    offsets_in_rows = True

    def high_water_mark(self, run_sql: RunSql, backing: str) -> int:
        return int(run_sql(f"select coalesce(max(_offset), 0) from {backing}")[0][0])

    def lost_claim(self, message: str) -> bool:
        return is_commit_conflict(message)

    def retention_sql(self, backing: str, offsets: Sequence[int]) -> Optional[str]:
        if not offsets:
            return None
        return f"delete from {backing} where _offset <= {int(max(offsets))}"

    def backing_layout(self) -> tuple[str, str, list[str]]:
        return " not null", "", self.properties()

    def properties(self) -> list[str]:
        return []


class DeltaTopic(ColumnTopic):
    name = "delta"
    stages_under_location = False

    def claim(
        self, run_sql: RunSql, backing: str, staged: str, columns: Sequence[str]
    ) -> Optional[int]:
        run_sql(delta_publish_sql(backing, staged, columns))
        return None

    def properties(self) -> list[str]:
        return ["'delta.isolationLevel' = 'Serializable'", "'delta.appendOnly' = 'false'"]


class IcebergTopic(ColumnTopic):
    name = "iceberg"
    stage_using = "iceberg"
    drop_suffix = " purge"

    def claim(
        self, run_sql: RunSql, backing: str, staged: str, columns: Sequence[str]
    ) -> Optional[int]:
        offset = self.high_water_mark(run_sql, backing) + 1
        run_sql(iceberg_publish_sql(backing, staged, columns, offset))
        return offset

    def lost_claim(self, message: str) -> bool:
        return is_commit_conflict(message) or OFFSET_TAKEN in message

    def properties(self) -> list[str]:
        return ["'write.merge.isolation-level' = 'serializable'"]


PARQUET_TOPIC = PartitionedTopic()
_BY_NAME: dict[str, PartitionedTopic] = {f.name: f for f in (DeltaTopic(), IcebergTopic())}


def topic_format(file_format: Any) -> PartitionedTopic:
    """The class a topic is stored with, by the format its model resolves to (or the
    registry records): Delta and Iceberg by name, any other format as parquet."""
    return _BY_NAME.get(str(file_format).lower(), PARQUET_TOPIC)


# --- offsets and the SQL of the claims ---------------------------------------------


def offsets_from_partitions(rows: Iterable[Sequence[Any]]) -> list[int]:
    """Offsets from ``SHOW PARTITIONS`` rows (``_offset=7``), ascending."""
    offsets = []
    for row in rows:
        match = _PARTITION.search(str(row[0]))
        if match:
            offsets.append(int(match.group(1)))
    return sorted(offsets)


def next_offset(offsets: Iterable[Optional[int]]) -> int:
    present = [int(o) for o in offsets if o is not None]
    return (max(present) if present else 0) + 1


def show_partitions_sql(backing: str) -> str:
    return f"show partitions {backing}"


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
