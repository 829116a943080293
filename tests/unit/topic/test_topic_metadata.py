"""What a publish or consumer keeps about the metastore for one invocation, and how a
publish chooses to number its rows; without Spark."""

from __future__ import annotations

import pytest
from dbt_common import invocation

from dbt.adapters.jammi.topic.metadata import (
    TopicMetadataCache,
    fingerprint_from_information,
    location_from_information,
    read_consumed_offset,
    read_registry_row,
)
from dbt.adapters.jammi.topic.row_index import is_small_batch, root_statistics
from dbt.adapters.jammi.topic.topic_service import TopicService
from tests.unit.topic.services import topic_services

NOT_FOUND = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`topics` cannot be found."


class Engine:
    def __init__(self, answer):
        self.answer = answer
        self.statements = []

    def __call__(self, sql):
        self.statements.append(sql)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_registry_row_is_read_without_an_existence_check():
    engine = Engine([("t1", "cdc.orders", "__topic_t1", '[["id", "bigint"]]', "parquet", "o")])
    row = read_registry_row(engine, "s.topics", "relation_name", "o")
    assert row == {
        "topic_id": "t1",
        "name": "cdc.orders",
        "backing_table": "__topic_t1",
        "columns": [["id", "bigint"]],
        "file_format": "parquet",
        "relation_name": "o",
    }
    assert engine.statements == [
        "select topic_id, name, backing_table, schema_json, file_format, relation_name "
        "from s.topics where relation_name = 'o' order by created_at limit 1"
    ]


def test_a_missing_registry_reads_as_no_row_and_other_errors_pass():
    assert read_registry_row(Engine(RuntimeError(NOT_FOUND)), "s.topics", "name", "a") is None
    assert read_registry_row(Engine([]), "s.topics", "name", "a") is None
    with pytest.raises(RuntimeError, match="PARSE_SYNTAX_ERROR"):
        read_registry_row(Engine(RuntimeError("PARSE_SYNTAX_ERROR")), "s.topics", "name", "a")


def test_consumed_offset_of_a_missing_positions_table_is_none():
    assert read_consumed_offset(Engine(RuntimeError(NOT_FOUND)), "s.c", "t", "m", None) is None
    engine = Engine([(4,)])
    assert read_consumed_offset(engine, "s.c", "t", "m", "acme") == 4
    assert engine.statements[0].endswith(
        "where topic_id = 't' and consumer = 'm' and tenant_id <=> 'acme'"
    )


LISTED_TABLE = (
    "Catalog: spark_catalog\nDatabase: s\nTable: __topic_t1\nType: MANAGED\n"
    "Provider: parquet\nLocation: file:/w/s.db/__topic_t1\nSchema: root\n"
)
LISTED_VIEW = (
    "Table: cdc_orders\nType: VIEW\nView Text: select 1\n"
    "Table Properties: [jammi.view_fingerprint=0a1b2c, transient_lastDdlTime=1]\n"
)


def test_location_and_fingerprint_from_dbt_spark_listing():
    assert location_from_information(LISTED_TABLE) == "file:/w/s.db/__topic_t1"
    assert location_from_information(LISTED_VIEW) is None
    assert location_from_information(None) is None
    assert fingerprint_from_information(LISTED_VIEW) == "0a1b2c"
    assert fingerprint_from_information(LISTED_TABLE) is None


def test_cache_is_per_invocation_and_forgets():
    cache = TopicMetadataCache()
    cache.put("file:/w/t", "location", "s.t")
    assert cache.get("location", "s.t") == "file:/w/t"
    cache.forget("location", "s.t")
    assert cache.get("location", "s.t") is None
    cache.put("file:/w/t", "location", "s.t")
    invocation.reset_invocation_id()
    assert cache.get("location", "s.t") is None


def plan(statistics):
    return [
        (
            "== Optimized Logical Plan ==\n"
            f"Project [id#0L], Statistics({statistics})\n"
            "+- Range (0, 10, step=1, splits=None), Statistics(sizeInBytes=1.0 EiB)\n\n"
            "== Physical Plan ==\n*(1) Range (0, 10, step=1, splits=2)\n",
        )
    ]


def test_root_statistics_of_explain_cost():
    assert root_statistics(plan("sizeInBytes=80.0 B, rowCount=10")) == (80.0, 10.0)
    assert root_statistics(plan("sizeInBytes=1.5 MiB")) == (1.5 * 2**20, None)
    assert root_statistics([("== Physical Plan ==\n*(1) Range",)]) is None


def test_small_batches_by_rows_then_by_bytes():
    assert is_small_batch(plan("sizeInBytes=80.0 B, rowCount=10"))
    assert not is_small_batch(plan("sizeInBytes=80.0 B, rowCount=1.0E+6"))
    assert is_small_batch(plan("sizeInBytes=3.9 MiB"))
    assert not is_small_batch(plan("sizeInBytes=8.0 EiB"))
    assert not is_small_batch([("no statistics",)])


def _Numbering(explained, reuse):  # noqa: N802 - the publish's service, answered per statement
    """The publish's choice of numbering, over answers given per statement."""
    answers = {"set spark.sql.exchange.reuse": reuse}

    def run(sql):
        return explained if sql.startswith("explain cost ") else answers[sql]

    return topic_services(run)[0]


@pytest.mark.parametrize(
    "statistics, reuse, form",
    [
        ("sizeInBytes=80.0 B, rowCount=10", [], "one_task"),
        ("sizeInBytes=8.0 EiB", [("spark.sql.exchange.reuse", "true")], "parallel"),
        ("sizeInBytes=8.0 EiB", [], "parallel"),
        ("sizeInBytes=8.0 EiB", [("spark.sql.exchange.reuse", "FALSE")], "window"),
    ],
)
def test_a_batch_is_numbered_as_its_size_and_the_session_allow(statistics, reuse, form):
    assert _Numbering(plan(statistics), reuse)._row_index_form("select 1") == form


def test_an_ordered_topic_asks_nothing_about_its_batch():
    """row_idx: ordered: no explain, no session setting read (any statement would fail
    here, as _Numbering answers none for the directory staging's cleanup either)."""

    def run(sql):
        raise AssertionError(f"an ordered publish ran {sql!r}")

    class Ordered(TopicService):
        def _remove_stale_staging(self, backing, location):
            return []

    publisher = topic_services(run)[0]
    ordered = Ordered(publisher.sql, publisher.registry, publisher.relations)
    ordered.registry.table_location = lambda backing: "file:/w/t"  # type: ignore[method-assign]
    ordered.registry.staging_location = lambda backing: "file:/w/t/_staging/p1"  # type: ignore[method-assign]
    staging = ordered.prepare_staging(
        "s.t", {"name": "t", "file_format": "parquet"}, "select 1", {"row_idx": "ordered"}
    )
    assert staging == {
        "kind": "directory",
        "target": "file:/w/t/_staging/p1",
        "using": "parquet",
        "row_index": "ordered",
    }
