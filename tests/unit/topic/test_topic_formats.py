"""Each topic format's own part of a publish: one try at a claim, what counts as a lost
claim, the high-water mark, and the backing table's layout (topic/topic_formats.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.topic.registry_sql import create_backing_sql
from dbt.adapters.jammi.topic.topic_formats import (
    PARQUET_TOPIC,
    DeltaTopic,
    IcebergTopic,
    PartitionedTopic,
    topic_format,
)
from tests.unit.recorded_engine import RecordedEngine

TOPIC = {"name": "cdc.orders", "topic_id": "t1", "columns": [["order_id", "int"]]}


@pytest.mark.parametrize(
    "name, cls",
    [
        ("delta", DeltaTopic),
        ("DELTA", DeltaTopic),
        ("iceberg", IcebergTopic),
        ("parquet", PartitionedTopic),
        ("orc", PartitionedTopic),
        ("hudi", PartitionedTopic),
    ],
)
def test_the_class_is_chosen_by_name_and_any_other_format_stores_parquet(name, cls):
    chosen = topic_format(name)
    assert type(chosen) is cls
    assert chosen.name == {"delta": "delta", "iceberg": "iceberg"}.get(name.lower(), "parquet")


def test_a_parquet_claim_attaches_the_next_partition_at_the_staged_directory():
    engine = RecordedEngine({"show partitions": [("_offset=2",), ("_offset=9",)]})
    offset = PARQUET_TOPIC.claim(engine, "s.t", "file:/w/_staging/p1", ["_row_idx"])
    assert offset == 10
    assert engine.statements[-1] == (
        "alter table s.t add partition (_offset=10) location 'file:/w/_staging/p1'"
    )


def test_a_delta_claim_leaves_the_offset_to_its_commit_and_reads_it_after():
    engine = RecordedEngine({"select max(_offset)": [(4,)]})
    assert DeltaTopic().claim(engine, "s.t", "s.t__stage_1", ["_row_idx"]) is None
    assert engine.statements[0].startswith("insert into s.t select next_offset._offset")
    assert DeltaTopic().claimed_offset(engine, "s.t") == 4


def test_an_iceberg_claim_reads_the_newest_offset_then_merges_under_the_next():
    engine = RecordedEngine({"select coalesce(max(_offset), 0)": [(6,)]})
    assert IcebergTopic().claim(engine, "s.t", "s.t__stage_1", ["_row_idx"]) == 7
    assert engine.statements[1].startswith("merge into s.t target using (select cast(7 as")


@pytest.mark.parametrize(
    "message, parquet, delta, iceberg",
    [
        ("[PARTITIONS_ALREADY_EXIST] _offset = 3", True, False, False),
        ("io.delta.exceptions.ConcurrentAppendException: Files were added", False, True, True),
        ("jammi: topic offset already claimed: 7", False, False, True),
        ("[TABLE_OR_VIEW_NOT_FOUND] s.t", False, False, False),
    ],
)
def test_only_a_concurrent_publish_counts_as_a_lost_claim(message, parquet, delta, iceberg):
    assert PARQUET_TOPIC.lost_claim(message) is parquet
    assert DeltaTopic().lost_claim(message) is delta
    assert IcebergTopic().lost_claim(message) is iceberg


def test_the_high_water_mark_is_listed_by_the_metastore_or_read_from_the_rows():
    listed = RecordedEngine({"show partitions": [("_offset=3",), ("_offset=12",)]})
    assert PARQUET_TOPIC.high_water_mark(listed, "s.t") == 12
    assert PARQUET_TOPIC.high_water_mark(RecordedEngine({"show partitions": []}), "s.t") == 0
    read = RecordedEngine({"select coalesce(max(_offset), 0)": [(5,)]})
    assert DeltaTopic().high_water_mark(read, "s.t") == 5


def test_each_backing_table_is_laid_out_for_its_claim():
    parquet = create_backing_sql("s.t", {**TOPIC, "file_format": "parquet"})
    delta = create_backing_sql("s.t", {**TOPIC, "file_format": "delta"})
    iceberg = create_backing_sql("s.t", {**TOPIC, "file_format": "iceberg"})
    assert "partitioned by (_offset)" in parquet and "not null" not in parquet
    assert "_offset bigint not null" in delta and "partitioned by" not in delta
    assert "'delta.isolationLevel' = 'Serializable'" in delta
    assert "'write.merge.isolation-level' = 'serializable'" in iceberg
    assert ") using iceberg" in iceberg


def test_stage_tables_are_stored_and_dropped_as_their_format_needs():
    assert (DeltaTopic().stage_using, DeltaTopic().drop_suffix) == ("parquet", "")
    assert (IcebergTopic().stage_using, IcebergTopic().drop_suffix) == ("iceberg", " purge")
    assert PARQUET_TOPIC.offsets_in_rows is False and DeltaTopic().offsets_in_rows is True
