"""What a consumer's post-hook records and what retention waits for, without Spark."""

from __future__ import annotations

from dbt.adapters.jammi.topic.consumers import (
    ConsumedRange,
    consumer_offsets,
    create_consumers_sql,
    record_consumed,
)


class FakeEngine:
    """Answers ``select count(*)`` with ``counted`` and records every statement."""

    def __init__(self, counted=3, missing=False):
        self.counted = counted
        self.missing = missing
        self.statements = []

    def __call__(self, sql):
        self.statements.append(sql)
        if self.missing:
            raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table s.topic_consumers is not found")
        if sql.startswith("select count(*)"):
            return [(self.counted,)]
        if sql.startswith("select max(last_offset)"):
            return [(4,), (7,)]
        return []


def test_a_consumer_records_each_topic_it_read_with_its_count():
    engine = FakeEngine(counted=5)
    created = []

    def consumers_table(schema):
        created.append(schema)
        return f"{schema}.topic_consumers"

    ranges = [
        ConsumedRange("s", "t1", 2, 6, "ac'me", "s.__topic_1", "s.orders"),
        ConsumedRange("s", "t2", 4, 4, None, "s.__topic_2", "s.refunds"),  # nothing new
    ]
    reads = record_consumed(engine, "model.p.c", ranges, consumers_table)

    assert reads == {"s.orders": [2, 6, 5]}
    assert created == ["s"]
    count, insert = engine.statements
    assert count.startswith("select count(*) from (select ")
    assert "_offset > 2" in count and "_offset <= 6" in count
    assert "tenant_id = 'ac\\'me'" in count  # read through the tenant scope
    assert insert.startswith(
        "insert into s.topic_consumers values ('model.p.c', 'ac\\'me', 't1', 6, "
    )


def test_a_consumer_that_read_nothing_records_nothing():
    engine = FakeEngine()
    ranges = [ConsumedRange("s", "t1", 3, 3)]
    assert record_consumed(engine, "model.p.c", ranges, lambda s: f"{s}.topic_consumers") == {}
    assert engine.statements == []


def test_positions_are_read_directly_and_a_missing_table_is_none():
    engine = FakeEngine()
    assert consumer_offsets(engine, "s.topic_consumers", "t'1") == [4, 7]
    assert engine.statements == [
        "select max(last_offset) from s.topic_consumers where topic_id = 't\\'1' "
        "group by consumer, tenant_id"
    ]
    assert consumer_offsets(FakeEngine(missing=True), "s.topic_consumers", "t1") is None


def test_the_positions_table_is_append_only_parquet():
    sql = create_consumers_sql("s.topic_consumers")
    assert sql.startswith("create table if not exists s.topic_consumers (consumer string, ")
    assert "last_offset bigint, committed_at bigint) using parquet" in sql
