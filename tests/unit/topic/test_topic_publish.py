"""Topic commit, retention and consumer decisions without Spark; delta-only SQL is
rendered here because Delta Lake cannot be loaded on every machine."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.topic import publish, topic_service
from dbt.adapters.jammi.topic.consumers import ConsumedRange, ConsumerBounds
from dbt.adapters.jammi.topic.publish import (
    TopicPublishError,
    apply_retention,
    claim_offset,
    events_select_sql,
    retention_plan,
)
from dbt.adapters.jammi.topic.staging import stale_stage_tables
from dbt.adapters.jammi.topic.topic_formats import (
    delta_publish_sql,
    iceberg_publish_sql,
    next_offset,
    offsets_from_partitions,
    topic_format,
)
from tests.unit.recorded_engine import RecordedEngine
from tests.unit.topic.services import topic_services

NOW = 1_800_000_000_000_000
HOUR_US = 3_600_000_000


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(publish.time, "sleep", lambda _s: None)


class FakeMetastore:
    """SHOW PARTITIONS / ADD PARTITION with a rival that claims offsets first."""

    def __init__(self, offsets, rival_claims=0):
        self.offsets = set(offsets)
        self.rival_claims = rival_claims
        self.statements = []

    def __call__(self, sql):
        self.statements.append(sql)
        if sql.startswith("show partitions"):
            return [(f"_offset={o}",) for o in sorted(self.offsets)]
        if sql.startswith("alter table"):
            offset = int(sql.split("_offset=")[1].split(")")[0])
            if self.rival_claims:  # a concurrent publisher commits this offset first
                self.rival_claims -= 1
                self.offsets.add(offset)
            if offset in self.offsets:
                raise RuntimeError(f"[PARTITIONS_ALREADY_EXIST] partition _offset = {offset}")
            self.offsets.add(offset)
            return []
        raise AssertionError(sql)


def test_offsets_from_show_partitions():
    assert offsets_from_partitions([("_offset=10",), ("_offset=2",), ("junk",)]) == [2, 10]
    assert next_offset([]) == 1
    assert next_offset([3, None, 7]) == 8


def test_parquet_claim_takes_next_offset_with_staged_location():
    meta = FakeMetastore({1, 2})
    assert claim_offset(meta, "s.__topic_x", "file:/w/_staging/p1", "parquet") == 3
    assert meta.statements[-1] == (
        "alter table s.__topic_x add partition (_offset=3) location 'file:/w/_staging/p1'"
    )


def test_parquet_claim_retries_after_losing_the_race():
    meta = FakeMetastore({1}, rival_claims=2)
    assert claim_offset(meta, "s.t", "/stage", "parquet") == 4
    claims = [s for s in meta.statements if s.startswith("alter")]
    assert [c.split("_offset=")[1][0] for c in claims] == ["2", "3", "4"]


def test_parquet_claim_gives_up_with_a_clear_error():
    meta = FakeMetastore(set(), rival_claims=100)
    with pytest.raises(TopicPublishError, match="nothing was published"):
        claim_offset(meta, "s.t", "/stage", "parquet", max_attempts=3)


def test_claim_does_not_swallow_other_errors():
    def broken(sql):
        raise RuntimeError("Permission denied")

    with pytest.raises(RuntimeError, match="Permission denied"):
        claim_offset(broken, "s.t", "/stage", "parquet")


def test_delta_publish_reads_offset_inside_the_same_statement():
    sql = delta_publish_sql("s.__topic_x", "s.__topic_x__stage_1", ["_row_idx", "id"])
    assert sql == (
        "insert into s.__topic_x select next_offset._offset, staged.`_row_idx`, staged.`id` "
        "from (select coalesce(max(_offset), 0) + 1 as _offset from s.__topic_x) next_offset "
        "cross join s.__topic_x__stage_1 staged"
    )


def test_delta_claim_retries_on_concurrent_append():
    calls = []

    def run(sql):
        calls.append(sql)
        if sql.startswith("insert") and len(calls) == 1:
            raise RuntimeError(
                "io.delta.exceptions.ConcurrentAppendException: Files were added to the "
                "root of the table by a concurrent update."
            )
        if sql.startswith("select max"):
            return [(5,)]
        return []

    assert claim_offset(run, "s.t", "s.t__stage_1", "delta", ["_row_idx"]) == 5
    assert [c.split()[0] for c in calls] == ["insert", "insert", "select"]


def test_iceberg_publish_stores_the_staged_rows_as_one_offset_or_fails():
    """The offset is a literal the MERGE's target condition pushes to its scan; a row
    already stored at it reaches the matched clause, which raises."""
    sql = iceberg_publish_sql("s.__topic_x", "s.__topic_x__stage_1", ["_row_idx", "id"], 7)
    assert sql == (
        "merge into s.__topic_x target using (select cast(7 as bigint) as _offset, "
        "staged.`_row_idx`, staged.`id` from s.__topic_x__stage_1 staged) source "
        "on target._offset = 7 and target._offset = source._offset "
        "and target._row_idx = source._row_idx "
        "when matched then update set target._offset = "
        "cast(raise_error('jammi: topic offset already claimed: 7') as bigint) "
        "when not matched then insert (`_offset`, `_row_idx`, `id`) "
        "values (source.`_offset`, source.`_row_idx`, source.`id`)"
    )


class FakeIcebergTopic:
    """max(_offset) reads and publish MERGEs, with rivals committing first: either an
    offset found stored by the MERGE's scan (its matched clause raises) or a commit
    after the scan (Iceberg's validation refuses the MERGE)."""

    def __init__(self, newest, failures):
        self.newest = newest
        self.failures = list(failures)
        self.statements = []

    def __call__(self, sql):
        self.statements.append(sql.split()[0])
        if sql.startswith("select coalesce(max(_offset), 0)"):
            return [(self.newest,)]
        if sql.startswith("merge into"):
            offset = int(sql.split("cast(")[1].split(" as bigint)")[0])
            if self.failures:
                self.newest = offset  # the rival stored this offset
                raise RuntimeError(self.failures.pop(0).format(offset=offset))
            self.newest = offset
            return []
        raise AssertionError(sql)


def test_iceberg_claim_retries_after_either_way_of_losing():
    run = FakeIcebergTopic(
        4,
        [
            "org.apache.spark.SparkRuntimeException: jammi: topic offset already claimed: {offset}",
            "org.apache.iceberg.exceptions.ValidationException: Found conflicting files "
            'that can contain records matching ref(name="_offset") == {offset}',
        ],
    )
    assert claim_offset(run, "s.t", "s.t__stage_1", "iceberg", ["_row_idx"]) == 7
    assert run.statements == ["select", "merge", "select", "merge", "select", "merge"]


def test_iceberg_claim_does_not_swallow_other_errors():
    run = FakeIcebergTopic(0, ["[MERGE_CARDINALITY_VIOLATION] the ON condition matched"])
    with pytest.raises(RuntimeError, match="MERGE_CARDINALITY_VIOLATION"):
        claim_offset(run, "s.t", "s.t__stage_1", "iceberg", ["_row_idx"])


def test_retention_by_offsets_counts_the_incoming_publish():
    stored = [(o, NOW) for o in (1, 2, 3)]
    assert retention_plan(stored, 2, None, [], NOW, incoming=1).drop == (1, 2)
    assert retention_plan(stored, 2, None, [], NOW, incoming=0).drop == (1,)
    assert retention_plan(stored, None, None, [], NOW).drop == ()


def test_retention_never_drops_unconsumed_offsets():
    stored = [(o, NOW) for o in (1, 2, 3, 4)]
    plan = retention_plan(stored, 1, None, [3, 1], NOW, incoming=1)
    assert plan.drop == (1,)
    assert plan.held_by_consumers == (2, 3, 4)[:2]


def test_retention_by_age_keeps_the_high_water_mark():
    stored = [(1, NOW - 3 * HOUR_US), (2, NOW - 2 * HOUR_US), (3, NOW - 2 * HOUR_US)]
    plan = retention_plan(stored, None, 90 * 60 * 1000, [], NOW)
    assert plan.drop == (1, 2)  # 3 is expired too, but it is the newest offset


def test_retention_sql_per_format():
    assert topic_format("parquet").retention_sql("s.t", [2, 1]) == (
        "alter table s.t drop if exists partition (_offset=1), partition (_offset=2)"
    )
    assert topic_format("delta").retention_sql("s.t", [2, 1]) == (
        "delete from s.t where _offset <= 2"
    )
    assert topic_format("delta").retention_sql("s.t", []) is None
    assert topic_format("parquet").retention_sql("s.t", []) is None
    assert topic_format("iceberg").retention_sql("s.t", [3, 1]) == (
        "delete from s.t where _offset <= 3"
    )


def test_retention_drops_what_the_plan_allows_counting_the_publish_to_come():
    statements = []

    def run(sql):
        statements.append(sql)
        return [(1, NOW), (2, NOW), (3, NOW)] if sql.startswith("select _offset") else []

    def unread():
        raise AssertionError("the consumers' positions were read without retention")

    plan = apply_retention(run, "s.t", "parquet", 2, None, lambda: [2])
    assert plan.drop == (1, 2)
    assert statements == [
        "select _offset, max(_produced_at) from s.t group by _offset",
        "alter table s.t drop if exists partition (_offset=1), partition (_offset=2)",
    ]
    statements.clear()
    assert apply_retention(run, "s.t", "parquet", 2, None, lambda: [0]).held_by_consumers == (1, 2)
    assert len(statements) == 1  # a consumer holds both: nothing dropped
    statements.clear()
    assert apply_retention(run, "s.t", "delta", None, None, unread).drop == ()
    assert statements == []  # no retention configured: not even a read


def test_events_select_renames_engine_columns_and_binds_range():
    sql = events_select_sql("s.__topic_x", ["order_id", "op"], 2, 5, "ac'me", "op = 'd'")
    assert sql == (
        "select `_offset` as event_offset, `_row_idx` as event_row_idx, "
        "`_produced_at` as event_produced_at, `order_id`, `op`, `tenant_id` as event_tenant_id "
        "from (select * from s.__topic_x where (tenant_id = 'ac\\'me' or tenant_id is null)) "
        "where _offset > 2 and _offset <= 5 and (op = 'd')"
    )


def test_consumer_bounds_are_taken_once():
    bounds = ConsumerBounds()
    bounds.remember("model.p.c", ConsumedRange("s", "t1", 0, 3))
    bounds.remember("model.p.c", ConsumedRange("s", "t1", 0, 4))  # recompiled: latest wins
    assert [r.upto for r in bounds.take("model.p.c")] == [4]
    assert bounds.take("model.p.c") == []


def test_stale_stage_tables_spare_publishes_in_flight():
    prefix = "__topic_x__stage_"
    names = [f"{prefix}1000_abc", f"{prefix}99000_def", "__topic_x", f"{prefix}bad"]
    assert stale_stage_tables(names, prefix, now_s=100_000, max_age_s=3600) == [f"{prefix}1000_abc"]


def _Publisher(engine, local_fs=False):  # noqa: N802 - the publish's service, recorded
    """The publish's retention and commit phases over a recorded engine."""
    return topic_services(engine, local_fs)[0]


BACKING = "s.__topic_x"
STAGINGS = {
    "iceberg": {"kind": "table", "target": f"{BACKING}__stage_1_ab", "using": "iceberg"},
    "delta": {"kind": "table", "target": f"{BACKING}__stage_1_ab", "using": "parquet"},
    "parquet": {"kind": "directory", "target": "file:/w/__topic_x/_staging/1_ab"},
}


def topic(file_format: str) -> dict:
    return {"name": "t.x", "topic_id": "x", "file_format": file_format, "columns": [["id", "int"]]}


def test_the_staged_batch_is_counted_where_it_was_staged():
    engine = RecordedEngine(strict=True, answers={"select count(*)": [(0,)]})
    publisher = _Publisher(engine)
    assert publisher.staged_rows(STAGINGS["parquet"]) == 0
    assert publisher.staged_rows(STAGINGS["iceberg"]) == 0
    assert engine.statements == [
        "select count(*) from parquet.`file:/w/__topic_x/_staging/1_ab`",
        f"select count(*) from {BACKING}__stage_1_ab",
    ]


@pytest.mark.parametrize("file_format", ["iceberg", "delta", "parquet"])
def test_an_empty_batch_claims_no_offset(file_format, monkeypatch):
    """Nothing of the topic is read or written: no offset is claimed (on Iceberg the
    claim returned the next offset, which the next publish claimed again; on Delta the
    newest stored one), retention leaves it alone; only the stage goes."""
    removed = []
    monkeypatch.setattr(topic_service.storage, "remove", removed.append)
    engine = RecordedEngine(strict=True, answers={"drop table if exists": []})
    publisher = _Publisher(engine, local_fs=True)
    retention = {"retention_offsets": 1, "retention_ms": 1}
    assert publisher.apply_retention(BACKING, topic(file_format), retention, 0) == ""
    staging = STAGINGS[file_format]
    published = publisher.publish(BACKING, topic(file_format), staging, 0)
    assert published["offset"] is None
    assert published["summary"] == "nothing published: the batch is empty, no offset claimed"
    assert published["response"].to_dict(omit_none=True) == {
        "_message": "PUBLISH 0: an empty batch claims no offset",
        "code": "TOPIC",
        "rows_affected": 0,
    }
    if staging["kind"] == "table":
        purge = " purge" if file_format == "iceberg" else ""
        assert engine.statements == [f"drop table if exists {staging['target']}{purge}"]
        assert removed == []
    else:
        assert engine.statements == [] and removed == [staging["target"]]


def test_a_batch_with_rows_reports_what_it_staged_under_its_offset():
    engine = RecordedEngine(
        strict=True,
        answers={"select coalesce(max(_offset), 0)": [(4,)], "merge into": [], "drop table": []},
    )
    published = _Publisher(engine).publish(BACKING, topic("iceberg"), STAGINGS["iceberg"], 3)
    assert published["offset"] == 5
    assert published["response"].to_dict(omit_none=True) == {
        "_message": "PUBLISH 3 AT OFFSET 5",
        "code": "TOPIC",
        "rows_affected": 3,
        "offset": 5,
    }
    # the claim is the last statement that touches the topic: nothing is read after it
    assert [s.split()[0] for s in engine.statements] == ["select", "merge", "drop"]
